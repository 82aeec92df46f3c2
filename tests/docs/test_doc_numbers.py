"""Numbers the docs derive from the code, recomputed from the code.

The doc tests compare shown output with printed output; these are numbers a
page states in its text, worked out from the builds (they drifted once:
settings.md used 229 function ids when the builds had 244 and 483).
"""

from __future__ import annotations

import re
from pathlib import Path

import doc_blocks

REPO = Path(__file__).resolve().parents[2]


def generated_counts(impl: str) -> tuple[int, int]:
    """NIDS and NHIST of the runtime built for impl (scripts/setup.sh builds in build/)."""
    ids = REPO / "build" / impl / "runtime" / "generated" / "mpiscope_ids.h"
    assert ids.exists(), f"{ids} is missing: run scripts/setup.sh"
    text = ids.read_text()
    return (int(re.search(r"MPISCOPE_NIDS = (\d+)", text).group(1)),
            int(re.search(r"MPISCOPE_NHIST = (\d+)", text).group(1)))


def setting_default(name: str) -> int:
    page = REPO / "docs" / "settings.md"
    table = next(b for b in doc_blocks.blocks(page) if b.kind == "table")
    row = next(r for r in doc_blocks.table_cells(table.text) if r[0] == f"`MPISCOPE_{name}`")
    return int(row[2].strip("`"))


def per_thread_bytes(nids: int, nhist: int) -> int:
    """What runtime/lifecycle.c's thread_new reserves (mmap), as settings.md writes it."""
    regions, peers = setting_default("MAX_REGIONS"), setting_default("MAX_PEERS")
    tables = setting_default("MAX_COMM_TABLES")
    cap = 16
    while cap < 2 * peers:
        cap <<= 1
    return (regions * (nids * (48 + 4) + nhist * 64 * (16 + 4)) + cap * 24
            + (tables + 1) * nids * (32 + 4))


def test_settings_memory_estimate_is_the_builds():
    text = re.sub(r"\s+", " ", (REPO / "docs" / "settings.md").read_text())
    (o_ids, o_hist), (m_ids, m_hist) = generated_counts("openmpi"), generated_counts("mpich")
    assert f"NIDS = {o_ids} function ids" in text and f"NHIST = {o_hist} of them" in text
    assert f"the MPICH 4.0 build {m_ids} and {m_hist}" in text
    o_mb, m_mb = per_thread_bytes(o_ids, o_hist) / 1e6, per_thread_bytes(m_ids, m_hist) / 1e6
    assert f"about {o_mb:.1f} MB per thread on Open MPI and {m_mb:.1f} MB on MPICH" in text, \
        (o_mb, m_mb)
