"""Rank order files for every launcher, and applying them to a launch command."""
