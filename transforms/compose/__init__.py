"""The user-facing transforms, built by nesting the interpreters."""

from ._api import Pullback as Pullback
from ._api import grad as grad
from ._api import hvp as hvp
from ._api import jvp as jvp
from ._api import value_and_grad as value_and_grad
from ._api import vjp as vjp
from ._check import check_grads as check_grads
from ._jacobian import hessian as hessian
from ._jacobian import jacfwd as jacfwd
from ._jacobian import jacrev as jacrev
from ._vmap import vmap as vmap

__all__ = [
    "Pullback",
    "check_grads",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacrev",
    "jvp",
    "value_and_grad",
    "vjp",
]
