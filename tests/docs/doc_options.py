"""The options of mpiscope's commands, from the same click objects that print ``--help``,
and the mpiscope command lines written in a page."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import typer

OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")"}
REDIRECT = re.compile(r"^\d*(>>?|<)(&\d+)?$")


@dataclass
class Invocation:
    path: tuple[str, ...]   # ("scale", "report")
    options: list[str]      # option names written, before any "--"
    text: str


def is_group(cmd) -> bool:
    # typer may vendor its own click, so no isinstance with click's classes
    return isinstance(getattr(cmd, "commands", None), dict)


def is_option(param) -> bool:
    return getattr(param, "param_type_name", "") == "option"


def root():
    from mpiscope.cli import app
    return typer.main.get_command(app)


def command_names(cmd) -> dict:
    """Every name of every option of cmd (``-o`` and ``--output`` alike) -> the option."""
    out = {}
    for p in cmd.params:
        if is_option(p):
            for name in (*p.opts, *p.secondary_opts):
                out[name] = p
    for name in (cmd.context_settings or {}).get("help_option_names", ["--help"]):
        out[name] = None
    out.setdefault("--help", None)
    return out


def visible_options(cmd) -> list:
    return [p for p in cmd.params if is_option(p) and not p.hidden]


def resolve(path: tuple[str, ...]):
    cmd = root()
    for word in path:
        if not is_group(cmd) or word not in cmd.commands:
            return None
        cmd = cmd.commands[word]
    return cmd


def substitutions(text: str) -> tuple[str, list[str]]:
    """``a $(b $(c)) d`` -> ("a SUBST d", ["b SUBST", "c"]): command substitutions are
    commands of their own."""
    inner: list[str] = []
    while True:
        start = text.find("$(")
        if start < 0:
            return text, inner
        depth, i = 0, start + 1
        while i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        body = text[start + 2:i]
        sub_text, sub_inner = substitutions(body)
        inner += [sub_text, *sub_inner]
        text = text[:start] + "SUBST" + text[i + 1:]


def invocations(text: str) -> list[Invocation]:
    """The mpiscope commands of a shell command line (pipes, ``&&``, ``$(...)`` included)."""
    text = text.replace("\\\n", " ")
    main, inner = substitutions(text)
    out = []
    for line in [main, *inner]:
        for ln in line.split("\n"):
            try:
                lex = shlex.shlex(ln, posix=True, punctuation_chars="|&;()")
                lex.whitespace_split = True
                lex.commenters = "#"
                tokens = list(lex)
            except ValueError:
                tokens = ln.split()
            simple: list[str] = []
            for tok in [*tokens, ";"]:
                if tok in SEPARATORS:
                    inv = _invocation(simple, ln)
                    if inv:
                        out.append(inv)
                    simple = []
                else:
                    simple.append(tok)
    return out


def _invocation(tokens: list[str], text: str) -> Invocation | None:
    i = 0
    while i < len(tokens) and (re.match(r"^[A-Za-z_]\w*=", tokens[i]) or tokens[i] in ("time", "env", "$")):
        i += 1
    if i < len(tokens) - 2 and tokens[i].startswith("python") and tokens[i + 1] == "-m" \
            and tokens[i + 2] in ("mpiscope", "mpiscope.cli"):
        i += 2
    elif not (i < len(tokens) and re.search(r"(^|/)mpiscope$", tokens[i])):
        return None
    rest = tokens[i + 1:]
    group = root()
    path: list[str] = []
    options: list[str] = []
    skip_next = False
    for tok in rest:
        if skip_next:
            skip_next = False
            continue
        if tok == "--":
            break
        if REDIRECT.match(tok):
            skip_next = not re.search(r"&\d+$", tok)
            continue
        m = re.match(r"^[\[(]*(--?[A-Za-z][\w-]*)", tok)
        if m:
            options.append(m.group(1))
            continue
        if is_group(group) and not options:
            path.append(tok)   # a word that is not a subcommand: resolve() says so
            group = group.commands.get(tok)
    return Invocation(tuple(path), options, text.strip())


def unknown_options(inv: Invocation) -> list[str]:
    """Problems: the command does not exist, or an option it does not have."""
    cmd = resolve(inv.path)
    if cmd is None:
        return [f"no command 'mpiscope {' '.join(inv.path)}'"]
    if is_group(cmd) and inv.path and not inv.options:
        return []
    names = command_names(cmd)
    return [f"'mpiscope {' '.join(inv.path)}' has no option {o}" for o in inv.options if o not in names]


def synopsis_options(line: str) -> list[str]:
    """The option names of a synopsis line, up to its ``--`` (the launcher's part)."""
    line = line.split(" -- ")[0].split("#")[0]
    return OPTION.findall(line)
