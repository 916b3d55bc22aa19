"""``transforms.numpy.fft``: NumPy's ``fft``, differentiable in forward and reverse mode."""

from typing import TYPE_CHECKING, Any

import numpy as _np

from ._fft import *  # noqa: F403
from ._fft import __all__ as __all__

if not TYPE_CHECKING:  # checkers then report a missing name as an error, not as Any

    def __getattr__(name: str) -> Any:
        if hasattr(_np.fft, name):
            raise AttributeError(
                f"transforms.numpy.fft has no '{name}': numpy.fft.{name} is not (yet) "
                "differentiable here"
            )
        raise AttributeError(f"module 'transforms.numpy.fft' has no attribute '{name}'")
