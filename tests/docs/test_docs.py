"""The README and docs/*.md run as written: executable documentation.

How to mark a block, and what each check does: docs/architecture.md,
"Executable docs". In short:

- ``test_page_runs``: every block marked ``<!-- doctest -->`` runs, in page order,
  in one shell and one temporary directory (tests/docs/runner.py); exit codes
  are checked and shown output is compared with printed output
  (tests/docs/matcher.py).
- ``test_commands_have_their_options``: every ``mpiscope ...`` command written
  in any code block of a page (marked or not) names a command and options that
  exist.
- ``test_synopses_match_help``: a block or table marked ``synopsis`` lists
  exactly the options the command's ``--help`` lists, no more, no fewer.
- ``test_option_lists_match_help``: a table marked ``options-of="mpiscope bench
  KERNEL"`` and the text of its section name exactly that command's own long
  options.
- ``test_measured_numbers_say_where_from``: a block or table marked ``measured``
  (numbers the tests cannot reproduce: timings of a real run) is preceded by
  the date, the machine and the command that produced them.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

import doc_options as cli_options
import doc_blocks as markdown
import doc_runner as runner

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# What bench's driver adds to every kernel's own options.
BENCH_DRIVER = {"-o", "--output", "--force", "--mpi", "--timeout", "-h", "--help"}


def page_id(p: Path) -> str:
    return str(p.relative_to(REPO))


def page_blocks(p: Path) -> list[markdown.Block]:
    return markdown.blocks(p, page_id(p))


def pages_with(pred) -> list[Path]:
    return [p for p in PAGES if any(pred(b) for b in page_blocks(p))]


def all_blocks() -> list[markdown.Block]:
    return [b for p in PAGES for b in page_blocks(p)]


@pytest.mark.parametrize("page", pages_with(runner.is_run), ids=page_id)
def test_page_runs(page, tmp_path):
    results = runner.run_page(page_blocks(page), tmp_path, timeout=900)
    assert results, "no marked command"
    failed = runner.report(results)
    assert not failed, "\n" + failed


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_commands_have_their_options(page):
    problems = []
    for b in page_blocks(page):
        if b.kind != "code" or (b.mark and "skip" in b.mark) or b.info in ("python", "toml", "fortran"):
            continue
        texts = [c.text for c in runner.commands(b)] if b.text.lstrip().startswith("$ ") \
            else b.text.split("\n")
        for text in texts:
            for inv in cli_options.invocations(text):
                problems += [f"{b.where}: {p}: {inv.text[:100]}" for p in cli_options.unknown_options(inv)]
    assert not problems, "\n".join(problems)


def synopsis_lines(b: markdown.Block) -> list[str]:
    if b.kind == "table":
        lines = [row[0] for row in markdown.table_cells(b.text)[1:]]
        lines = [re.sub(r"`", "", ln) for ln in lines]
    else:
        lines = [ln[2:] if ln.startswith("$ ") else ln for ln in b.text.split("\n")]
    prefix = b.mark.get("prefix")
    lines = [ln.strip() for ln in lines if ln.strip()]
    if prefix:
        lines = [ln if ln.startswith(prefix.split()[0]) else f"{prefix} {ln}" for ln in lines]
    return lines


def help_text(command: str) -> str:
    env = runner.environment(REPO)
    out = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True,
                         timeout=120)
    return out.stdout + out.stderr


def test_synopses_match_help():
    problems = []
    for b in all_blocks():
        if not (b.mark and "synopsis" in b.mark):
            continue
        partial = set(b.mark.get("partial", "").split(","))
        # options the page states once for every command that has them ("every command
        # that writes an order takes --format, --hosts and -o")
        also = set(filter(None, b.mark.get("also", "").split(",")))
        written: dict[tuple, set] = {}
        for ln in synopsis_lines(b):
            if ln.startswith("mpiscope"):
                invs = cli_options.invocations(ln.split(" -- ")[0].replace("[", " [").replace("|", " | "))
                path = invs[0].path if invs else ()
            elif "help" in b.mark:
                path = ("<help>",)
            else:
                problems.append(f"{b.where}: a synopsis line that is not an mpiscope command: {ln!r}")
                continue
            written.setdefault(path, set()).update(cli_options.synopsis_options(ln))
        for path, names in written.items():
            if path == ("<help>",):
                real = set(cli_options.OPTION.findall(help_text(b.mark["help"])))
                have = {n for n in real if n not in ("-h", "--help")}
                problems += [f"{b.where}: {n} is not in `{b.mark['help']}`" for n in sorted(names - real)]
                problems += [f"{b.where}: `{b.mark['help']}` lists {n}, the synopsis does not"
                             for n in sorted(have - names)]
                continue
            cmd = cli_options.resolve(path)
            label = "mpiscope " + " ".join(path)
            if cmd is None:
                problems.append(f"{b.where}: no command '{label}'")
                continue
            known = cli_options.command_names(cmd)
            problems += [f"{b.where}: '{label}' has no option {n}" for n in sorted(names - set(known))]
            if " ".join(path) in partial:
                continue
            for opt in cli_options.visible_options(cmd):
                if not set(opt.opts) & (names | also):
                    problems.append(f"{b.where}: '{label} --help' lists {'/'.join(opt.opts)}, "
                                    "the synopsis does not")
    assert not problems, "\n".join(problems)


def test_option_lists_match_help():
    problems = []
    for b in all_blocks():
        if not (b.mark and "options-of" in b.mark):
            continue
        label = b.mark["options-of"]
        invs = cli_options.invocations(label)
        cmd = cli_options.resolve(invs[0].path) if invs else None
        if cmd is None:
            problems.append(f"{b.where}: no command {label!r}")
            continue
        # long options only: "-W", "-T mpi_float" in the text are other tools' (OSU's)
        named = {o for o in cli_options.OPTION.findall(b.section + "\n" + b.text) if o.startswith("--")}
        known = cli_options.command_names(cmd)
        own = {o.opts[-1] for o in cli_options.visible_options(cmd)} - BENCH_DRIVER
        problems += [f"{b.where}: '{label}' has no option {n}" for n in sorted(named - set(known))]
        for opt in cli_options.visible_options(cmd):
            if opt.opts[-1] in own and not set(opt.opts) & named:
                problems.append(f"{b.where}: '{label} --help' lists {'/'.join(opt.opts)}, "
                                "the page does not")
    assert not problems, "\n".join(problems)


# "Measured 2026-11-26 on <machine> ...: `command`" (docs/architecture.md, "Executable docs");
# "Run of 26 Nov 2026 ..." says the same
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) 20\d\d\b")
PROVENANCE = re.compile(r"\bMeasured\b|\bRuns? (of|on)\b")
COMMAND = re.compile(r"`[^`]*\b(mpiscope|mpirun[\w.]*|python3|srun|perf/|bench/|scripts/)[^`]*`")


def provenance_problems(b: markdown.Block) -> list[str]:
    paragraphs = re.split(r"\n\s*\n", b.section)
    para = next((p for p in reversed(paragraphs) if PROVENANCE.search(p)), None)
    if para is None:
        return [f"{b.where}: measured numbers without a 'Measured <date> on <machine> ...: "
                "`command`' paragraph before them"]
    problems = []
    if not DATE.search(para):
        problems.append(f"{b.where}: the 'Measured' paragraph has no date (YYYY-MM-DD)")
    if not re.search(r"\bon\b", para):
        problems.append(f"{b.where}: the 'Measured' paragraph does not say on which machine")
    if not COMMAND.search(para):
        problems.append(f"{b.where}: the 'Measured' paragraph names no command in backticks")
    return problems


def test_measured_numbers_say_where_from():
    problems = []
    for b in all_blocks():
        if b.mark and "measured" in b.mark:
            problems += provenance_problems(b)
    assert not problems, "\n".join(problems)


def test_layout_tables_name_real_files():
    """A table marked ``paths root=DIR``: every backticked name in its first column is a
    file or directory under DIR (layout tables drift when files move)."""
    problems, seen = [], 0
    for b in all_blocks():
        if not (b.mark and "paths" in b.mark):
            continue
        root = REPO / b.mark.get("root", ".")
        for row in markdown.table_cells(b.text)[1:]:
            for name in re.findall(r"`([^`]+)`", row[0]):
                seen += 1
                if not (root / name).exists():
                    problems.append(f"{b.where}: {name} is not in {root.relative_to(REPO)}/")
    assert seen, "no table is marked paths"
    assert not problems, "\n".join(problems)


# Where a page's file names are relative to: the top, the Python package, the
# runtime, the tests, the docs (img/, bench/).
PATH_ROOTS = [REPO, REPO / "src" / "mpiscope", REPO / "runtime", REPO / "tests", REPO / "docs"]
FILE_NAME = re.compile(r"`([\w.][\w./-]*/[\w.-]+\.(?:py|c|h|sh|md|json|toml|F90|f90|png|txt))`")


def test_file_names_in_the_text_exist():
    """Every `dir/file.ext` a page names (in backticks) is a file of the source tree,
    relative to the top, src/mpiscope, runtime, tests or docs."""
    problems = []
    for p in PAGES:
        text = p.read_text()
        for m in FILE_NAME.finditer(text):
            if not any((root / m.group(1)).exists() for root in PATH_ROOTS):
                line = text[:m.start()].count("\n") + 1
                problems.append(f"{page_id(p)}:{line}: no file {m.group(1)}")
    assert not problems, "\n".join(problems)


# "seed 004", "seeds 001, 004", "seeds/", "the seeds' problems": the project's internal
# name for the case studies, which a user never sees (docs/case-studies.md names them).
SEED = re.compile(r"\bseeds?\s+0\d\d|\bseeds?\b[^.\n]{0,12}\b00[0-4]\b|\bseeds/|\bthe seeds'|\bseed studies", re.I)


def user_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings: what it prints."""
    tree = ast.parse(path.read_text())
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def test_case_studies_are_named_not_numbered():
    """Pages and what mpiscope prints (help, bench list, diagnose's fixes) name the case
    studies (WRF on Blue Waters, ...), never the internal "seed 000"."""
    problems = []
    for p in PAGES:
        for i, line in enumerate(p.read_text().split("\n"), 1):
            if SEED.search(line):
                problems.append(f"{page_id(p)}:{i}: {line.strip()[:100]}")
    for mod in sorted((REPO / "src" / "mpiscope").rglob("*.py")):
        for line, text in user_strings(mod):
            if SEED.search(text):
                problems.append(f"{mod.relative_to(REPO)}:{line}: {text[:100]!r}")
    assert "POP on the Cray XT" in (REPO / "docs" / "case-studies.md").read_text()
    assert not problems, "\n".join(problems)


def test_every_page_parses_and_every_mark_is_known():
    known = runner.RUN_OPTIONS | runner.NOT_RUN | {"partial", "also", "prefix", "help", "paths", "root"}
    problems = []
    for p in PAGES:
        try:
            bl = page_blocks(p)
        except ValueError as e:
            problems.append(str(e))
            continue
        for b in bl:
            problems += [f"{b.where}: unknown doctest option {k!r}" for k in (b.mark or {}) if k not in known]
    assert not problems, "\n".join(problems)
