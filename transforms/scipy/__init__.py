"""``transforms.scipy``: SciPy's names, differentiable in every mode and nesting.

Needs SciPy, the ``scipy`` extra (``pip install "transforms[scipy]"``); ``import transforms``
does not import it. Replace ``import scipy.special`` by ``import transforms.scipy.special``
(and autograd's ``autograd.scipy.misc.logsumexp`` by ``transforms.scipy.misc.logsumexp``) in
code to be transformed.
"""

try:
    import scipy as _scipy
except ImportError as _error:
    raise ImportError(
        "transforms.scipy needs SciPy, which is not installed: install the 'scipy' extra, "
        'pip install "transforms[scipy]" (or pip install scipy)'
    ) from _error

# (no __all__ here: with one, pyright 1.1.414 loses special's __all__, built from its families')
from . import integrate as integrate
from . import linalg as linalg
from . import misc as misc
from . import signal as signal
from . import special as special

del _scipy
