"""Op-spec rows of ``transforms.nn`` (joined into ``OP_SPECS`` by ``op_specs.py``); ``covers``
names them ``nn.<name>``.

Inputs stay off the kinks, where finite differences cannot see JAX's one-sided choices (those
are checked by value against ``jax.nn`` in ``test_nn.py``): ``NONZERO`` around 0 (``relu``,
``elu``, ``leaky_relu``, ``soft_sign``), shifted rows on both sides of ``relu6``'s 6 and of
``hard_tanh``'s +-1 and ``hard_sigmoid``'s +-3.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st
from op_specs import OpSpec
from specs_elementwise import OPEN_UNIT
from strategies import (
    DISTINCT,
    NONZERO,
    REAL,
    Domain,
    Shape,
    axes_arg,
    mutually_broadcastable,
    shapes,
    single,
)

import transforms.nn as nn
import transforms.numpy as tnp

Params = dict[str, Any]

BEYOND_ONE = Domain("beyond_one", 1.1, 2.5, signed=True)  # hard_tanh's flat parts
BEYOND_THREE = Domain("beyond_three", 3.1, 4.0, signed=True)  # hard_sigmoid's flat parts


def _nn(
    name: str,
    fn: Callable[..., Any],
    domain: Domain | tuple[Domain, ...] = REAL,
    shapes_: st.SearchStrategy[tuple[Shape, ...]] | None = None,
    **kw: Any,
) -> OpSpec:
    """A row named ``nn.<name>`` (a suffix after ``:`` names a variant)."""
    kw.setdefault("covers", (f"nn.{name.partition(':')[0]}",))
    return OpSpec(f"nn.{name}", fn, single() if shapes_ is None else shapes_, domain=domain, **kw)


def _axis(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    return st.fixed_dictionaries({"axis": axes_arg(len(arg_shapes[0]))})


def _where(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    """A mask over the last axis that keeps its first entry (every group has one entry)."""
    shape = arg_shapes[0]

    def mask(bits: list[bool]) -> np.ndarray:
        m = np.array(bits, dtype=bool).reshape(shape)
        m[..., 0] = True
        return m

    size = int(np.prod(shape))
    return st.lists(st.booleans(), min_size=size, max_size=size).map(lambda b: {"where": mask(b)})


def _where_two(arg_shapes: tuple[Shape, ...]) -> st.SearchStrategy[Params]:
    """A mask over the last axis that keeps its first two entries (a variance per group)."""
    shape = arg_shapes[0]

    def mask(bits: list[bool]) -> np.ndarray:
        m = np.array(bits, dtype=bool).reshape(shape)
        m[..., :2] = True
        return m

    size = int(np.prod(shape))
    return st.lists(st.booleans(), min_size=size, max_size=size).map(lambda b: {"where": mask(b)})


def _even_last_axis() -> st.SearchStrategy[tuple[Shape, ...]]:
    return shapes(min_dims=1, min_side=1).map(lambda s: (s[:-1] + (2 * s[-1],),))


def _last_axis_of_two() -> st.SearchStrategy[tuple[Shape, ...]]:
    """A last axis of at least 2 distinct values: a positive variance."""
    return shapes(min_dims=1, min_side=2).map(lambda s: (s,))


def _masked_log_softmax(x: Any, where: Any) -> Any:
    """The masked-out entries (``-inf``, a constant) replaced by 0: a finite output."""
    return tnp.where(where, nn.log_softmax(x, where=where), 0.0)


SPECS: tuple[OpSpec, ...] = (
    _nn("relu", nn.relu, NONZERO),
    _nn("relu6", nn.relu6, NONZERO),
    _nn("relu6:near_six", lambda x: nn.relu6(x + 6.0), NONZERO),
    _nn("sigmoid", nn.sigmoid),
    _nn("log_sigmoid", nn.log_sigmoid),
    _nn("silu", nn.silu),
    _nn("swish", nn.swish),
    _nn("softplus", nn.softplus),
    _nn("elu", nn.elu, NONZERO),
    _nn("elu:alpha", lambda x: nn.elu(x, 0.5), NONZERO),
    _nn("selu", nn.selu, NONZERO),
    _nn("celu", lambda x: nn.celu(x, 1.5), NONZERO),
    _nn("leaky_relu", nn.leaky_relu, NONZERO),
    _nn("hard_tanh", nn.hard_tanh, OPEN_UNIT),
    _nn("hard_tanh:flat", nn.hard_tanh, BEYOND_ONE),
    _nn("hard_sigmoid", nn.hard_sigmoid),
    _nn("hard_sigmoid:flat", nn.hard_sigmoid, BEYOND_THREE),
    _nn("hard_silu", nn.hard_silu),
    _nn("hard_silu:flat", nn.hard_silu, BEYOND_THREE),
    _nn("hard_swish", nn.hard_swish),
    _nn("soft_sign", nn.soft_sign, NONZERO),
    _nn("gelu", nn.gelu),
    _nn("gelu:exact", lambda x: nn.gelu(x, approximate=False)),
    _nn("glu", nn.glu, shapes_=_even_last_axis()),
    _nn("softmax", nn.softmax, shapes_=single(min_dims=1, min_side=1)),
    _nn("softmax:axis", nn.softmax, shapes_=single(min_side=1), params=_axis),
    _nn(
        "softmax:where",
        lambda x, where: nn.softmax(x, where=where),
        shapes_=single(min_dims=1, min_side=1),
        params=_where,
    ),
    _nn("log_softmax", nn.log_softmax, shapes_=single(min_dims=1, min_side=1)),
    _nn("log_softmax:axis", nn.log_softmax, shapes_=single(min_side=1), params=_axis),
    _nn(
        "log_softmax:where",
        _masked_log_softmax,
        shapes_=single(min_dims=1, min_side=1),
        params=_where,
    ),
    _nn("logsumexp", nn.logsumexp, shapes_=single(min_side=1), params=_axis),
    # epsilon = 0.5: a close pair of values has a tiny variance, where finite differences of
    # (x - mean) / sqrt(variance + 1e-5) lose their accuracy
    _nn("standardize", lambda x: nn.standardize(x, epsilon=0.5), DISTINCT, _last_axis_of_two()),
    _nn(
        "standardize:stable",
        lambda x: nn.standardize(x, epsilon=0.5, algorithm="stable"),
        DISTINCT,
        _last_axis_of_two(),
    ),
    _nn(
        "standardize:where",
        lambda x, where: nn.standardize(x, epsilon=0.5, where=where),
        DISTINCT,
        _last_axis_of_two(),
        params=_where_two,
    ),
    _nn(
        "standardize:given",
        lambda x, m, v: nn.standardize(x, mean=m, variance=v),
        (REAL, REAL, Domain("variance", 0.5, 2.0)),
        mutually_broadcastable(3),
    ),
)

NONDIFFERENTIABLE: dict[str, int] = {"nn.one_hot": 1}
