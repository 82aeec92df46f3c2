"""`mpiscope report`: analyses of one profile (pure functions) and their rendering.

``build_report(profile, ...)`` returns a JSON-ready dict with every number;
``render(report, console)`` draws it as tables. Modules: ``imbalance`` (stats
over ranks), ``comm`` (histogram, on/off-node, pairs), ``functions``
(per-function tables), ``build`` (the dict), ``tables`` (rich rendering).
"""

from .build import SCHEMA, build_report
from .tables import render

__all__ = ["SCHEMA", "build_report", "render"]
