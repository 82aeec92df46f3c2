"""Rank orders: Cray grid_order, band and lattice-tile orders, border refinement, MPICH reorder methods, the search over them, and graph partitioning of a measured profile."""
