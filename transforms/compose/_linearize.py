"""``linearize``: evaluate ``fun`` once, then apply its Jacobian to any number of tangents.

The forward pass is recorded once (reverse mode); the returned function applies the
transpose of the pullback, obtained by reverse-differentiating the (linear) pullback with
respect to its cotangent. That transposed graph is built on the first call and reused, so
each further call is one pass over it and ``fun`` never runs again.

The pullback is traced once, at a zero cotangent: exact only if it is linear in the
cotangent, which every built-in rule is but a user's ``custom_vjp`` bwd may not be (a
convergence loop on the cotangent would record the iteration count of the zero cotangent).
So the transposing trace is marked ``transposing`` (``core.Trace``): control flow on the
cotangent is refused with ``ConcretizationTypeError``, as ``jvp`` refuses it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, TypeVarTuple

import transforms.numpy as tnp
from transforms.core import Tracer, Transposing
from transforms.core.tree_util import tree_flatten

from ._core_transforms import FlatPullback, vjp_flat

__all__ = ["linearize"]

Ts = TypeVarTuple("Ts")
Out = TypeVar("Out")


_TRANSPOSING = Transposing(
    "linearize transposes the reverse-mode derivative of its function, custom_vjp bwd "
    "rules included",
    "cotangent",
    "use T.custom_root for a root or fixed point, T.custom_linear_solve for a linear solve "
    "(exact in every mode); or differentiate in reverse mode (grad, vjp), which runs bwd as "
    "written",
)


class _LinearizedJVP(Generic[Out, *Ts]):
    """``t -> J t`` at the point where ``linearize`` evaluated ``fun``."""

    def __init__(self, pullback: FlatPullback, out: Any) -> None:
        self._pullback = pullback
        self._out = out
        self._transposed: FlatPullback | None = None
        self._lock = threading.Lock()

    def _transpose(self) -> FlatPullback:
        with self._lock:
            if self._transposed is None:
                zero = tnp.zeros_like  # the point does not matter: the pullback is linear
                cts = [zero(o) for o in tree_flatten(self._out)[0]]
                tree = tree_flatten(self._out)[1]
                pullback = self._pullback

                def pullback_of(*c: Any) -> Any:
                    if c and isinstance(c[0], Tracer):
                        c[0]._trace.transposing = _TRANSPOSING
                    return pullback(tree.unflatten(c))

                _, transposed, _ = vjp_flat(pullback_of, cts, False, "linearize")
                self._transposed = transposed
            return self._transposed

    def __call__(self, *tangents: *Ts) -> Out:
        primals = self._pullback.primals
        flat_t, _ = tree_flatten(tangents)
        if len(flat_t) != len(primals):
            raise TypeError(
                f"linearize: the linear function takes {len(primals)} tangent leaves "
                f"(one per primal), got {len(flat_t)}"
            )
        cts = self._transpose()(tuple(tangents))
        out_tree = tree_flatten(self._out)[1]
        out: Out = out_tree.unflatten(cts)
        return out


def linearize(fun: Callable[[*Ts], Out], *primals: *Ts) -> tuple[Out, Callable[[*Ts], Out]]:
    """``fun``'s value at ``primals`` and its linearisation ``t -> J t`` there (JAX's API).

    ``fun`` runs exactly once; the returned function takes one tangent per primal (each of
    its primal's type) and returns the output's tangent (of the output's type). It can be
    called many times, is linear, and is itself differentiable.

    Example:
        >>> import numpy as np
        >>> import transforms as T
        >>> import transforms.numpy as tnp
        >>> out, f_jvp = T.linearize(tnp.sin, np.array([0.0, 1.0]))
        >>> f_jvp(np.ones(2))  # cos(x) * 1
        array([1.        , 0.54030231])
        >>> f_jvp(np.array([2.0, 0.0]))  # linear: no new evaluation of sin
        array([2., 0.])
    """
    out, pullback, _ = vjp_flat(fun, primals, False, "linearize")
    return out, _LinearizedJVP[Out, *Ts](pullback, out)
