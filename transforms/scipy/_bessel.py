"""Bessel functions of real argument, differentiable in the argument.

Values are SciPy's ufuncs; derivatives in ``x`` are the recurrences, written with these same
differentiable functions, so every order works (checked against SciPy's ``jvp``/``yvp``/
``ivp``/``kvp``):

- ``J_v' = (J_{v-1} - J_{v+1}) / 2`` (so ``j0' = -j1``), the same for ``Y``;
- ``I_v' = (I_{v-1} + I_{v+1}) / 2``, ``K_v' = -(K_{v-1} + K_{v+1}) / 2``;
- the exponentially scaled ones add the scale's derivative: ``ive = iv e**-|x|`` gets
  ``-sign(x) ive`` (derivative 0 at the kink ``x == 0``, as ``|x|``), ``kve = kv e**x`` gets
  ``+kve``.

The order is not differentiated: ``jv``, ``yv``, ``iv``, ``ive``, ``kv``, ``kve`` (and ``jn``,
which is ``jv``) refuse a derivative in ``v`` (it has no closed form; JAX takes a Bessel
function's order as a static integer), and ``yn``, whose order SciPy truncates to an
integer, has derivative 0 in it.
"""

from __future__ import annotations

from collections.abc import Callable

import scipy.special as sp

import transforms.numpy as tnp
from transforms.extend import NO_DERIVATIVE, elementwise, unary
from transforms.typing import Array, ArrayLike

from ._doc import special_doc

__all__ = [
    "i0",
    "i0e",
    "i1",
    "i1e",
    "iv",
    "ive",
    "j0",
    "j1",
    "jn",
    "jv",
    "k0",
    "k0e",
    "k1",
    "k1e",
    "kv",
    "kve",
    "y0",
    "y1",
    "yn",
    "yv",
]

Unary = Callable[[ArrayLike], Array]
Binary = Callable[[ArrayLike, ArrayLike], Array]

_ORDER_REASON = (
    "the derivative of a Bessel function in its order v is not implemented (it has no "
    "closed form); differentiate with respect to x only (pass the order as a constant)"
)

i0: Unary
i1: Unary
i0e: Unary
i1e: Unary
iv: Binary
ive: Binary
k0: Unary
k1: Unary
k0e: Unary
k1e: Unary
kv: Binary
kve: Binary
j0: Unary
j1: Unary
jv: Binary
y0: Unary
y1: Unary
yv: Binary
yn: Binary

# ---- modified, first kind: I --------------------------------------------------------------------
i0_p, i0 = unary("i0", sp.i0, lambda ans, x: i1(x), doc=special_doc("i0", "``i1(x)``"))
# I_2 as ive(2, x) e**|x|: SciPy's iv(2, x) is NaN (not 0) at the smallest normal numbers
i1_p, i1 = unary(
    "i1",
    sp.i1,
    lambda ans, x: (i0(x) + ive(2, x) * tnp.exp(tnp.abs(x))) / 2,
    doc=special_doc("i1", "``(i0(x) + iv(2, x)) / 2``"),
)
iv_p, iv = elementwise(
    "iv",
    sp.iv,
    NO_DERIVATIVE,
    lambda ans, v, x: (iv(v - 1, x) + iv(v + 1, x)) / 2,
    doc=special_doc("iv", "``(iv(v-1, x) + iv(v+1, x)) / 2`` in ``x``; refused in ``v``"),
    reason=_ORDER_REASON,
)
i0e_p, i0e = unary(
    "i0e",
    sp.i0e,
    lambda ans, x: i1e(x) - tnp.sign(x) * ans,
    doc=special_doc("i0e", "``i1e(x) - sign(x) i0e(x)``"),
)
i1e_p, i1e = unary(
    "i1e",
    sp.i1e,
    lambda ans, x: (i0e(x) + ive(2, x)) / 2 - tnp.sign(x) * ans,
    doc=special_doc("i1e", "``(i0e(x) + ive(2, x)) / 2 - sign(x) i1e(x)``"),
)
ive_p, ive = elementwise(
    "ive",
    sp.ive,
    NO_DERIVATIVE,
    lambda ans, v, x: (ive(v - 1, x) + ive(v + 1, x)) / 2 - tnp.sign(x) * ans,
    doc=special_doc(
        "ive", "``(ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) ive(v, x)`` in ``x``; refused in v"
    ),
    reason=_ORDER_REASON,
)

