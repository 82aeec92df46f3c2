"""`mpiscope merge SPOOL`: turn a snapshot spool into one partial profile file.

Every command already reads a spool directory directly (``mpiscope report
prog.job.spool``); merging makes a file that outlives the spool and can be
copied: the same records, the header's partial flag set, the snapshot's
time, reasons and answering ranks in META ``snapshot`` and the in-flight
calls in an INFLIGHT section (docs/profile-format.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import typer

from .. import format as fmt
from ..errors import UserError
from ..terminal import literal


def default_output(spool: Path) -> Path:
    stem = spool.name[:-len(".spool")] if spool.name.endswith(".spool") else spool.name
    return spool.parent / f"{stem}.partial.mpiscope"


def merge(spool: str, out: str | None = None) -> Path:
    """Write the spool's partial profile to ``out`` (never over an existing file)."""
    from ..testing import write_sections
    from . import read_spool

    prof = read_spool(spool)
    dest = Path(out) if out else default_output(Path(spool))
    if dest.exists():
        raise UserError(f"{dest} exists; name another output with -o")
    sections = {fmt.SEC_META: json.dumps(prof.meta).encode(), fmt.SEC_RANKS: prof.ranks,
                fmt.SEC_FUNCS: prof.funcs, fmt.SEC_HIST: prof.hist, fmt.SEC_PEERS: prof.peers,
                fmt.SEC_REGIONS: prof.regions, fmt.SEC_NODES: prof.nodes,
                fmt.SEC_INFLIGHT: prof.inflight, fmt.SEC_MEMBERS: prof.members}
    if len(prof.timeline):
        sections[fmt.SEC_TIMELINE] = prof.timeline
    if "callsites" in prof.meta:
        sections.update({fmt.SEC_CALLSITES: prof.callsites, fmt.SEC_MODULES: prof.modules})
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            write_sections(f, sections, nranks=prof.nranks, flags=prof.flags,
                           start_time=prof.start_time)
        os.link(tmp, dest)     # fails if dest appeared meanwhile: nothing is overwritten
    except FileExistsError:
        raise UserError(f"{dest} exists; name another output with -o") from None
    except OSError as err:
        raise UserError(f"cannot write {dest}: {err.strerror or err}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def spools_in(path: str) -> list[Path]:
    """The spool ``path`` is, or the spools (``*.spool`` with a meta.json) directly in it."""
    d = Path(path)
    if not d.is_dir():
        raise UserError(f"{path}: not a directory (a snapshot spool is <program>.<job>.spool)")
    if (d / "meta.json").is_file():
        return [d]
    found = sorted(p for p in d.glob("*.spool") if (p / "meta.json").is_file())
    if not found:
        raise UserError(f"{path}: not a snapshot spool (no meta.json) and holds no "
                        f"<program>.<job>.spool directory")
    return found


def register(app: typer.Typer) -> None:
    @app.command("merge")
    def merge_cmd(
        spool: str = typer.Argument(..., metavar="SPOOL",
                                    help="A snapshot spool directory (<program>.<job>.spool), "
                                         "or a directory holding spools (MPISCOPE_DIR): each "
                                         "is merged."),
        out: Optional[str] = typer.Option(None, "-o", "--output", metavar="FILE",
                                          help="Output file (default: <program>.<job>."
                                               "partial.mpiscope beside the spool; one spool "
                                               "only)."),
    ):
        """Merge the newest snapshot of every rank in a spool into one partial profile
        (header partial flag; META snapshot says when and which ranks answered). Given a
        directory of spools, merge each beside itself and print each file."""
        spools = spools_in(spool)
        if out and len(spools) > 1:
            raise UserError(f"{spool} holds {len(spools)} spools; -o names one output: "
                            f"merge them one by one")
        for one in spools:
            typer.echo(literal(merge(str(one), out)))
