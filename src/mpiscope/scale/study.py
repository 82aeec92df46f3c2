"""The study file (TOML): what to run at which rank counts, and how.

    [study]
    kind = "strong"                 # or "weak"
    ranks = [1, 2, 4, 8, 16]
    repetitions = 3
    command = "/path/to/app --grid {grid} --steps 50"
    output = "runs/app-strong"      # relative to the study file
    [params]
    grid = "512x512"                # one value, or one per rank count (weak scaling)
    [launcher]
    command = "mpirun -n {np}"
    ppn = 16
    [env]
    OMP_NUM_THREADS = "1"
    [mpiscope]
    mode = "full"
    [slurm]
    options = ["--time=00:10:00"]

Every key is checked when the file is read and every template is rendered for
every point, so a mistake is one line naming the key before anything runs.
The full reference is docs/scaling.md.
"""

from __future__ import annotations

import json
import math
import shlex
try:
    import tomllib
except ImportError:  # Python 3.10 (Ubuntu 22.04): the same parser, packaged
    import tomli as tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError

# The copy of the study file a study directory keeps, and where the original
# was (studydir.py).
SAVED_NAME = "study.toml"
ORIGIN_NAME = "origin.json"
KINDS = ("strong", "weak")
MODES = ("full", "summary")
# Placeholders every template may use besides the [params] keys.
BUILTIN_PLACEHOLDERS = ("np", "nodes", "ppn", "rep")

# table -> {key: (type check, description for the error message)}
_INT = (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer")
_STR = (lambda v: isinstance(v, str), "a string")
_BOOL = (lambda v: isinstance(v, bool), "true or false")
_STRLIST = (lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v),
            "a list of strings")
