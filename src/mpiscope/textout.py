"""Write a command's text output: to stdout, or to a new file that must not exist yet."""

from __future__ import annotations

import math
import sys
from typing import Optional

from .errors import UserError


def emit(text: str, output: Optional[str]) -> None:
    """Print to stdout, or create a new file (never overwrite one)."""
    if output is None:
        sys.stdout.write(text)
        return
    try:
        with open(output, "x") as f:
            f.write(text)
    except FileExistsError:
        raise UserError(f"{output} exists; not overwriting it") from None
    except OSError as err:
        raise UserError(f"cannot write {output}: {err.strerror}") from None
    print(f"mpiscope: wrote {output}", file=sys.stderr)


def json_safe(obj):
    """``obj`` with NaN and infinities as None, so that ``json.dump`` writes strict JSON
    (every --json of the CLI goes through it)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [json_safe(v) for v in obj]
    return obj
