"""Exports of a profile for other tools (docs/python.md, ``mpiscope export``).

- :mod:`.frames`: pandas DataFrames of the profile's records (``Profile.to_pandas``);
- :mod:`.csv_files`: tidy CSV rows plus a peers file;
- :mod:`.hatchet`: a file LLNL Hatchet reads as a GraphFrame (regions as the tree,
  MPI functions as leaves, one row per rank);
- :mod:`.json_doc`: the same frames as one JSON document;
- :mod:`.cli`: ``mpiscope export``.
"""