_INTLIST = (lambda v: isinstance(v, list) and all(_INT[0](x) for x in v), "a list of integers")
_NUMBER = (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number")
SCHEMA = {
    "study": {"name": _STR, "kind": _STR, "ranks": _INTLIST, "repetitions": _INT,
              "command": _STR, "output": _STR, "timeout": _NUMBER},
    "launcher": {"command": _STR, "ppn": _INT, "mpi": _STR},
    "mpiscope": {"mode": _STR, "sync": _BOOL},
    "slurm": {"options": _STRLIST, "python": _STR},
}
REQUIRED = {"study": ("kind", "ranks", "command")}


@dataclass(frozen=True)
class Point:
    """One run of the study: rank count and repetition (1-based)."""
    np: int
    rep: int

    @property
    def key(self) -> str:
        return f"np{self.np:05d}-rep{self.rep}"


@dataclass
class Study:
    path: Path
    name: str
    kind: str
    ranks: list[int]
    repetitions: int
    command: str
    output: Path
    launcher: str = "mpirun -n {np}"
    ppn: int | None = None
    mpi: str | None = None
    params: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    mode: str | None = None
    sync: bool = False
    timeout: float | None = None
    slurm_options: list[str] = field(default_factory=list)
    slurm_python: str | None = None
    workdir: Path | None = None   # where the points run: the study file's directory

    def points(self) -> list[Point]:
        return [Point(n, r) for n in self.ranks for r in range(1, self.repetitions + 1)]

    def values(self, point: Point) -> dict:
        """The placeholder values of one point."""
        nodes = math.ceil(point.np / self.ppn) if self.ppn else 1
        vals = {"np": point.np, "nodes": nodes, "ppn": self.ppn or point.np, "rep": point.rep}
        i = self.ranks.index(point.np)
        for name, value in self.params.items():
            vals[name] = value[i] if isinstance(value, list) else value
        return vals

    def launch_argv(self, point: Point) -> list[str]:
        """Launcher + program command of one point, split as a shell would."""
        vals = self.values(point)
        return (shlex.split(_render(self.launcher, vals, "launcher.command"))
                + shlex.split(_render(self.command, vals, "study.command")))

    def environment(self, point: Point) -> dict[str, str]:
        vals = self.values(point)
        return {k: _render(str(v), vals, f"env.{k}") for k, v in self.env.items()}


def _render(template: str, values: dict, key: str) -> str:
    try:
        text = template.format_map(values)
    except KeyError as err:
        known = ", ".join(sorted(values))
        raise UserError(f"{key}: unknown placeholder {{{err.args[0]}}} (known: {known})") from None
    except (ValueError, IndexError, AttributeError, TypeError) as err:
        raise UserError(f"{key}: bad template {template!r}: {err}") from None
    if "\0" in text:
        raise UserError(f"{key}: contains a NUL character")
    return text


def _check_table(where: str, table: dict, spec: dict) -> None:
    for key, value in table.items():
        if key not in spec:
            raise UserError(f"{where}: unknown key {key!r} (known: {', '.join(spec)})")
        ok, what = spec[key]
        if not ok(value):
            raise UserError(f"{where}: {key} must be {what}, not {value!r}")


def parse_study(data: dict, path: Path) -> Study:
    """Check a decoded study file and return the Study (``path`` names it in errors)."""
    name = path.name
    known = set(SCHEMA) | {"params", "env"}
    for table in data:
        if table not in known:
            raise UserError(f"{name}: unknown table [{table}] (known: {', '.join(sorted(known))})")
        if not isinstance(data[table], dict):
            raise UserError(f"{name}: {table} must be a table ([{table}])")
    for table, spec in SCHEMA.items():
        _check_table(f"{name}: [{table}]", data.get(table, {}), spec)
    if "study" not in data:
        raise UserError(f"{name}: missing table [study]")
    st = data["study"]
    for key in REQUIRED["study"]:
        if key not in st:
            raise UserError(f"{name}: missing key study.{key}")
    kind = st["kind"]
    if kind not in KINDS:
        raise UserError(f"{name}: study.kind must be 'strong' or 'weak', not {kind!r}")
    ranks = st["ranks"]
    if not ranks:
        raise UserError(f"{name}: study.ranks is empty")
    if any(n < 1 for n in ranks):
        raise UserError(f"{name}: study.ranks must be positive, not {ranks}")
    if len(set(ranks)) != len(ranks):
        raise UserError(f"{name}: study.ranks repeats a rank count: {ranks}")
    reps = st.get("repetitions", 1)
    if reps < 1:
        raise UserError(f"{name}: study.repetitions must be at least 1, not {reps}")
    timeout = st.get("timeout")
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise UserError(f"{name}: study.timeout must be a positive number of seconds, "
                        f"not {timeout} (leave it out for no timeout)")
    params = data.get("params", {})
    for key, value in params.items():
        if key in BUILTIN_PLACEHOLDERS:
            raise UserError(f"{name}: params.{key} is set by mpiscope for each point; "
                            f"use another name")
        if isinstance(value, list) and len(value) != len(ranks):
            raise UserError(f"{name}: params.{key} has {len(value)} values for "
                            f"{len(ranks)} rank counts (give one, or one per study.ranks entry)")
        if not isinstance(value, (str, int, float, list)) or isinstance(value, bool):
            raise UserError(f"{name}: params.{key} must be a string, a number or a list of them")
    env = data.get("env", {})
    for key, value in env.items():
        if not key or "=" in key or "\0" in key:
            raise UserError(f"{name}: env: {key!r} is not an environment variable name "
                            f"(no '=', not empty)")
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise UserError(f"{name}: env.{key} must be a string or a number, not {value!r}")
    launcher = data.get("launcher", {})
    ppn = launcher.get("ppn")
    if ppn is not None and ppn < 1:
        raise UserError(f"{name}: launcher.ppn must be at least 1, not {ppn}")
    mpi = launcher.get("mpi")
    if mpi is not None:
        from .. import native
        if mpi not in native.IMPLS:
            raise UserError(f"{name}: launcher.mpi must be one of {', '.join(native.IMPLS)}, "
                            f"not {mpi!r}")
    ms = data.get("mpiscope", {})
    mode = ms.get("mode")
    if mode is not None and mode not in MODES:
        raise UserError(f"{name}: mpiscope.mode must be 'full' or 'summary', not {mode!r}")
    slurm = data.get("slurm", {})
    output, workdir = _output_dir(st, path)
    study = Study(
        path=path, name=st.get("name") or output.name, kind=kind, ranks=list(ranks),
        repetitions=reps, command=st["command"], output=output,
        launcher=launcher.get("command", "mpirun -n {np}"), ppn=ppn, mpi=mpi,
        params=dict(params), env=dict(env), mode=mode, sync=ms.get("sync", False),
        timeout=timeout, slurm_options=list(slurm.get("options", [])),
        slurm_python=slurm.get("python"), workdir=workdir)
    # Render every template for every point now: a typo fails before any run.
    try:
        for point in study.points():
            if not study.launch_argv(point):
                raise UserError("study.command renders to nothing")
            study.environment(point)
            slurm_option_lines(study, point)
    except UserError as err:
        raise UserError(f"{name}: {err}") from None
    except ValueError as err:  # shlex: an unclosed quote
        raise UserError(f"{name}: study.command or launcher.command: {err}") from None
    return study


def _output_dir(st: dict, path: Path) -> tuple[Path, Path]:
    """(the study directory, the directory the points run in).

    The study directory is study.output relative to the study file (default:
    the file's stem), and the points run in the study file's directory; the
    saved copy inside a study directory (DIR/study.toml) resumes DIR itself,
    running in the original file's directory (DIR/origin.json).
    """
    if path.name == SAVED_NAME and (path.parent / "points").is_dir():
        root = path.parent
        try:
            workdir = Path(json.loads((root / ORIGIN_NAME).read_text())["workdir"])
        except (OSError, ValueError, KeyError, TypeError):  # made before origin.json
            workdir = root.parent
        return root, workdir
    out = st.get("output", path.stem)
    where = (path.parent / out).resolve()
    if not out.strip() or where == path.parent.resolve():
        raise UserError(f"{path.name}: study.output must name a directory for the results, "
                        f"not {out!r} (the study file's own directory)")
    return where, path.parent


def load_study(path: str | Path) -> Study:
    """Read and check a study file.

    Raises:
        UserError: missing/unreadable file, bad TOML, a missing, unknown or wrong key.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UserError(f"study file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"cannot read study file {path}: {err}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise UserError(f"{path.name}: not valid TOML: {err}") from None
    return parse_study(data, path.resolve())


def slurm_option_lines(study: Study, point: Point) -> list[str]:
    vals = study.values(point)
    return [_render(opt, vals, f"slurm.options[{i}]") for i, opt in enumerate(study.slurm_options)]

