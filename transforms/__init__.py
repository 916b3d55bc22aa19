"""transforms: composable function transformations (jvp, vjp, grad, jacobians) for NumPy code.

Example:
    >>> import numpy as np
    >>> import transforms as T
    >>> import transforms.numpy as tnp
    >>> T.grad(lambda x: tnp.sum(tnp.sin(x)))(np.zeros(2))
    array([1., 1.])
"""

from . import flatten_util as flatten_util
from . import lax as lax
from . import numpy as numpy
from . import tree_util as tree_util
from .compose import Program as Program
from .compose import Pullback as Pullback
from .compose import SparseMatrix as SparseMatrix
from .compose import check_grads as check_grads
from .compose import checkpoint as checkpoint
from .compose import custom_jvp as custom_jvp
from .compose import custom_linear_solve as custom_linear_solve
from .compose import custom_root as custom_root
from .compose import custom_vjp as custom_vjp
from .compose import grad as grad
from .compose import hessian as hessian
from .compose import hessian_diag as hessian_diag
from .compose import hessian_sparsity as hessian_sparsity
from .compose import hessian_trace as hessian_trace
from .compose import hvp as hvp
from .compose import jacfwd as jacfwd
from .compose import jacobian_sparsity as jacobian_sparsity
from .compose import jacrev as jacrev
from .compose import jvp as jvp
from .compose import laplacian as laplacian
from .compose import linearize as linearize
from .compose import make_trace as make_trace
from .compose import sparse_hessian as sparse_hessian
from .compose import sparse_jacobian as sparse_jacobian
from .compose import stop_gradient as stop_gradient
from .compose import value_and_grad as value_and_grad
from .compose import vjp as vjp
from .compose import vmap as vmap
from .core import ArrayLibraryError as ArrayLibraryError
from .core import ConcretizationTypeError as ConcretizationTypeError
from .core import DerivativeDroppedError as DerivativeDroppedError
from .core import EscapedTracerError as EscapedTracerError
from .core import NoRuleError as NoRuleError
from .core import Primitive as Primitive
from .core import TraceMixError as TraceMixError
from .core import TracerBoolConversionError as TracerBoolConversionError
from .core import TransformsError as TransformsError
from .core import UnexpectedTracerError as UnexpectedTracerError
from .numpy._user import defbatch as defbatch
from .numpy._user import defjvp as defjvp
from .numpy._user import defvjp as defvjp
from .numpy._user import primitive as primitive
from .staging import JitWarning as JitWarning
from .staging import jit as jit
from .taylor import derivative as derivative
from .taylor import derivatives as derivatives
from .taylor import directional_derivatives as directional_derivatives
from .taylor import jet as jet
from .typing import Array as Array
from .typing import ArrayLike as ArrayLike

__all__ = [
    "Array",
    "ArrayLibraryError",
    "ArrayLike",
    "check_grads",
    "checkpoint",
    "ConcretizationTypeError",
    "custom_jvp",
    "custom_linear_solve",
    "custom_root",
    "custom_vjp",
    "defbatch",
    "defjvp",
    "defvjp",
    "derivative",
    "derivatives",
    "directional_derivatives",
    "DerivativeDroppedError",
    "EscapedTracerError",
    "flatten_util",
    "grad",
    "hessian",
    "hessian_diag",
    "hessian_trace",
    "hessian_sparsity",
    "hvp",
    "jacfwd",
    "jacobian_sparsity",
    "jacrev",
    "jet",
    "jit",
    "JitWarning",
    "jvp",
    "lax",
    "laplacian",
    "linearize",
    "make_trace",
    "NoRuleError",
    "numpy",
    "primitive",
    "Primitive",
    "Program",
    "Pullback",
    "SparseMatrix",
    "sparse_hessian",
    "sparse_jacobian",
    "stop_gradient",
    "TraceMixError",
    "TracerBoolConversionError",
    "TransformsError",
    "UnexpectedTracerError",
    "tree_util",
    "value_and_grad",
    "vjp",
    "vmap",
]
