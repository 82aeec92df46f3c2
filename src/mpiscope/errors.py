"""The one exception type that means "the user gave us something wrong".

The CLI turns it into a one-line ``mpiscope: error: ...`` and a non-zero exit;
anything else is a bug and keeps its traceback.
"""


class UserError(Exception):
    """Bad input: a missing/corrupt file, an impossible option, a failed launcher."""

    exit_code = 2
