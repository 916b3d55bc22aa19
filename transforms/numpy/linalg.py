"""``transforms.numpy.linalg``: NumPy's ``linalg``, differentiable in forward and reverse mode."""

from typing import TYPE_CHECKING, Any

import numpy as _np

from ._linalg import *  # noqa: F403
from ._linalg import __all__ as __all__

if not TYPE_CHECKING:  # checkers then report a missing name as an error, not as Any

    def __getattr__(name: str) -> Any:
        if hasattr(_np.linalg, name):
            raise AttributeError(
                f"transforms.numpy.linalg has no '{name}': numpy.linalg.{name} is not (yet) "
                "differentiable here"
            )
        raise AttributeError(f"module 'transforms.numpy.linalg' has no attribute '{name}'")
