"""Orders in which to visit the points of a d-dimensional box.

Each function takes the box's extents and the dimensions from fastest to
slowest, and returns an (n, d) int64 array of coordinates in visiting order:

* ``z_order``: plain mixed-radix counting (grid_order's -Z).
* ``serpentine``: the fastest dimension reverses direction on alternate rows,
  recursively for higher dimensions, so successive points stay adjacent
  (grid_order's -P).
* ``hilbert``: the Hilbert curve of the smallest power-of-two cube holding the
  box, restricted to the box (grid_order's -H). Inside a power-of-two cube
  successive points are adjacent; in other boxes the curve may jump where it
  leaves the box.
"""

from __future__ import annotations

import numpy as np


def _digits(extents: tuple[int, ...], fast_dims: list[int]) -> np.ndarray:
    n = int(np.prod(extents, dtype=np.int64))
    out = np.empty((n, len(extents)), np.int64)
    rest = np.arange(n, dtype=np.int64)
    for dim in fast_dims:
        out[:, dim] = rest % extents[dim]
        rest //= extents[dim]
    return out


def z_order(extents: tuple[int, ...], fast_dims: list[int]) -> np.ndarray:
    """Coordinates of the box in counting order, ``fast_dims[0]`` fastest."""
    return _digits(extents, fast_dims)


def serpentine(extents: tuple[int, ...], fast_dims: list[int]) -> np.ndarray:
    """Boustrophedon order: a dimension runs backwards when the slower coordinates
    (as already reflected) sum to an odd number, so every step moves by one."""
    out = _digits(extents, fast_dims)
    slower_sum = np.zeros(len(out), np.int64)
    for dim in reversed(fast_dims):
        flip = (slower_sum & 1).astype(bool)
        out[flip, dim] = extents[dim] - 1 - out[flip, dim]
        slower_sum += out[:, dim]
    return out


def hilbert_index(coords: np.ndarray, bits: int) -> np.ndarray:
    """Hilbert-curve index of integer points of the cube [0, 2**bits)^d.

    Skilling's transpose algorithm ("Programming the Hilbert curve", AIP Conf.
    Proc. 707, 2004), vectorised over points; coords is (n, d), column 0 is
    the curve's first axis.
    """
    n, d = coords.shape
    x = [coords[:, i].astype(np.int64).copy() for i in range(d)]
    if bits == 0 or n == 0:
        return np.zeros(n, np.int64)
    q = 1 << (bits - 1)
    while q > 1:
        p = q - 1
        for i in range(d):
            high = (x[i] & q) != 0
            x[0] = np.where(high, x[0] ^ p, x[0])
            t = np.where(high, 0, (x[0] ^ x[i]) & p)
            x[0] ^= t
            x[i] ^= t
        q >>= 1
    for i in range(1, d):
        x[i] ^= x[i - 1]
    t = np.zeros(n, np.int64)
    q = 1 << (bits - 1)
    while q > 1:
        t = np.where((x[d - 1] & q) != 0, t ^ (q - 1), t)
        q >>= 1
    for i in range(d):
        x[i] ^= t
    index = np.zeros(n, np.int64)
    for b in range(bits - 1, -1, -1):
        for i in range(d):
            index = (index << 1) | ((x[i] >> b) & 1)
    return index


def hilbert(extents: tuple[int, ...], fast_dims: list[int]) -> np.ndarray:
    """Points of the box in Hilbert order (of the enclosing power-of-two cube)."""
    pts = _digits(extents, fast_dims)
    bits = max(int(e - 1).bit_length() for e in extents)
    # The curve's axes are the dimensions from slowest to fastest, so its
    # orientation follows the numbering (-C / -R) as -Z's rows do.
    key = hilbert_index(pts[:, list(reversed(fast_dims))], bits)
    return pts[np.argsort(key, kind="stable")]


CURVES = {"Z": z_order, "P": serpentine, "H": hilbert}
