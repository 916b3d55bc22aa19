"""The types the checkers see agree with the values at run time, and tools see the types.

``tests/typing/researcher.py`` is run with ``assert_type`` replaced by a check of the value
against the asserted type; ``.ci/run`` type-checks the same module with mypy and pyright.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import subprocess
import sys
import types
import typing
import warnings
from pathlib import Path
from typing import Any, Union

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms.core.tree_util import PyTreeDef
from transforms.numpy._linalg import QRResult, SVDResult

TYPING = Path(__file__).parent / "typing"

# NumPy's own arithmetic on a 0-d array (``0.9 * np.array(0.1)``, in a tree_map over the
# parameters) returns a NumPy scalar too, which NumPy's stubs type as an ndarray: not ours.
NUMPY_SCALARS = {
    "assert_type(sgd(params, g_params, 0.1), Params)",
    "assert_type(T.tree_util.tree_map(lambda p: 0.9 * p, params), Params)",
}


def _matches(value: object, tp: Any) -> bool:
    """Whether ``value`` is an instance of the annotation ``tp`` (the forms the module uses)."""
    if tp is Any:
        return True
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        return any(_matches(value, a) for a in args)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(v, args[0]) for v in value)
        return len(value) == len(args) and all(map(_matches, value, args))
    if origin is np.ndarray:
        (scalar,) = typing.get_args(args[1]) or (Any,)
        return isinstance(value, np.ndarray) and (scalar is Any or value.dtype.type is scalar)
    if typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        return (
            isinstance(value, dict)
            and set(value) == set(hints)
            and all(_matches(value[k], t) for k, t in hints.items())
        )
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return isinstance(value, tp) and all(
            _matches(getattr(value, k), t) for k, t in hints.items()
        )
    return isinstance(value, origin or tp)


def _run_checked(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Run the module at ``path``; the source lines whose asserted type the value does not have."""
    lines = path.read_text().splitlines()
    wrong: list[str] = []

    def assert_type(value: object, tp: Any) -> object:
        line = lines[sys._getframe(1).f_lineno - 1].strip()
        if not _matches(value, tp):
            wrong.append(line)
        return value

    monkeypatch.setattr(typing, "assert_type", assert_type)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)
    spec.loader.exec_module(module)
    return wrong


def test_researcher_module_values_have_their_asserted_types(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wrong = _run_checked(TYPING / "researcher.py", monkeypatch)
    assert set(wrong) == NUMPY_SCALARS


def test_runtime_checker_rejects_a_wrong_type() -> None:
    assert not _matches(np.float64(1.0), T.Array)
    assert not _matches((np.ones(2),), tuple[T.Array, T.Array])
    assert _matches(np.ones(2), T.Array) and _matches(np.ones(2, np.float32), T.Array)
    assert not _matches(np.ones(2, np.float32), np.ndarray[Any, np.dtype[np.float64]])


@pytest.mark.parametrize(
    "name", ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "jvp", "vjp"]
)
def test_help_shows_the_typed_signature(name: str) -> None:
    fun = getattr(T, name)
    signature = str(inspect.signature(fun))
    assert "Any" not in signature and "Callable[...," not in signature
    assert inspect.signature(fun) == inspect.signature(
        next(o for o in typing.get_overloads(fun) if inspect.signature(o) == inspect.signature(fun))
    )
    assert len(typing.get_overloads(fun)) >= 2


def test_grad_signature_is_the_argument_preserving_form() -> None:
    signature = inspect.signature(T.grad)
    assert signature.return_annotation == "Callable[Concatenate[A0, P], A0]"
    assert list(signature.parameters) == ["fun", "argnums", "has_aux", "holomorphic"]
    assert "Concatenate[A0, P]" in str(signature.parameters["fun"].annotation)


def test_generated_overloads_are_current() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.overloads", "--check"],
        cwd=Path(__file__).parent.parent,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_grads_takes_one_mode_or_several() -> None:
    x = (np.array([0.3, 1.2]),)
    T.check_grads(tnp.sin, x, order=2, modes="rev")
    T.check_grads(tnp.sin, x, order=2, modes=["fwd"])
    with pytest.raises(AssertionError):
        T.check_grads(lambda x: tnp.sin(T.stop_gradient(x)) + x, x, order=1, modes="rev")
    with pytest.raises(ValueError, match="unknown mode"):
        T.check_grads(tnp.sin, x, modes="reverse")  # type: ignore[arg-type]


