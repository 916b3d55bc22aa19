"""The user-facing transforms, built by nesting the interpreters."""

from . import _taylor  # noqa: F401  (registers the custom primitives' Taylor rules)
from ._api import Pullback as Pullback
from ._api import grad as grad
from ._api import hvp as hvp
from ._api import jvp as jvp
from ._api import value_and_grad as value_and_grad
from ._api import vjp as vjp
from ._check import check_grads as check_grads
from ._checkpoint import checkpoint as checkpoint
from ._custom import custom_jvp as custom_jvp
from ._custom import custom_vjp as custom_vjp
from ._custom import stop_gradient as stop_gradient
from ._implicit import custom_linear_solve as custom_linear_solve
from ._implicit import custom_root as custom_root
from ._jacobian import hessian as hessian
from ._jacobian import jacfwd as jacfwd
from ._jacobian import jacrev as jacrev
from ._laplacian import hessian_diag as hessian_diag
from ._laplacian import hessian_trace as hessian_trace
from ._laplacian import laplacian as laplacian
from ._linearize import linearize as linearize
from ._make_trace import Program as Program
from ._make_trace import make_trace as make_trace
from ._sparse import SparseMatrix as SparseMatrix
from ._sparse import hessian_sparsity as hessian_sparsity
from ._sparse import jacobian_sparsity as jacobian_sparsity
from ._sparse import sparse_hessian as sparse_hessian
from ._sparse import sparse_jacobian as sparse_jacobian
from ._vmap import vmap as vmap

__all__ = [
    "check_grads",
    "checkpoint",
    "custom_jvp",
    "custom_linear_solve",
    "custom_root",
    "custom_vjp",
    "grad",
    "hessian",
    "hessian_diag",
    "hessian_trace",
    "hessian_sparsity",
    "hvp",
    "jacfwd",
    "jacobian_sparsity",
    "jacrev",
    "jvp",
    "laplacian",
    "linearize",
    "make_trace",
    "Program",
    "Pullback",
    "SparseMatrix",
    "sparse_hessian",
    "sparse_jacobian",
    "stop_gradient",
    "value_and_grad",
    "vjp",
]
