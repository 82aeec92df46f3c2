"""Running a study's points: here one after another (``local``), or one sbatch job per
point (``slurm``); ``processes``: a point's processes and the signals that stop them."""
