"""Structured control flow with JAX's names (``jax.lax``): branches and loops whose
predicates may differ between the examples of a ``vmap``, differentiable in every mode.

Example:
    >>> import numpy as np
    >>> import transforms as T
    >>> from transforms import lax
    >>> T.vmap(lambda x: lax.cond(x > 0, lambda x: x, lambda x: -x, x))(np.array([-2.0, 3.0]))
    array([2., 3.])
"""

from transforms.compose import stop_gradient as stop_gradient

from ._branch import cond as cond
from ._branch import select as select
from ._branch import select_n as select_n
from ._branch import switch as switch
from ._loops import fori_loop as fori_loop
from ._loops import while_loop as while_loop
from ._scan import associative_scan as associative_scan
from ._scan import map as map
from ._scan import scan as scan

__all__ = [
    "associative_scan",
    "cond",
    "fori_loop",
    "map",
    "scan",
    "select",
    "select_n",
    "stop_gradient",
    "switch",
    "while_loop",
]
