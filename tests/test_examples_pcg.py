"""examples/pcg (Fortran, `use mpi` and `use mpi_f08` builds): self-checks
(every variant converges to the same solution, C-G follows the classic
residual history within round-off) and its signature in the profile (C-G
halves the allreduces, --prepost, --node-aware).
"""

from __future__ import annotations

import pytest

from exampleapps import assert_one_line_error, result, result_fields, run_app

BUILDS = ("pcg", "pcg_f08")


def history(proc) -> list[float]:
    return [float(ln.split()[3]) for ln in proc.stdout.splitlines() if ln.startswith("iter ")]


def test_all_variants_converge_to_the_same_line(impl, nranks):
    args = ("--grid", "48x40", "--tol", "1e-8")
    base = result(impl, nranks, "pcg", *args)
    fields = result_fields(base)
    assert float(fields["resid"]) < 1e-7  # the true residual ||b - Ax|| / ||b||
    runs = [("pcg", "cg", ()), ("pcg", "classic", ("--prepost",)),
            ("pcg", "cg", ("--node-aware",)), ("pcg_f08", "classic", ()),
            ("pcg_f08", "cg", ("--prepost",)), ("pcg_f08", "classic", ("--node-aware",)),
            ("pcg_f08", "cg", ("--jitter", "20"))]
    for build, variant, extra in runs:
        assert result(impl, nranks, build, *args, "--variant", variant, *extra) == base, \
            (build, variant, extra)
    assert result(impl, 1, "pcg", *args, "--variant", "cg") == base


def test_cg_follows_classic_history_within_roundoff(impl, nranks):
    args = ("--grid", "40x36", "--tol", "0", "--maxiter", "25", "--history")
    classic = history(run_app(impl, nranks, "pcg", *args, "--variant", "classic"))
    cg = history(run_app(impl, nranks, "pcg_f08", *args, "--variant", "cg"))
    assert len(classic) == len(cg) == 25
    assert classic[-1] < classic[0] / 10
    assert cg == pytest.approx(classic, rel=1e-9)


@pytest.mark.parametrize("args,message", [
    (("--variant", "fast"), "--variant must be classic or cg"),
    (("--grid", "64x"), "--grid must look like 256x256"),
    (("--maxiter", "0"), "--maxiter must be an integer >= 1"),
    (("--jitter", "-3"), "--jitter must be a number of microseconds"),
    (("--procs", "3x7"), "does not match the number of ranks"),
    (("--tol",), "option --tol needs a value"),
    (("--frobnicate",), "unknown option '--frobnicate'"),
])
def test_bad_input_is_one_line_error(impl, nranks, args, message):
    for build in BUILDS:
        proc = run_app(impl, nranks, build, *args, check=False)
        assert_one_line_error(proc, "pcg", message)
