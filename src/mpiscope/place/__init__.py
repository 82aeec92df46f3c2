"""Rank placement: grid orders, placement methods, evaluation, partitioning."""
