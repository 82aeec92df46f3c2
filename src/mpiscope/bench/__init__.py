"""Microbenchmarks of the machine: drivers, results, plots."""