@dataclasses.dataclass(frozen=True)
class _Pair:
    a: T.Array
    b: T.Array


T.tree_util.register_pytree_node(_Pair, lambda p: ((p.a, p.b), None), lambda _, c: _Pair(*c))


def test_stop_gradient_of_a_pytree_stops_every_leaf() -> None:
    def f(p: _Pair) -> T.Array:
        frozen = T.stop_gradient(p)
        return tnp.sum(frozen.a * p.a + frozen.b * p.b) + tnp.sum(frozen.a**2)

    p = _Pair(np.array([1.0, 2.0]), np.array(3.0))
    g = T.grad(f)(p)
    assert isinstance(g, _Pair)
    np.testing.assert_allclose(g.a, p.a)  # d/da (a0 * a) = a0; the frozen square adds 0
    np.testing.assert_allclose(g.b, 2 * p.b)  # b is broadcast over the two entries of a
    np.testing.assert_allclose(T.jvp(f, (p,), (p,))[1], np.sum(p.a**2) + 2 * p.b**2)
    assert T.stop_gradient({"x": p.a})["x"] is p.a


def test_aux_and_hvp_values_are_arrays() -> None:
    x = np.array([1.0, 2.0])
    _, aux = T.grad(lambda x: (tnp.sum(x**2), {"max": tnp.max(x)}), has_aux=True)(x)
    assert isinstance(aux["max"], np.ndarray) and aux["max"].shape == () and aux["max"] == 2.0
    value, (hv,) = T.hvp(lambda x: tnp.sum(x**3), (x,), (np.ones(2),))
    assert isinstance(value, np.ndarray) and value == 9.0
    np.testing.assert_allclose(hv, 6 * x)


def test_plain_svd_and_qr_give_the_named_results() -> None:
    a = np.random.default_rng(0).standard_normal((4, 3))
    full = tnp.linalg.svd(a)  # full_matrices on a non-square array: NumPy computes it
    assert isinstance(full, SVDResult) and full.U.shape == (4, 4)
    np.testing.assert_allclose(full.S, np.linalg.svd(a).S)
    complete = tnp.linalg.qr(a, mode="complete")
    assert isinstance(complete, QRResult) and complete.Q.shape == (4, 4)
    np.testing.assert_allclose(complete.Q @ complete.R, a, atol=1e-12)
    assert isinstance(T.tree_util.tree_structure(full), PyTreeDef)


def _public_functions() -> list[tuple[str, Any]]:
    import transforms.nn as nn
    import transforms.scipy.special as special

    namespaces = {
        "tnp": tnp,
        "tnp.linalg": tnp.linalg,
        "tnp.fft": tnp.fft,
        "special": special,
        "nn": nn,
    }
    return [
        (f"{prefix}.{name}", fun)
        for prefix, module in namespaces.items()
        for name in sorted(getattr(module, "__all__", dir(module)))
        if not name.startswith("_")
        and callable(fun := getattr(module, name))
        and not inspect.isclass(fun)
        and not inspect.ismodule(fun)
    ]


def _scalar_leaves(out: object) -> list[str]:
    leaves = out if isinstance(out, tuple) else (out,)
    return [type(o).__name__ for o in leaves if isinstance(o, np.generic)]


def test_functions_on_plain_values_return_arrays_never_numpy_scalars() -> None:
    # The declared result is ``Array`` (an ndarray or a tracer): a reduction to a scalar, a
    # function of a 0-d array or of a Python number, gives a 0-d ndarray, as under a
    # transform. Each function is called with a few operands and no other argument; those
    # that need more (or reject all of these) raise and are skipped, but most answer.
    operands = (np.array([0.25, 0.5, 0.75]), np.eye(2) + 0.5, np.array(0.5), 0.5, 3)
    scalars: dict[str, list[str]] = {}
    answered = 0
    for name, fun in _public_functions():
        for x in operands:
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = fun(x)
            except Exception:
                continue
            answered += 1
            if found := _scalar_leaves(out):
                scalars.setdefault(name, []).extend(found)
    assert scalars == {}
    assert answered > 500
