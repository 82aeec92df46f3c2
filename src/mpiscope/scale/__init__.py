"""Scaling studies: run a program at many rank counts (locally or through Slurm), then
tables, models and extrapolation over the profiles (docs/scaling.md).

Grouped by role. On top: ``study.py`` (the TOML study file), ``studydir.py``
(the results directory, its lock, closing an attempt), ``cli.py``.
``runner/``: ``local.py`` (points one after another here; the one ``run_point``
a Slurm job runs too), ``slurm.py`` (one sbatch job per point, queue states),
``processes.py`` (a point's processes and the signals that stop them).
``report/``: ``collect.py`` (profiles -> rows), ``aggregate.py`` (per-P
statistics), ``models.py`` (Amdahl, Karp-Flatt, Extra-P, extrapolation),
``build.py`` (the report dict), and its views ``tables.py``, ``plots.py``,
``html_page.py``, ``export.py``.
"""
