"""Run mpi4py's own test suite on this rank and record each test's outcome.

    mpirun -n N python3 mpi4py_rank.py TESTDIR OUTPREFIX [main.py options...]

mpi4py's ``test/main.py`` runs the suite with unittest; this wraps its
``TestProgram`` with a result class that remembers every test's outcome and
writes ``OUTPREFIX.<rank>.json`` ({test id: pass|fail|error|skip|xfail|xpass})
before MPI is finalized, so the matrix script compares outcomes test by test
instead of parsing interleaved terminal output.
"""

import json
import sys
import unittest


class Recording(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcome = {}

    def addSuccess(self, test):
        super().addSuccess(test)
        self.outcome[test.id()] = "pass"

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcome[test.id()] = "fail"

    def addError(self, test, err):
        super().addError(test, err)
        self.outcome[test.id()] = "error"

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcome[test.id()] = "skip"

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.outcome[test.id()] = "xfail"

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.outcome[test.id()] = "xpass"

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.outcome[test.id()] = "fail"


def main() -> None:
    wants_help = sys.argv[1:2] in (["-h"], ["--help"])
    if wants_help or len(sys.argv) < 3:
        print(__doc__.strip().split("\n\n")[1].strip())   # the usage line
        sys.exit(0 if wants_help else 2)
    testdir, outprefix, *rest = sys.argv[1:]
    sys.path.insert(0, testdir)
    sys.dont_write_bytecode = True
    import main as mpi4py_main  # mpi4py's test/main.py

    class Program(mpi4py_main.TestProgram):
        def runTests(self):
            self.testRunner = unittest.TextTestRunner(resultclass=Recording, verbosity=0,
                                                      stream=sys.stderr)
            try:
                super().runTests()
            except SystemExit as e:
                code = e.code
            else:
                code = 0
            from mpi4py import MPI
            rank = MPI.COMM_WORLD.Get_rank()
            with open(f"{outprefix}.{rank}.json", "w") as f:
                json.dump(self.result.outcome, f, indent=0, sort_keys=True)
            sys.exit(code)

    Program(module=None, argv=[sys.argv[0], *rest])


# The workers mpi4py.futures spawns (test_futures, test_util_pool) run this
# script again as "__worker__", without its arguments: only the suite's own
# processes run the suite.
if __name__ == "__main__":
    main()
