"""``transforms.numpy.fft``: NumPy's ``fft``, differentiable in forward and reverse mode."""

from typing import TYPE_CHECKING

import numpy as _np

from ._define import HOW_TO_ADD as _HOW_TO_ADD
from ._define import missing_names as _missing_names
from ._fft import *  # noqa: F403
from ._fft import __all__ as __all__

if not TYPE_CHECKING:  # checkers then report a missing name as an error, not as Any
    __getattr__ = _missing_names("transforms.numpy.fft", _np.fft, _HOW_TO_ADD)
