"""mpiscope: measure, explain and fix the scaling of MPI applications."""

__version__ = "0.1.0"


def read(path):
    """Read a profile file into a :class:`mpiscope.profile.Profile`."""
    from .reader import read as _read
    return _read(path)
