"""Benchmarks of transforms against plain NumPy and (if installed) HIPS/autograd.

Run ``python -m benchmarks`` from the repository root; see ``benchmarks/README.md``.
This package must not import NumPy at import time: the runner (``__main__``) pins BLAS and
OpenMP to one thread before NumPy is loaded.
"""
