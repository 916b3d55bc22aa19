"""``transforms.scipy.special``: ``scipy.special``'s names, differentiable in every mode and
nesting (``import transforms.scipy.special as tsp`` in place of ``scipy.special``).

Each family module lists its public functions in its ``__all__``; this namespace is their
union. SciPy's own ufuncs called on a traced value (``scipy.special.expit(x)``) dispatch to
the functions here; a ``scipy.special`` function that has no differentiable version here
raises an error that says so. A name SciPy has and this namespace does not fails at
attribute access, never silently.
"""

import sys as _sys
from typing import TYPE_CHECKING

import scipy.special as _sp

from transforms.extend import register_twins as _register_twins
from transforms.numpy._define import missing_names as _missing_names

from . import _bessel, _convenience, _erf, _gamma, _logistic
from ._bessel import *  # noqa: F403
from ._convenience import *  # noqa: F403
from ._erf import *  # noqa: F403
from ._gamma import *  # noqa: F403
from ._logistic import *  # noqa: F403

__all__: list[str] = []
__all__ += _bessel.__all__
__all__ += _convenience.__all__
__all__ += _erf.__all__
__all__ += _gamma.__all__
__all__ += _logistic.__all__


if not TYPE_CHECKING:  # checkers then report a missing name as an error, not as Any
    __getattr__ = _missing_names(
        "transforms.scipy.special", _sp, "file an issue, or define it with transforms.extend"
    )


_register_twins(_sys.modules[__name__], _sp, "SciPy")
