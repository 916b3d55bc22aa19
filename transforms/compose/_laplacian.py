"""Parts of a Hessian at Taylor-mode cost: ``laplacian``, ``hessian_trace``, ``hessian_diag``.

- ``laplacian`` (and ``hessian_trace(method="exact")``) is one *collapsed* Taylor pass over
  the standard basis (``transforms/taylor/_collapsed.py``): the ``n`` first-order
  coefficients travel batched, their second-order ones as one sum. No Hessian is built and
  no Hessian-vector product taken.
- ``hessian_trace(method="hutchinson")`` is the same pass over random sign vectors.
- ``hessian_diag`` needs each direction's own second derivative, so it is ``n`` order-2 jets
  batched by ``vmap`` (not collapsed).

Each is a function of the same arguments as ``fun``, differentiating with respect to one
array argument (``argnums``), and composes with ``grad``, ``vmap`` and the other transforms.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Literal, ParamSpec, TypeVar

import numpy as np

from transforms.core import Tracer, arrays
from transforms.core.tree_util import tree_flatten, tree_unflatten
from transforms.numpy import moveaxis, reshape
from transforms.numpy._batching import identity_basis
from transforms.numpy._define import dtype_of, shape_of
from transforms.taylor import collapsed_jet, jet

from ._args import as_input, check_callable, normalize_argnums
from ._vmap import vmap_call

__all__ = ["hessian_diag", "hessian_trace", "laplacian"]

P = ParamSpec("P")
R = TypeVar("R")


def _split(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], argnums: int, name: str
) -> tuple[Callable[[Any], Any], Any]:
    """``fun`` as a function of its argument ``argnums`` alone, and that argument (checked)."""
    (num,) = normalize_argnums(argnums, len(args), name)
    x = as_input(args[num], name, f"argument {num}")
    if dtype_of(x).kind == "c":  # (as JAX's jacfwd and hessian without holomorphic=True)
        raise TypeError(
            f"{name} requires real-valued inputs, but argument {num} has dtype {dtype_of(x)}: "
            "the second derivatives of a function of a complex argument along real "
            "directions are not its Laplacian; differentiate the real and imaginary parts "
            "as two real arguments"
        )

    def of_x(value: Any) -> Any:
        full = list(args)
        full[num] = value
        return fun(*full, **kwargs)

    return of_x, x


def _basis(x: Any) -> np.ndarray[Any, Any]:
    """The standard basis of ``x``'s space, ``(x.size, *x.shape)``: for a vector, the
    registered identity (``identity_basis``), so that ``x @ W`` takes no product for its
    first coefficients (they are ``W``'s rows, as for ``jacfwd``)."""
    shape = shape_of(x)
    size = math.prod(shape)
    if len(shape) == 1:
        return identity_basis(size, dtype_of(x))
    return np.eye(size, dtype=dtype_of(x)).reshape((size, *shape))


def _check_argnums(argnums: object, name: str) -> None:
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise TypeError(f"{name}: argnums must be one int (one array argument), got {argnums!r}")


def laplacian(fun: Callable[P, R], argnums: int = 0) -> Callable[P, R]:
    """The Laplacian of ``fun`` with respect to argument ``argnums``: the sum of its
    unmixed second derivatives ``sum_i d^2 fun / dx_i^2``, the trace of its Hessian.

    One forward pass (collapsed Taylor mode): the ``n`` first derivatives travel together
    and the second ones as a single sum, so the cost is about that of ``jacfwd``, not of
    the ``n`` Hessian-vector products behind ``trace(hessian(fun))``. An array-valued
    ``fun`` gets one Laplacian per output element (the output's shape).

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda x: tnp.sum(x**3) + x[0] * x[1]  # Hessian diag(6 x)
        >>> T.laplacian(f)(np.array([1.0, 2.0, 3.0]))
        array(36.)
    """
    check_callable(fun, "laplacian")
    _check_argnums(argnums, "laplacian")

    @functools.wraps(fun)
    def lap(*args: P.args, **kwargs: P.kwargs) -> R:
        of_x, x = _split(fun, args, kwargs, argnums, "laplacian")
        return collapsed_jet(of_x, x, _basis(x), firsts=False)[2]  # type: ignore[no-any-return]

    return lap


def _signs(key: int | np.random.Generator, num_samples: int, x: Any) -> np.ndarray[Any, Any]:
    """``num_samples`` Rademacher vectors (entries +1 or -1, equally likely) like ``x``."""
    rng = key if isinstance(key, np.random.Generator) else np.random.default_rng(key)
    signs = rng.integers(0, 2, size=(num_samples, *shape_of(x))) * 2 - 1
    return signs.astype(dtype_of(x))


def hessian_trace(
    fun: Callable[P, R],
    argnums: int = 0,
    *,
    method: Literal["exact", "hutchinson"] = "exact",
    key: int | np.random.Generator | None = None,
    num_samples: int | None = None,
) -> Callable[P, R]:
    """The trace of ``fun``'s Hessian with respect to argument ``argnums``, exactly or by
    Hutchinson's estimator.

    ``method="exact"`` is ``laplacian(fun, argnums)``: ``n`` directions in one collapsed
    pass. ``method="hutchinson"`` averages ``v^T H v`` over ``num_samples`` random sign
    vectors ``v`` (Rademacher: entries +1 or -1 with equal probability, drawn from ``key``,
    an int seed or a ``numpy.random.Generator``; the same key gives the same estimate), in
    one collapsed pass of ``num_samples`` directions: cheaper than exact when
    ``num_samples < n``. The estimate is unbiased; its variance is
    ``2 (||H||_F^2 - sum_i H_ii^2) / num_samples``, the squared off-diagonal entries of the
    Hessian: it is exact for a diagonal Hessian, and its error falls as
    ``1/sqrt(num_samples)``.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda x: tnp.sum(tnp.sin(x))  # a diagonal Hessian: every estimate exact
        >>> x = np.array([0.5, 1.0, 2.0])
        >>> est = T.hessian_trace(f, method="hutchinson", key=0, num_samples=2)(x)
        >>> bool(np.isclose(est, -np.sin(x).sum()))
        True
    """
    check_callable(fun, "hessian_trace")
    _check_argnums(argnums, "hessian_trace")
    if method == "exact":
        if key is not None or num_samples is not None:
            raise ValueError(
                "hessian_trace: key and num_samples are for method='hutchinson'; the exact "
                "trace takes neither"
            )
        return laplacian(fun, argnums)
    if method != "hutchinson":
        raise ValueError(f"hessian_trace: method must be 'exact' or 'hutchinson', got {method!r}")
    if key is None:
        raise ValueError(
            "hessian_trace: method='hutchinson' needs key= (an int seed or a "
            "numpy.random.Generator): the estimate is random"
        )
    if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples < 1:
        raise ValueError(
            f"hessian_trace: num_samples must be a positive int for method='hutchinson', got "
            f"{num_samples!r}"
        )
    seed = key

    @functools.wraps(fun)
    def estimate(*args: P.args, **kwargs: P.kwargs) -> R:
        of_x, x = _split(fun, args, kwargs, argnums, "hessian_trace")
        total = collapsed_jet(of_x, x, _signs(seed, num_samples, x), firsts=False)[2]
        flat, tree = tree_flatten(total)
        means = [t / num_samples for t in flat]
        means = [m if isinstance(m, (Tracer, np.ndarray)) else np.asarray(m) for m in means]
        return tree_unflatten(tree, means)  # type: ignore[no-any-return]

    return estimate


def hessian_diag(fun: Callable[P, R], argnums: int = 0) -> Callable[P, R]:
    """The diagonal of ``fun``'s Hessian with respect to argument ``argnums``: the unmixed
    second derivatives ``d^2 fun / dx_i^2``, shaped like the argument (after the output's
    shape, for an array-valued ``fun``, as ``hessian``'s blocks are).

    ``n`` order-2 jets, one per basis direction, batched by ``vmap``: each gives one
    diagonal entry, and no mixed derivative is computed.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> f = lambda x: tnp.sum(x**3) + x[0] * x[1]
        >>> T.hessian_diag(f)(np.array([1.0, 2.0, 3.0]))
        array([ 6., 12., 18.])
    """
    check_callable(fun, "hessian_diag")
    _check_argnums(argnums, "hessian_diag")

    @functools.wraps(fun)
    def diag(*args: P.args, **kwargs: P.kwargs) -> R:
        of_x, x = _split(fun, args, kwargs, argnums, "hessian_diag")
        zeros = arrays.like(np.zeros(shape_of(x), dtype=dtype_of(x)), x)

        def second(v: Any) -> Any:
            series = jet(of_x, (x,), ([v, zeros],))[1]
            flat, tree = tree_flatten(series, is_leaf=lambda s: isinstance(s, list))
            return tree_unflatten(tree, [s[1] for s in flat])

        stacked = vmap_call(second, 0, 0, None, (_basis(x),), {})
        flat, tree = tree_flatten(stacked)
        x_shape = shape_of(x)
        return tree_unflatten(  # type: ignore[no-any-return]
            tree, [reshape(moveaxis(d, 0, -1), (*shape_of(d)[1:], *x_shape)) for d in flat]
        )

    return diag
