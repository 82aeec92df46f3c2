# Sourced by the repo's shell scripts before they launch MPI jobs on this kind
# of machine (tests/mpitest.py sets the same variables for the test suite).
# Open MPI refuses to run as root without these two.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers often forbid Open MPI's CMA single-copy mechanism.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
