"""Page assembly: one self-contained HTML file from escaped parts and plotly figures.

This is the API other parts reuse (``mpiscope scale report --html`` too)::

    from mpiscope.html import page
    parts = [page.section("Run", page.facts([("Program", prof_path), ("Ranks", 16)])),
             page.section("Functions", page.table(["Function", "time (s)"],
                                                  [["MPI_Send", page.cell("1.5", 1.5)]])),
             page.section("Per rank", page.figure({"data": [...], "layout": {...}}))]
    page.write(path, page.document("My title", parts), force=False)

- Every plain ``str`` handed to these functions is escaped; only :class:`Markup`
  (what these functions return) passes through, so profile strings cannot
  become markup by accident.
- :func:`figure` takes a plotly figure as a dict (or ``go.Figure``); the page
  inlines plotly's bundle once, so the file opens with no network.
- :func:`table` is sortable by clicking a column header (a few lines of inline
  script; numbers sort by the ``sort`` value of :func:`cell`).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import UserError
from .escape import script_json, text


class Markup(str):
    """A string of HTML that these functions built (already escaped)."""


def h(value) -> Markup:
    """``value`` as HTML: Markup unchanged, anything else escaped as text."""
    return value if isinstance(value, Markup) else Markup(text(value))


def join(parts: Iterable) -> Markup:
    return Markup("".join(h(p) for p in parts if p is not None))


def el(tag: str, *children, **attrs) -> Markup:
    """``<tag attrs>children</tag>``; attribute names use ``_`` for ``-`` and ``cls`` for class."""
    at = "".join(f' {("class" if k == "cls" else k.replace("_", "-"))}="{text(v)}"'
                 for k, v in attrs.items() if v is not None)
    return Markup(f"<{tag}{at}>{join(children)}</{tag}>")


def para(*children, cls: str | None = None) -> Markup:
    return el("p", *children, cls=cls)


def note(*children) -> Markup:
    """A muted paragraph: what a view shows, or why it is missing."""
    return el("p", *children, cls="note")


def facts(rows: Sequence[tuple[str, object]]) -> Markup:
    """A two-column list of labelled facts; rows whose value is None are left out."""
    return el("dl", *(join([el("dt", k), el("dd", v)]) for k, v in rows if v is not None),
              cls="facts")


class _Cell:
    __slots__ = ("shown", "sort", "cls")

    def __init__(self, shown, sort=None, cls=None):
        self.shown, self.sort, self.cls = shown, sort, cls


def cell(shown, sort=None, cls: str | None = None) -> _Cell:
    """A table cell showing ``shown`` and sorting by ``sort`` (a number, or text)."""
    return _Cell(shown, sort, cls)


def table(columns: Sequence[str], rows: Iterable[Sequence], sortable: bool = True,
          caption: str | None = None) -> Markup:
    """A table; the first column is left-aligned text, the others right-aligned.

    Arguments:
        columns: header labels.
        rows: sequences of cells: plain values, Markup or :func:`cell`.
        sortable: clicking a header sorts by that column (again: reversed).
    """
    head = el("tr", *(el("th", c) for c in columns))
    body = []
    for row in rows:
        tds = []
        for c in row:
            if isinstance(c, _Cell):
                tds.append(el("td", c.shown, data_sort=None if c.sort is None else str(c.sort),
                              cls=c.cls))
            else:
                tds.append(el("td", c))
        body.append(el("tr", *tds))
    return el("table", el("caption", caption) if caption else None, el("thead", head),
              el("tbody", *body), cls="sortable" if sortable else None)


_ids = itertools.count()


def figure(fig, height: int = 360, cls: str = "plot") -> Markup:
    """A plotly figure (dict or ``go.Figure``) drawn by the inlined plotly bundle."""
    if hasattr(fig, "to_plotly_json"):
        fig = fig.to_plotly_json()
    fid = f"plot{next(_ids)}"
    layout = {"height": height, "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
              **fig.get("layout", {})}
    config = {"displaylogo": False, "responsive": True,
              "modeBarButtonsToRemove": ["sendDataToCloud"]}
    return Markup(f'<div class="{text(cls)}" id="{fid}"></div><script>'
                  f'Plotly.newPlot("{fid}",{script_json(fig.get("data", []))},'
                  f'{script_json(layout)},{script_json(config)});</script>')


def section(title: str, *parts, anchor: str | None = None, level: int = 2) -> Markup:
    """A titled section; ``anchor`` makes it a target of the page's table of contents."""
    return el("section", el(f"h{level}", title), *parts, id=anchor)


