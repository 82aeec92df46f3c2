"""mpiscope scale report --html: the scale report as one offline page (mpiscope.html.page),
opened in the system Chromium: every table number and plot is there, nothing is fetched."""

from __future__ import annotations

import json

import browser
from test_scale import assert_one_line_error, scale, synthetic_study


def test_scale_report_html_page(tmp_path, chromium):
    study = synthetic_study(tmp_path, ranks=(1, 2, 4, 8, 16))
    scale("run", str(study))
    out = tmp_path / "syn-out"
    rep = json.loads(scale("report", str(out), "--json").stdout)
    page_path = tmp_path / "scale.html"
    page_path.write_text("mine")
    # Every output is checked before anything is written: one line, no traceback.
    assert_one_line_error(scale("report", str(out), "--plots", str(tmp_path / "new"), "--html",
                                str(page_path), check=False), "scale.html exists", "--force")
    assert page_path.read_text() == "mine" and not (tmp_path / "new").exists()
    assert_one_line_error(scale("report", str(out), "--plots", str(page_path), check=False),
                          "is a file, not a directory")
    assert_one_line_error(scale("report", str(out), "--plots", "/proc/no/such", check=False),
                          "cannot create the plot directory")
    scale("report", str(out), "--html", str(page_path), "--force")
    assert_one_line_error(scale("report", str(out), "--html", str(page_path), check=False),
                          "exists")
    loaded = browser.open_page(chromium, page_path)
    try:
        assert loaded.console_errors == [] and loaded.requests == [] and loaded.dialogs == []
        text = loaded.page.inner_text("body")
        for heading in ("Scaling", "Time per rank by function", "Models and extrapolation"):
            assert heading in text
        for row in rep["points"]:
            assert f"{row['wall_s']['median']:.3f}" in text
        for f in rep["models"]["functions"]:
            assert f["formula"] in text
        for e in rep["extrapolation"]:
            assert f"{e['np']} ({e['multiple']}x)" in text and e["dominant"] in text
        # the three matplotlib figures, decoded by the browser
        sizes = loaded.page.evaluate(
            "() => Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
        assert len(sizes) == 3 and all(ok and w > 300 for ok, w in sizes), sizes
    finally:
        loaded.close()
