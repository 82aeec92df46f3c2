"""`mpiscope scale report DIR --html FILE`: the scale report dict as one offline HTML page,
assembled with mpiscope.html.page (the same parts as the profile pages).

The tables are tables.py's grids (the terminal's text, sortable by value); the
plots are plots.py's matplotlib figures, inlined as PNG data URIs.
"""

from __future__ import annotations

import base64
import io

from ...html import page
from ...html.escape import text
from . import plots, tables


def _img(draw, rep: dict, alt: str):
    buf = io.BytesIO()
    if draw(rep, buf) is None:
        return None
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return page.Markup(f'<img alt="{text(alt)}" style="max-width:100%" '
                       f'src="data:image/png;base64,{data}">')


def _table(grid):
    title, cols, rows = grid
    return page.table(cols, [[page.cell(t, s) for t, s in r] for r in rows], caption=title)


def document(rep: dict) -> str:
    st = rep["study"]
    models = [page.para(item) if isinstance(item, str) else _table(item)
              for item in tables.model_parts(rep)]
    parts = [
        page.section("Study", page.facts([
            ("Name", st["name"]), ("Kind", f"{st['kind']} scaling"), ("Directory", st["dir"]),
            ("Program", st["program"]), ("Rank counts", ", ".join(map(str, st["ranks"]))),
            ("Repetitions", st["repetitions"])]),
            *(page.note(n) for n in rep["notes"]), anchor="study"),
        page.section("Scaling", _table(tables.points_grid(rep)),
                     _img(plots.scaling_png, rep, "time, speedup and efficiency against P"),
                     anchor="scaling"),
        page.section("Time per rank by function", _table(tables.functions_grid(rep)),
                     _img(plots.functions_png, rep, "time per rank by function, stacked"),
                     anchor="functions"),
        page.section("Models and extrapolation", *models,
                     _img(plots.models_png, rep, "models and measured points"),
                     anchor="models"),
    ]
    nav = [("study", "Study"), ("scaling", "Scaling"), ("functions", "Functions"),
           ("models", "Models")]
    return page.document(f"Scaling study {st['name']}", parts, nav=nav,
                         subtitle=f"{st['kind']} scaling, mpiscope scale report")
