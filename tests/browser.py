"""Open mpiscope's HTML pages in the system Chromium through playwright (tests only).

``open_page(browser, path)`` loads a file:// page headless, with every
request other than the page itself recorded (and aborted), every console
error, page error and dialog (alert) recorded, and waits until plotly has
drawn each figure.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
# Seconds a page may take to load and draw every figure (the target is 10 s at 1M ranks).
LOAD_TIMEOUT = 60


@dataclass
class Loaded:
    page: object
    load_seconds: float
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def close(self) -> None:
        self.page.context.close()

    def plots(self) -> list[dict]:
        """Per plotly figure: id, number of drawn marks (bars, points, lines, heat-map image) and
        whether its SVG has any drawn element."""
        return self.page.evaluate("""() => Array.from(document.querySelectorAll('div.plot')).map(d => ({
            id: d.id,
            section: (d.closest('section') || {}).id || null,
            drawn: d.classList.contains('js-plotly-plot'),
            bars: d.querySelectorAll('g.trace.bars path').length,
            points: d.querySelectorAll('g.trace.scatter path.point').length,
            // line and stacked-area traces: a path whose outline has more than one vertex
            lines: Array.from(d.querySelectorAll('g.trace.scatter path.js-line, g.trace.scatter path.js-fill'))
                .filter(l => (l.getAttribute('d') || '').split(/[LHV]/).length > 2).length,
            heat: d.querySelectorAll('g.hm image').length,
            x: d.getBoundingClientRect().left + window.scrollX,
            y: d.getBoundingClientRect().top + window.scrollY,
            width: d.getBoundingClientRect().width,
            height: d.getBoundingClientRect().height}))""")

    def figure_images(self) -> dict:
        """Figure id -> RGB array of its part of one full-page screenshot (one capture
        instead of one per figure)."""
        import io

        from matplotlib import image

        shot = image.imread(io.BytesIO(self.page.screenshot(full_page=True)), format="png")
        rgb = (shot[..., :3] * 255).round().astype("uint8")
        return {p["id"]: rgb[int(p["y"]):int(p["y"] + p["height"]),
                             int(p["x"]):int(p["x"] + p["width"])] for p in self.plots()}


@contextlib.contextmanager
def browser():
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()



def open_page(b, path: Path, width: int = 1400) -> Loaded:
    """Load ``path`` in a new page of browser ``b`` and wait for every figure to draw."""
    ctx = b.new_context(viewport={"width": width, "height": 900})
    pg = ctx.new_page()
    url = Path(path).resolve().as_uri()
    out = Loaded(pg, 0.0)
    pg.on("console", lambda m: out.console_errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: out.console_errors.append(f"page error: {e}"))
    pg.on("dialog", lambda d: (out.dialogs.append(d.message), d.dismiss()))

    def route(r):
        if r.request.url == url:
            r.continue_()
        else:
            out.requests.append(r.request.url)
            r.abort()
    pg.route("**/*", route)
    t0 = time.perf_counter()
    pg.goto(url, wait_until="load", timeout=LOAD_TIMEOUT * 1000)
    pg.wait_for_function("""() => Array.from(document.querySelectorAll('div.plot'))
                            .every(d => d.querySelector('.main-svg'))""",
                         timeout=LOAD_TIMEOUT * 1000)
    out.load_seconds = time.perf_counter() - t0
    return out


def colours(rgb) -> int:
    """Number of distinct colours in an RGB image array (blank = 1 or 2).

    Each pixel packed into one integer: np.unique over rows (axis=0) took 2 s per figure,
    38 s of a mini-app page's test; over integers it takes milliseconds."""
    import numpy as np

    px = rgb.reshape(-1, 3).astype(np.uint32)
    return len(np.unique((px[:, 0] << 16) | (px[:, 1] << 8) | px[:, 2]))


def has_colour(rgb, colour: tuple[int, int, int], at_least: int = 20) -> bool:
    """Whether at least ``at_least`` pixels are within 3 levels of ``colour``."""
    import numpy as np

    near = np.all(np.abs(rgb.astype(int) - np.array(colour)) <= 3, axis=-1)
    return int(near.sum()) >= at_least