def side_by_side(*columns) -> Markup:
    """Parts placed in columns of equal width (e.g. two profiles compared)."""
    return el("div", *(el("div", c, cls="col") for c in columns), cls="cols")


_STYLE = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:0 1.5em 3em;color:#222}
h1{font-size:1.5em;margin:.8em 0 .2em;overflow-wrap:anywhere}
h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em;overflow-wrap:anywhere}
h3{font-size:1.05em;margin-top:1.2em;overflow-wrap:anywhere}
nav{font-size:.9em;margin:.5em 0 1em}nav a{margin-right:1em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{padding:.2em .6em;text-align:right;border-bottom:1px solid #eee;white-space:nowrap}
td:first-child,th:first-child{text-align:left;white-space:normal;overflow-wrap:anywhere;max-width:40em}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:after{content:" \\2195";color:#aaa}
caption{text-align:left;font-weight:bold;padding:.3em 0}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:.15em 1em;font-size:.9em}
dl.facts dt{font-weight:bold}dl.facts dd{margin:0;overflow-wrap:anywhere}
.note{color:#666;font-size:.85em}
.warn{color:#8a5a00}
.finding{border-left:4px solid #c0392b;padding:.2em .8em;margin:.8em 0;background:#fdf6f5}
.finding h3{margin:.3em 0}
.better{color:#1a7f37}.worse{color:#c0392b}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:1em}.col{min-width:0}
.plot{width:100%}
"""

# Sorts a table's body by the clicked column: data-sort (numbers) else the text.
_SORT_SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function(th){
 th.addEventListener("click",function(){
  var tb=th.closest("table").tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);
  var dir=th.dataset.dir==="desc"?1:-1;th.dataset.dir=dir===1?"asc":"desc";
  function key(tr){var c=tr.children[i];if(!c)return "";var s=c.dataset.sort;
   if(s!==undefined&&s!==""&&!isNaN(+s))return +s;return s!==undefined?s:c.textContent;}
  Array.prototype.slice.call(tb.rows).sort(function(a,b){var x=key(a),y=key(b);
   if(typeof x==="number"&&typeof y==="number")return dir*(x-y);
   return dir*String(x).localeCompare(String(y));}).forEach(function(tr){tb.appendChild(tr);});
 });
});
"""


def _plotly_bundle() -> str:
    import plotly.offline

    # The bundle is plotly's own minified file; "</script" never occurs in it,
    # but make sure, as the page would break silently otherwise.
    js = plotly.offline.get_plotlyjs()
    return js.replace("</script", "<\\/script")


def document(title: str, parts: Sequence, nav: Sequence[tuple[str, str]] = (),
             subtitle=None) -> str:
    """The whole page as one string: style, plotly bundle, sort script, then ``parts``.

    Arguments:
        title: the page title (escaped).
        parts: sections (Markup from this module; plain strings are escaped).
        nav: (anchor, label) links shown under the title.
        subtitle: a line under the title.
    """
    links = el("nav", *(el("a", label, href=f"#{anchor}") for anchor, label in nav)) \
        if nav else None
    body = join([el("h1", title), para(subtitle, cls="note") if subtitle else None, links,
                 *parts])
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{text(title)}</title>"
            # The page never loads anything: say so to the browser too.
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
            "img-src data: blob:; font-src data:\">"
            f"<style>{_STYLE}</style>"
            f"<script>{_plotly_bundle()}</script></head>\n<body>\n{body}\n"
            f"<script>{_SORT_SCRIPT}</script>\n</body></html>\n")


def write(path: str | os.PathLike, html: str, force: bool = False) -> Path:
    """Write the page to ``path``; an existing file is kept unless ``force``.

    Raises:
        UserError: the file exists (and not force), or cannot be written.
    """
    path = Path(path)
    try:
        with open(path, "w" if force else "x", encoding="utf-8") as f:
            f.write(html)
    except FileExistsError:
        raise UserError(f"{path} exists; choose another -o or pass --force") from None
    except OSError as err:
        raise UserError(f"cannot write {path}: {err.strerror}") from None
    return path
