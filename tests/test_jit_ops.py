"""Every row of the op-spec table jitted, in every mode the row allows, against eager.

Modes: the function itself, ``grad`` of a scalarisation (reverse mode through the row's
VJP rules), ``jvp`` (forward mode), and ``vmap`` over a batch of two (where eager ``vmap``
accepts the row). Each jitted function is called twice (the recording, then a replay) and
on a second draw of the same shapes; every result equals eager to the bit.

No mode is skipped silently: a row runs every mode unless ``REFUSED`` names the row and
mode (with eager's reason); a refused mode must raise in eager code and jitted alike, and a
refused ``grad`` only for a row in ``NONDIFFERENTIABLE``. Each row asserts the modes it
checked, and ``test_every_mode_checked_every_row`` counts them over the whole table.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jit_util import assert_same_bits
from op_specs import NONDIFFERENTIABLE, OP_SPECS, OpSpec, cases

import transforms as T
import transforms.numpy as tnp
from transforms.core import current_traces


def _leaves(y: Any) -> list[Any]:
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _scalar(f: Any) -> Any:
    def g(*xs: Any) -> Any:
        total = 0.0
        for v in _leaves(f(*xs)):
            if np.issubdtype(getattr(v, "dtype", None) or np.result_type(v), np.inexact):
                total = total + tnp.sum(tnp.real(v) * 1.5)
        return total

    return g


def _modes(f: Any, args: tuple[np.ndarray, ...]) -> dict[str, tuple[Any, tuple[Any, ...]]]:
    n = len(args)
    tangents = tuple(np.full_like(a, 0.5) for a in args)
    batched = tuple(np.stack([a, a * 0.5 + 0.25]) for a in args)
    return {
        "f": (f, args),
        "grad": (T.grad(_scalar(f), argnums=tuple(range(n))), args),
        "jvp": (lambda *xs: T.jvp(f, xs, tangents), args),
        "vmap": (T.vmap(f), batched),
    }


def _same_params(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_params(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_params(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.shape(a) == np.shape(b) and np.array_equal(a, b))
    return bool(a == b)


MODES = ("f", "grad", "jvp", "vmap")

# (row, mode) -> why eager refuses it: the only modes a row may leave unchecked.
REFUSED: dict[tuple[str, str], str] = {
    ("unique", "vmap"): "the shape of its result depends on each example's values",
    ("unique:axis", "vmap"): "the shape of its result depends on each example's values",
}

# (row, mode) pairs checked against eager so far in this session (hypothesis may run a
# row's body more than once).
CHECKED: set[tuple[str, str]] = set()


def _expected_modes(spec: OpSpec) -> set[str]:
    return {mode for mode in MODES if (spec.name, mode) not in REFUSED}


def test_refusals_are_of_rows_and_modes_that_exist() -> None:
    names = {spec.name for spec in OP_SPECS}
    for (name, mode), why in REFUSED.items():
        assert name in names and mode in MODES and why
        assert mode != "f", f"{name}: every row runs as a function"
        assert mode != "grad" or name in NONDIFFERENTIABLE, f"{name}: grad must run"


@pytest.mark.parametrize("spec", OP_SPECS, ids=lambda s: s.name)
@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_row_jitted_equals_eager(spec: OpSpec, data: st.DataObject) -> None:
    first = data.draw(cases(spec), label="case")
    second = data.draw(cases(spec), label="second case")
    checked: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a row's eager warnings: compared values, not text)
        for mode, (fun, args) in _modes(first.f, first.args).items():
            jitted = T.jit(fun)
            if (spec.name, mode) in REFUSED:  # eager refuses, and so does the jitted function
                with pytest.raises(Exception) as refusal:
                    fun(*args)
                with pytest.raises(type(refusal.value)):
                    jitted(*args)
                continue
            expected = fun(*args)
            assert_same_bits(jitted(*args), expected, f"{spec.name} {mode}: recording")
            assert_same_bits(jitted(*args), expected, f"{spec.name} {mode}: replay")
            if [a.shape for a in second.args] == [a.shape for a in first.args]:
                fun2, args2 = _modes(second.f, second.args)[mode]
                if _same_params(second.params, first.params):
                    expected2 = fun2(*args2)
                    assert_same_bits(jitted(*args2), expected2, f"{spec.name} {mode}: new values")
            checked.add(mode)
            CHECKED.add((spec.name, mode))
    assert checked == _expected_modes(spec)
    assert current_traces() == ()


def test_every_mode_checked_every_row() -> None:
    """Over the whole table (after the rows above, when they all ran): each mode checked
    every row but its refusals."""
    ran = {name for name, _ in CHECKED}
    if ran != {spec.name for spec in OP_SPECS}:
        pytest.skip("a selection of rows ran (-k): counted over the whole table only")
    for mode in MODES:
        count = sum(1 for _, m in CHECKED if m == mode)
        refused = sum(1 for _, m in REFUSED if m == mode)
        assert count == len(OP_SPECS) - refused, f"{mode}: {count} rows checked"
