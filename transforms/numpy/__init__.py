"""``transforms.numpy``: NumPy's names, differentiable in every mode and nesting.

Replace ``import numpy as np`` by ``import transforms.numpy as tnp`` in code to be
transformed. Constants and dtypes (``tnp.pi``, ``tnp.float32``, ``tnp.newaxis``) and
constructors that take no array input (``tnp.zeros``, ``tnp.eye``) are NumPy's own objects.
A NumPy function not yet differentiable here fails at attribute access, never silently.

Each family module lists its public functions in its ``__all__``; this namespace is their
union, so adding a function touches only its family module.
"""

import sys as _sys
from typing import TYPE_CHECKING

import numpy as _np

from numpy import random as random

from . import (
    _apply,
    _arithmetic,
    _constants,
    _construct,
    _elementwise,
    _extras,
    _indexing,
    _nondiff,
    _products,
    _quantiles,
    _reductions,
    _scans,
    _shape,
    fft,
    linalg,
)
from . import _taylor  # noqa: F401  (registers the Taylor rules of the hand-written primitives)
from ._apply import *  # noqa: F403
from ._arithmetic import *  # noqa: F403
from ._constants import *  # noqa: F403
from ._construct import *  # noqa: F403
from ._elementwise import *  # noqa: F403
from ._extras import *  # noqa: F403
from ._indexing import *  # noqa: F403
from ._define import HOW_TO_ADD as _HOW_TO_ADD
from ._define import missing_names as _missing_names
from ._install import install as _install
from ._nondiff import *  # noqa: F403
from ._products import *  # noqa: F403
from ._quantiles import *  # noqa: F403
from ._reductions import *  # noqa: F403
from ._scans import *  # noqa: F403
from ._shape import *  # noqa: F403

__all__: list[str] = []
__all__ += _apply.__all__
__all__ += _arithmetic.__all__
__all__ += _constants.__all__
__all__ += _construct.__all__
__all__ += _elementwise.__all__
__all__ += _extras.__all__
__all__ += _indexing.__all__
__all__ += _nondiff.__all__
__all__ += _products.__all__
__all__ += _quantiles.__all__
__all__ += _reductions.__all__
__all__ += _scans.__all__
__all__ += _shape.__all__
__all__ += ["fft", "linalg", "random"]


if not TYPE_CHECKING:  # checkers then report a missing name as an error, not as Any
    __getattr__ = _missing_names("transforms.numpy", _np, _HOW_TO_ADD)


_install(_sys.modules[__name__])