# ---- modified, second kind: K -------------------------------------------------------------------
k0_p, k0 = unary("k0", sp.k0, lambda ans, x: -k1(x), doc=special_doc("k0", "``-k1(x)``"))
k1_p, k1 = unary(
    "k1",
    sp.k1,
    lambda ans, x: -(k0(x) + kv(2, x)) / 2,
    doc=special_doc("k1", "``-(k0(x) + kv(2, x)) / 2``"),
)
kv_p, kv = elementwise(
    "kv",
    sp.kv,
    NO_DERIVATIVE,
    lambda ans, v, x: -(kv(v - 1, x) + kv(v + 1, x)) / 2,
    doc=special_doc("kv", "``-(kv(v-1, x) + kv(v+1, x)) / 2`` in ``x``; refused in ``v``"),
    reason=_ORDER_REASON,
)
k0e_p, k0e = unary(
    "k0e",
    sp.k0e,
    lambda ans, x: ans - k1e(x),
    doc=special_doc("k0e", "``k0e(x) - k1e(x)``"),
)
k1e_p, k1e = unary(
    "k1e",
    sp.k1e,
    lambda ans, x: ans - (k0e(x) + kve(2, x)) / 2,
    doc=special_doc("k1e", "``k1e(x) - (k0e(x) + kve(2, x)) / 2``"),
)
kve_p, kve = elementwise(
    "kve",
    sp.kve,
    NO_DERIVATIVE,
    lambda ans, v, x: ans - (kve(v - 1, x) + kve(v + 1, x)) / 2,
    doc=special_doc(
        "kve", "``kve(v, x) - (kve(v-1, x) + kve(v+1, x)) / 2`` in ``x``; refused in ``v``"
    ),
    reason=_ORDER_REASON,
)

# ---- first kind: J ------------------------------------------------------------------------------
j0_p, j0 = unary("j0", sp.j0, lambda ans, x: -j1(x), doc=special_doc("j0", "``-j1(x)``"))
j1_p, j1 = unary(
    "j1",
    sp.j1,
    lambda ans, x: (j0(x) - jv(2, x)) / 2,
    doc=special_doc("j1", "``(j0(x) - jv(2, x)) / 2``"),
)
jv_p, jv = elementwise(
    "jv",
    sp.jv,
    NO_DERIVATIVE,
    lambda ans, v, x: (jv(v - 1, x) - jv(v + 1, x)) / 2,
    doc=special_doc("jv", "``(jv(v-1, x) - jv(v+1, x)) / 2`` in ``x``; refused in ``v``"),
    reason=_ORDER_REASON,
)
jn = jv  # SciPy's jn is jv

# ---- second kind: Y -----------------------------------------------------------------------------
y0_p, y0 = unary("y0", sp.y0, lambda ans, x: -y1(x), doc=special_doc("y0", "``-y1(x)``"))
y1_p, y1 = unary(
    "y1",
    sp.y1,
    lambda ans, x: (y0(x) - yv(2, x)) / 2,  # yv keeps a float32 x (SciPy's yn is float64)
    doc=special_doc("y1", "``(y0(x) - yv(2, x)) / 2``"),
)
yv_p, yv = elementwise(
    "yv",
    sp.yv,
    NO_DERIVATIVE,
    lambda ans, v, x: (yv(v - 1, x) - yv(v + 1, x)) / 2,
    doc=special_doc("yv", "``(yv(v-1, x) - yv(v+1, x)) / 2`` in ``x``; refused in ``v``"),
    reason=_ORDER_REASON,
)
yn_p, yn = elementwise(
    "yn",
    sp.yn,
    None,
    lambda ans, n, x: (yn(n - 1, x) - yn(n + 1, x)) / 2,
    doc=special_doc(
        "yn", "``(yn(n-1, x) - yn(n+1, x)) / 2`` in ``x``; 0 in the (truncated) integer order"
    ),
)
