"""Write a command's text output: to stdout, or to a new file that must not exist yet."""

from __future__ import annotations

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
