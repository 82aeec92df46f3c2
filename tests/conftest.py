import pytest

import mpitest


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
