"""`mpiscope tune`: apply the mechanical fixes diagnose finds, re-run in alternation with the
baseline, and keep only a gain a statistical test proves (docs/tune.md).

``candidates.py`` (findings -> changes), ``session.py`` (the loop), ``runner.py`` (one run
under `mpiscope run`), ``tunedir.py`` (the resumable directory), ``stats.py`` (the
intervals), ``outputs.py`` (same results?), ``render.py``, ``cli.py``.
"""
