"""A process that ends with its parent: Linux's PR_SET_PDEATHSIG.

``mpiscope run`` gives it to the launcher it starts (the launcher gets SIGTERM
if ``mpiscope run`` is killed, even by SIGKILL, and ends its ranks), and
``mpiscope scale`` asks it of each point's ``mpiscope run`` (``--parent-pid``),
so a runner that dies by any signal, or a Slurm job step killed under a
proctrack plugin that does not see the point's session, takes the point's job
with it instead of leaving it running, re-parented to init.
"""

from __future__ import annotations

import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1
# What ``mpiscope run --parent-pid`` asks for when its parent dies: a signal of
# its own, not SIGTERM, because the kernel sends it once per exiting thread of
# a multithreaded parent (a runner with a progress-bar thread sends two), and
# two SIGTERMs passed on to Open MPI's mpirun make it exit without ending its
# ranks. Its handler ends the launch once however often it comes.
PARENT_GONE = signal.SIGRTMIN + 1
try:
    _LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:  # not a glibc/musl system: nothing to ask the kernel
    _LIBC = None


def end_with_parent(parent: int, sig: int = signal.SIGTERM) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent ends (once per
    thread of the parent: see PARENT_GONE).

    ``parent`` is the pid the caller expects as its parent: if that process
    is already gone (it died before the request was made, and this process was
    re-parented), ``sig`` is sent right away. Returns False where the kernel
    has no such request (not Linux).
    """
    if _LIBC is None or not hasattr(_LIBC, "prctl"):
        return False
    if _LIBC.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)
    return True
