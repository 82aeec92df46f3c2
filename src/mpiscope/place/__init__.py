"""Rank placement: stencil patterns and evaluation here; orders/ (grid orders, searches,
partitioning), bounds/ (proven lower bounds), output/ (order files, launch commands)."""
