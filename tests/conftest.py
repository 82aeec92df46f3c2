import fcntl

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


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "alone: the test times MPI runs (a diagnosis, a benchmark's method) and runs "
        "with no other test beside it; see _machine_share")


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
