"""Usage errors of every command (unknown command, unknown option, missing
argument, option without its value) are one line and no traceback.

The command tree is walked from the app itself, so a command or group added
later is covered without editing this file. Run by scripts/test.sh in the
virtual environment that holds only the declared dependencies (a usage error
once crashed there on an undeclared `import click`).
"""

from __future__ import annotations

import subprocess

import pytest
import typer

import mpitest
from mpiscope import cli


def _tree(cmd, path=()):
    yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        yield from _tree(sub, (*path, name))


TREE = list(_tree(typer.main.get_command(cli.app)))
GROUPS = [p for p, c in TREE if hasattr(c, "commands")]
LEAVES = [(p, c) for p, c in TREE if not hasattr(c, "commands")]


def _cases():
    for path in GROUPS:
        yield [*path, "no-such-command"], "no-such-command"
    for path, cmd in LEAVES:
        ignores_unknown = cmd.context_settings.get("ignore_unknown_options")
        if not ignores_unknown:  # `run` passes unknown options on to the launcher
            yield [*path, "--no-such-option"], "--no-such-option"
        if any(p.required for p in cmd.params):
            yield list(path), "Missing"
        valued = [p for p in cmd.params if p.param_type_name == "option" and not p.is_flag
                  and not p.count and p.opts]
        if valued:
            opt = max(valued[0].opts, key=len)
            yield [*path, opt], f"'{opt}' requires an argument"


CASES = list(_cases())


def test_the_tree_has_every_group():
    assert {p[0] for p in GROUPS if p} >= {"place", "bench", "scale"}
    assert len(LEAVES) >= 15


@pytest.mark.parametrize("argv,message", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_usage_error_is_one_line(argv, message, capsys):
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    assert rc == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mpiscope: error: "), err
    assert message in lines[0], lines[0]
    assert "Traceback" not in err + out


@pytest.mark.parametrize("argv", [["no-such-command"], ["report", "--bogus", "x"],
                                  ["place", "grid", "--nope"], ["scale", "run"]])
def test_usage_error_of_the_real_process(argv):
    """The same through the interpreter, as the installed command runs it."""
    proc = mpitest.run(mpitest.mpiscope_cmd(*argv), check=False, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("mpiscope: error: ")
