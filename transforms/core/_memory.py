"""glibc's malloc and the large intermediates of a transform.

glibc's malloc hands blocks above an adaptive threshold (128 KiB at start) back to the
system when they are freed, and trims the top of its heap beyond twice that, so a process
whose large arrays come and go faults their pages in again on every call: on the MLP
benchmark (3 MB of weights and data) the faults cost as much as the forward pass, and on a
200 x 200 ``jacfwd`` (320 KB intermediates) 124 faults per call, a fifth of its time.
Freeing one block just under glibc's cap (32 MiB) raises both thresholds for the process,
as any NumPy program that frees a 32 MB array does. ``prime_allocator`` does that once, when
the first transform starts; elsewhere than glibc it is one harmless allocation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["prime_allocator"]

_primed = False


def prime_allocator() -> None:
    """Raise glibc's mmap and trim thresholds for the process (once; cheap after)."""
    global _primed
    if _primed:
        return
    _primed = True
    block = np.empty((31 << 20) // 8)  # untouched: mapped and unmapped, never faulted in
    del block
