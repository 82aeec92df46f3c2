"""Proven lower bounds on the off-node messages of a stencil, for any order."""
