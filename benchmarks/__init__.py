"""Benchmarks of transforms against plain NumPy and, when installed, autograd, JAX, torch.func.

Run ``python -m benchmarks`` from the repository root; see ``benchmarks/README.md``.
Importing this package pins BLAS/OpenMP/XLA to one thread (``_env.pin_threads``) before any
submodule loads NumPy, so no module of the package may import NumPy here.
"""

from benchmarks._env import pin_threads

pin_threads()
