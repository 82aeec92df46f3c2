"""`mpiscope run`: launch a program under the runtime (``launch``), with the launcher's
command line split into its own options and the program (``launcher_args``)."""
