"""Escaping: every string that comes from a profile reaches the page as text.

A profile is input (program path, arguments, hostnames, region names, MPI-IO
hints, settings): a program named ``<script>alert(1)</script>`` must show
those characters, never run them. Three places take such strings:

- HTML text and attributes: :func:`text` (``html.escape`` after :func:`clean`);
- plotly labels (titles, tick and hover text), which plotly parses as a small
  HTML subset: :func:`plot_text` (entities, which plotly decodes back to text);
- JSON inside a ``<script>`` element: :func:`script_json` (``<``, ``>``, ``&``
  and the JavaScript line separators as ``\\uXXXX``, so no string can close the
  element).
"""

from __future__ import annotations

import html
import json
import re

# C0 controls other than tab/newline/CR, DEL and the C1 controls: shown as \xNN.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATES = re.compile("[\ud800-\udfff]")
_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                  "\u2028": "\\u2028", "\u2029": "\\u2029"}


def clean(value) -> str:
    """Any value as printable, encodable text.

    bytes are decoded as UTF-8 with U+FFFD for invalid sequences (as the runtime
    writes META); lone surrogates (a JSON ``\\ud800`` escape) become U+FFFD, so
    the page always encodes as UTF-8; control characters become ``\\xNN``.
    """
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    s = str(value)
    s = _SURROGATES.sub("\ufffd", s)
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", s)


def text(value) -> str:
    """``value`` as HTML text, safe in element content and in quoted attributes."""
    return html.escape(clean(value), quote=True)


def plot_text(value) -> str:
    """``value`` for a plotly label: plotly reads ``<b>``, ``<br>``, ... as markup,
    so the characters that start markup or entities are given as entities."""
    return html.escape(clean(value), quote=False)


def script_json(obj) -> str:
    """``obj`` as JSON that can sit inside ``<script>`` (numpy values allowed)."""
    from plotly.io.json import to_json_plotly

    if isinstance(obj, str):
        out = json.dumps(obj)
    else:
        try:
            out = to_json_plotly(obj)
        except TypeError:  # an integer beyond 64 bits (orjson's limit): a corrupt count
            out = to_json_plotly(_wide_ints_as_floats(obj))
    for ch, rep in _SCRIPT_UNSAFE.items():
        out = out.replace(ch, rep)
    return out


def _wide_ints_as_floats(obj):
    """``obj`` with every Python int outside the 64-bit range made a float."""
    if isinstance(obj, dict):
        return {k: _wide_ints_as_floats(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_wide_ints_as_floats(v) for v in obj]
    if isinstance(obj, int) and not isinstance(obj, bool) and not -2**63 <= obj < 2**64:
        return float(obj)
    return obj
