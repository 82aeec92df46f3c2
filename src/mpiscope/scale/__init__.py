"""Scaling studies: run a program at many rank counts (locally or through Slurm), then
tables, models and extrapolation over the profiles (docs/scaling.md).

One file per concern: ``study.py`` (the TOML study file), ``studydir.py`` (the
results directory), ``runner_local.py`` and ``runner_slurm.py``, ``collect.py``
(profiles -> rows), ``aggregate.py`` (per-P statistics), ``models.py``
(Amdahl, Karp-Flatt, Extra-P, extrapolation), ``build.py`` (the report dict),
``tables.py``, ``plots.py``, ``html_page.py``, ``export.py``, ``cli.py``.
"""
