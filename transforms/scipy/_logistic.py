"""The logistic family and the softmax family, differentiable.

``expit``, ``logit`` and ``log_expit`` are SciPy's ufuncs with derivatives that stay accurate
in both tails: ``expit' = expit(x) expit(-x)`` (not ``ans (1 - ans)``, which is 0 once
``expit(x)`` rounds to 1), ``log_expit' = expit(-x)``. ``softplus`` is SciPy's formula,
``logaddexp(0, x)``.

``logsumexp``, ``softmax`` and ``log_softmax`` are ``transforms.numpy``'s composites (one
implementation, shared with ``transforms.nn``): see ``transforms.numpy.logsumexp``.
"""

from __future__ import annotations

from collections.abc import Callable

import scipy.special as sp

import transforms.numpy as tnp
from transforms.extend import unary
from transforms.numpy._reductions import log_softmax as log_softmax
from transforms.numpy._reductions import logsumexp as logsumexp
from transforms.numpy._reductions import softmax as softmax
from transforms.typing import Array, ArrayLike

from ._doc import special_doc

__all__ = [
    "expit",
    "log_expit",
    "log_softmax",
    "logit",
    "logsumexp",
    "softmax",
    "softplus",
]


expit: Callable[[ArrayLike], Array]

expit_p, expit = unary(
    "expit",
    sp.expit,
    lambda ans, x: ans * expit(-x),
    doc=special_doc("expit", "``expit(x) * expit(-x)``, accurate in both tails"),
)
logit_p, logit = unary(
    "logit",
    sp.logit,
    lambda ans, x: 1 / (x * (1 - x)),
    doc=special_doc("logit", "``1 / (x (1 - x))``"),
)
log_expit_p, log_expit = unary(
    "log_expit",
    sp.log_expit,
    lambda ans, x: expit(-x),
    doc=special_doc("log_expit", "``expit(-x)``"),
)


def softplus(x: ArrayLike) -> Array:
    """Differentiable ``scipy.special.softplus``, ``log(1 + exp(x))``: SciPy's formula,
    ``logaddexp(0, x)`` (a composite), with derivative ``expit(x)``."""
    return tnp.logaddexp(0, x)
