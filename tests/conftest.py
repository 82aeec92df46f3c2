import pytest

import mpitest


def pytest_generate_tests(metafunc):
    # Any test taking `impl` runs once per MPI implementation mpiscope was built for.
    if "impl" in metafunc.fixturenames:
        metafunc.parametrize("impl", mpitest.impls())


@pytest.fixture
def nranks(impl):
    return mpitest.NRANKS[impl]
