import contextlib
import fcntl
import os
import shutil
import tempfile
from pathlib import Path

import pytest

import mpitest
from vcluster import vcluster  # noqa: F401  (the session's virtual cluster, tests/vcluster.py)


def pytest_generate_tests(metafunc):
    # Any test taking `impl` runs once per MPI implementation mpiscope was built for.
    if "impl" in metafunc.fixturenames:
        impls = mpitest.impls()
        if not impls:
            raise pytest.UsageError("mpiscope's native parts are not built for any MPI: "
                                    "run scripts/setup.sh (a missing build is a failure, not a skip)")
        metafunc.parametrize("impl", impls)


@pytest.fixture
def nranks(impl):
    return mpitest.NRANKS[impl]


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium per test process for every browser test.

    Defined once here: playwright's sync API allows one running instance per
    thread, and a fixture imported into two test modules would start two.
    """
    import browser
    with browser.browser() as b:
        yield b


# Where Open MPI puts what a job leaves when it is killed before it can clean up (the
# suite kills hung, signalled and timed-out jobs): its session directory (default
# /tmp/ompi.<host>.<uid>/pid.<mpirun pid>/) and its shared-memory segments (default
# /dev/shm/vader_segment.*). Every test process points both at directories of its own
# and removes them when it ends, so the suite leaves neither behind.
_MPI_LEFTOVERS = {"OMPI_MCA_orte_tmpdir_base": None,
                  "OMPI_MCA_btl_vader_backing_directory": "/dev/shm"}
_made: list[str] = []


def _private_mpi_dirs() -> None:
    for var, parent in _MPI_LEFTOVERS.items():
        if var in os.environ or (parent and not os.access(parent, os.W_OK)):
            continue  # the caller's own choice, or no /dev/shm: Open MPI's default
        d = tempfile.mkdtemp(prefix="mpiscope-tests-", dir=parent)
        _made.append(d)
        os.environ[var] = d


def pytest_runtest_logreport(report):
    # SUITE_TIMES=FILE (not MPISCOPE_*: the pages of tests/docs print those): one line per
    # test phase as it ends (start, seconds, worker, test), so a long run's slowest tests
    # and an idle worker are known before it finishes.
    path = os.environ.get("SUITE_TIMES")
    if path and "PYTEST_XDIST_WORKER" not in os.environ and report.duration > 0.5:
        with open(path, "a") as f:
            f.write(f"{report.start:.1f}\t{report.duration:.1f}\t"
                    f"{getattr(report, 'node', None) and report.node.gateway.id or '-'}\t"
                    f"{report.when}\t{report.nodeid}\n")


def pytest_unconfigure(config):
    for d in _made:
        shutil.rmtree(d, ignore_errors=True)


def pytest_configure(config):
    _private_mpi_dirs()
    config.addinivalue_line(
        "markers", "alone: the test times MPI runs (a diagnosis, a benchmark's method) and runs "
        "with no other test beside it; see _machine_share")
    config.addinivalue_line(
        "markers", "privileged: needs root or passwordless sudo, or (the full-disk tests) "
        "unprivileged user namespaces; without them: pytest -m 'not privileged' "
        "(docs/install.md)")


@pytest.fixture(autouse=True)
def _machine_share(request, tmp_path_factory):
    """Tests marked ``alone`` get the machine to themselves; the others share it.

    The suite runs two tests at a time (pytest -n 2) on 2 cores. A test that judges
    timings (does diagnose see the hot rank? is the kernel as fast as the reference?)
    fails when the other worker's 64-rank job lands in its run: CI saw a flat stencil
    diagnosed as imbalanced three runs in a row, and 8-byte allreduces drop under the
    5 % bar. So every test holds a shared lock on one file, and an ``alone`` test an
    exclusive one. A gate in front makes it writer-preferring: once an ``alone`` test
    waits, no new test starts beside it, so it cannot starve. The files live in the
    directory all workers' temporary directories share.
    """
    root = tmp_path_factory.getbasetemp().parent
    alone = request.node.get_closest_marker("alone") is not None
    with open(root / "machine.gate", "a") as gate, open(root / "machine.lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        if alone:
            fcntl.flock(lock, fcntl.LOCK_EX)  # waits for the tests already running
            fcntl.flock(gate, fcntl.LOCK_UN)
        else:
            fcntl.flock(gate, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_SH)
        yield


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # Every test on the virtual cluster runs on one xdist worker (--dist loadgroup in
    # scripts/test.sh), so the run brings the cluster up once (tests/vcluster.py).
    for item in items:
        if "vcluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("vcluster"))
            item.add_marker(pytest.mark.privileged)  # the virtual cluster is root's only
    # scripts/test.sh's phases: SUITE_PHASE=shared (the tests that share the
    # machine) or alone (those marked alone); composes with the caller's own -m and -k.
    phase = os.environ.get("SUITE_PHASE")
    if phase in ("shared", "alone"):
        want = phase == "alone"
        keep, drop = [], []
        for item in items:
            (keep if (item.get_closest_marker("alone") is not None) == want else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def _check_groups(config, items):
    # Under --dist loadgroup each xdist worker renames a grouped test "<id>@<group>" (after
    # the hook above marks it); without that the virtual-cluster tests spread over both
    # workers and one waits for the other's cluster (its session lock) until that worker
    # ends: an hour of idling. Fail at once instead (pyproject.toml pins pytest < 9).
    if getattr(config.option, "loadgroup", False):
        lost = [i.nodeid for i in items if i.get_closest_marker("xdist_group")
                and "@" not in i.nodeid.rsplit("]", 1)[-1]]
        if lost:
            raise pytest.UsageError(
                f"pytest-xdist's --dist loadgroup did not group {lost[0]} (pytest "
                f"{pytest.__version__}): install the test extras (pip install .[test])")


def _user_temp_root(tmp_path_factory) -> Path:
    """The directory pytest keeps for this user (``/tmp/pytest-of-<user>``, mode 0700,
    checked by pytest to be the user's own), above this session's ``pytest-N``."""
    base = tmp_path_factory.getbasetemp()
    for d in (base, *base.parents):
        if d.name.startswith("pytest-of-"):
            return d
    return base.parent  # --basetemp given: its parent


@pytest.fixture(scope="session")
def user_lock(tmp_path_factory):
    """``with user_lock("big-message"):`` one holder at a time among every pytest this
    user runs on this machine (every worker, session and worktree).

    The lock file lives in pytest's per-user directory, never under a fixed name in
    /tmp: a file there made by one user (root in CI) is another user's PermissionError.
    Different users do not exclude each other.
    """
    root = _user_temp_root(tmp_path_factory)

    @contextlib.contextmanager
    def hold(name: str):
        with open(root / f"mpiscope-{name}.lock", "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            yield

    hold.directory = root
    return hold
