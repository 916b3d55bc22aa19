"""Every bad input raises a clear error, and the message says what went wrong and the fix."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp
from transforms.core import Primitive, current_traces
from transforms.forward import defjvp
from transforms.reverse import defvjp


def close(actual: Any, expected: Any) -> None:
    assert np.shape(actual) == np.shape(expected)
    assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-10, atol=1e-12)


@pytest.fixture(autouse=True)
def _no_leftover_traces() -> Any:
    """Whatever a test raises, no trace may be left on this thread's stack."""
    assert current_traces() == ()
    yield
    assert current_traces() == ()


# ---------------------------------------------------------------------------------------
# grad of a non-scalar output
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("transform", [T.grad, T.value_and_grad])
def test_grad_of_vector_output(transform: Any) -> None:
    with pytest.raises(TypeError, match=r"shape \(3,\)") as info:
        transform(lambda x: x * 2.0)(np.ones(3))
    message = str(info.value)
    assert "jacrev" in message
    assert "vjp" in message


def test_grad_of_matrix_output_names_shape() -> None:
    with pytest.raises(TypeError, match=r"shape \(2, 3\).*jacrev.*vjp"):
        T.grad(lambda x: tnp.reshape(x, (2, 3)))(np.ones(6))


def test_grad_of_pytree_output() -> None:
    with pytest.raises(TypeError, match=r"tuple.*jacrev.*vjp"):
        T.grad(lambda x: (x, x))(1.0)


def test_grad_of_integer_output() -> None:
    with pytest.raises(TypeError, match=r"real floating output.*int"):
        T.grad(lambda x: tnp.sum((x > 0).astype(np.int64)))(np.ones(3))


def test_grad_of_complex_output() -> None:
    with pytest.raises(TypeError, match=r"complex.*vjp"):
        T.grad(lambda x: x * 1j)(1.0)


# ---------------------------------------------------------------------------------------
# integer and bool inputs to derivatives
# ---------------------------------------------------------------------------------------
INT_INPUTS = [
    pytest.param(3, "int", id="python_int"),
    pytest.param(np.array([1, 2], dtype=np.int32), "int32", id="int32_array"),
    pytest.param(np.array([1, 2], dtype=np.int64), "int64", id="int64_array"),
    pytest.param(np.array([True, False]), "bool", id="bool_array"),
    pytest.param(np.True_, "bool", id="numpy_bool"),
    pytest.param(True, "bool", id="python_bool"),
]


@pytest.mark.parametrize(("x", "dtype"), INT_INPUTS)
def test_grad_rejects_integer_and_bool_inputs(x: Any, dtype: str) -> None:
    with pytest.raises(TypeError, match=rf"float or complex.*dtype {dtype}"):
        T.grad(lambda v: tnp.sum(v * 1.0))(x)


@pytest.mark.parametrize(("x", "dtype"), INT_INPUTS)
def test_jvp_rejects_integer_and_bool_inputs(x: Any, dtype: str) -> None:
    with pytest.raises(TypeError, match=rf"float or complex.*dtype {dtype}"):
        T.jvp(lambda v: v * 1.0, (x,), (x,))


@pytest.mark.parametrize(("x", "dtype"), INT_INPUTS)
def test_jacfwd_rejects_integer_and_bool_inputs(x: Any, dtype: str) -> None:
    with pytest.raises(TypeError, match=rf"float or complex.*dtype {dtype}"):
        T.jacfwd(lambda v: v * 1.0)(x)


@pytest.mark.parametrize(("x", "dtype"), INT_INPUTS)
def test_jacrev_and_vjp_reject_integer_and_bool_inputs(x: Any, dtype: str) -> None:
    with pytest.raises(TypeError, match=rf"float or complex.*dtype {dtype}"):
        T.jacrev(lambda v: v * 1.0)(x)
    with pytest.raises(TypeError, match=rf"float or complex.*dtype {dtype}"):
        T.vjp(lambda v: v * 1.0, x)


@pytest.mark.parametrize("transform", [T.grad, T.value_and_grad, T.jacfwd, T.jacrev])
def test_integer_input_error_names_the_argument(transform: Any) -> None:
    # the differentiated argument is argument 1 of the user's function, not "leaf 0"
    with pytest.raises(TypeError, match=r"argument 1\b.*dtype int"):
        transform(lambda x, n: x * n, argnums=1)(2.0, 3)


def test_integer_argument_outside_argnums_is_fine() -> None:
    close(T.grad(lambda x, n: x**n)(2.0, 3), 12.0)


# ---------------------------------------------------------------------------------------
# primitives without a rule
# ---------------------------------------------------------------------------------------
only_jvp_p = Primitive("only_jvp_sin", np.sin)
defjvp(only_jvp_p, lambda t, ans, x: t * tnp.cos(x))

only_vjp_p = Primitive("only_vjp_sin", np.sin)
defvjp(only_vjp_p, lambda ans, x: lambda ct: ct * tnp.cos(x))

first_arg_only_p = Primitive("first_arg_only_mul", np.multiply)
defjvp(first_arg_only_p, lambda t, ans, x, y: t * y)
defvjp(first_arg_only_p, lambda ans, x, y: lambda ct: ct * y)


def test_primitive_with_rules_works_where_defined() -> None:
    close(T.jvp(only_jvp_p, (0.5,), (1.0,))[1], np.cos(0.5))
    close(T.grad(only_vjp_p)(0.5), np.cos(0.5))
    # hessian is reverse over reverse: a VJP rule written with tnp is differentiated again
    close(T.hessian(lambda x: tnp.sum(only_vjp_p(x)))(np.ones(2)), -np.sin(1.0) * np.eye(2))
    close(T.grad(first_arg_only_p)(2.0, 3.0), 3.0)
    close(T.jvp(lambda x: first_arg_only_p(x, 3.0), (2.0,), (1.0,))[1], 3.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: T.grad(only_jvp_p)(0.5),
        lambda: T.vjp(only_jvp_p, 0.5),
        lambda: T.jacrev(only_jvp_p)(np.ones(2)),
    ],
    ids=["grad", "vjp", "jacrev"],
)
def test_no_vjp_rule(call: Any) -> None:
    with pytest.raises(T.NoRuleError) as info:
        call()
    message = str(info.value)
    assert "only_jvp_sin" in message
    assert "vjp" in message
    assert "defvjp" in message
    assert "argument 0" in message, message


@pytest.mark.parametrize(
    "call",
    [
        lambda: T.jvp(only_vjp_p, (0.5,), (1.0,)),
        lambda: T.jacfwd(only_vjp_p)(np.ones(2)),
        lambda: T.jacfwd(T.jacrev(lambda x: tnp.sum(only_vjp_p(x))))(np.ones(2)),
    ],
    ids=["jvp", "jacfwd", "jacfwd of jacrev"],
)
def test_no_jvp_rule(call: Any) -> None:
    with pytest.raises(T.NoRuleError) as info:
        call()
    message = str(info.value)
    assert "only_vjp_sin" in message
    assert "jvp" in message
    assert "defjvp" in message
    assert "argument 0" in message, message


def test_no_rule_for_second_argument_under_vjp() -> None:
    with pytest.raises(
        T.NoRuleError, match=r"'first_arg_only_mul'.*vjp.*argument 1.*transforms\.defvjp"
    ):
        T.grad(first_arg_only_p, argnums=1)(2.0, 3.0)


def test_no_rule_for_second_argument_under_jvp() -> None:
    with pytest.raises(
        T.NoRuleError, match=r"'first_arg_only_mul'.*jvp.*argument 1.*transforms\.defjvp"
    ):
        T.jvp(lambda y: first_arg_only_p(2.0, y), (3.0,), (1.0,))


def test_no_rule_error_is_a_not_implemented_error_with_fields() -> None:
    with pytest.raises(NotImplementedError) as info:
        T.grad(first_arg_only_p, argnums=1)(2.0, 3.0)
    err = info.value
    assert isinstance(err, T.NoRuleError)
    assert isinstance(err, T.TransformsError)
    assert err.primitive == "first_arg_only_mul"
    assert err.transform == "vjp"
    assert err.argnum == 1


# ---------------------------------------------------------------------------------------
# escaped tracers
# ---------------------------------------------------------------------------------------
def _leak_from(transform: Any) -> Any:
    leaked: list[Any] = []

    def f(x: Any) -> Any:
        leaked.append(x * 2.0)
        return x * x

    transform(f)
    assert len(leaked) == 1
    return leaked[0]


def test_escaped_tracer_from_grad_used_later() -> None:
    leaked = _leak_from(lambda f: T.grad(f)(1.5))
    with pytest.raises(T.EscapedTracerError, match=r"'sin'.*finished 'grad'"):
        tnp.sin(leaked)


def test_escaped_tracer_from_jvp() -> None:
    leaked = _leak_from(lambda f: T.jvp(f, (1.5,), (1.0,)))
    with pytest.raises(T.EscapedTracerError, match=r"'multiply'.*finished 'jvp'"):
        leaked * 3.0


def test_escaped_tracer_from_vjp() -> None:
    leaked = _leak_from(lambda f: T.vjp(f, 1.5))
    with pytest.raises(T.EscapedTracerError, match=r"'add'.*finished 'vjp'"):
        leaked + 1.0


def test_escaped_tracer_reaching_a_later_transform() -> None:
    leaked = _leak_from(lambda f: T.grad(f)(1.5))
    with pytest.raises(T.EscapedTracerError, match=r"'multiply'.*finished"):
        T.grad(lambda y: y * leaked)(2.0)
    with pytest.raises(T.EscapedTracerError, match=r"escaped"):
        T.jvp(lambda y: tnp.sin(leaked) + y, (2.0,), (1.0,))


def test_escaped_tracer_via_closure_from_nested_transform() -> None:
    box: dict[str, Any] = {}

    def inner(y: Any) -> Any:
        box["y"] = y
        return y * y

    def outer(x: Any) -> Any:
        return T.grad(inner)(x) * x

    close(T.grad(outer)(3.0), 12.0)
    with pytest.raises(T.EscapedTracerError, match="finished"):
        tnp.exp(box["y"])


# ---------------------------------------------------------------------------------------
# pullback with a wrong cotangent
# ---------------------------------------------------------------------------------------
def test_pullback_with_wrong_cotangent_shape() -> None:
    _, pullback = T.vjp(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(3,\)"):
        pullback(np.ones(2))
    with pytest.raises(ValueError, match=r"shape \(3, 1\).*shape \(3,\)"):
        pullback(np.ones((3, 1)))
    # the pullback still works afterwards
    close(pullback(np.ones(3))[0], 2 * np.ones(3))


def test_pullback_with_wrong_cotangent_structure() -> None:
    _, pullback = T.vjp(lambda x: (x, x * 2.0), np.ones(3))
    with pytest.raises(ValueError, match="structure"):  # JAX's type
        pullback(np.ones(3))


def test_pullback_of_scalar_with_vector_cotangent() -> None:
    _, pullback = T.vjp(lambda x: tnp.sum(x), np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(3,\).*shape \(\)"):
        pullback(np.ones(3))


# ---------------------------------------------------------------------------------------
# conversions that would drop a derivative; control flow that stays allowed
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("convert", [float, int, complex], ids=["float", "int", "complex"])
def test_conversion_of_traced_value_under_grad(convert: Any) -> None:
    with pytest.raises(T.DerivativeDroppedError, match=r"drop.*derivative"):
        T.grad(lambda x: x * convert(x))(1.5)


@pytest.mark.parametrize("convert", [float, int], ids=["float", "int"])
def test_conversion_of_traced_value_under_jvp_is_a_type_error(convert: Any) -> None:
    with pytest.raises(TypeError, match=r"drop.*derivative"):
        T.jvp(lambda x: x * convert(x), (1.5,), (1.0,))


def test_np_asarray_of_traced_value() -> None:
    with pytest.raises(T.DerivativeDroppedError, match=r"drop.*derivative"):
        T.grad(lambda x: tnp.sum(np.asarray(x) * x))(np.ones(2))


def test_raw_numpy_without_twin_says_use_transforms_numpy() -> None:
    # np.unwrap has no differentiable twin (it is not in COVERAGE.md)
    with pytest.raises(TypeError, match=r"unwrap.*transforms\.numpy"):
        T.grad(lambda x: np.unwrap(x)[0])(np.ones(3))


def test_comparisons_and_bool_are_allowed() -> None:
    def f(x: Any) -> Any:
        assert bool(x > 0) is True
        assert isinstance(bool(x > 0), bool)
        if x > 1.0 and x >= 1.5 and x != 7.0 and not (x < 0) and x <= 10.0:
            y = x * x
        else:
            y = -x
        if x:  # truthiness of a traced scalar
            y = y + 0.0
        return y

    close(T.grad(f)(1.5), 3.0)
    close(T.jvp(f, (1.5,), (1.0,))[1], 3.0)
    close(T.grad(T.grad(f))(1.5), 2.0)
    close(T.grad(f)(1.2), -1.0)


def test_item_and_tolist_give_primal_values() -> None:
    seen: list[Any] = []

    def f(x: Any) -> Any:
        seen.append(x.item())
        return x * x

    close(T.grad(f)(1.5), 3.0)
    assert seen == [1.5]
    assert isinstance(seen[0], float)


# ---------------------------------------------------------------------------------------
# in-place assignment
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("index", [0, slice(0, 2), (Ellipsis,)], ids=["int", "slice", "ellipsis"])
def test_inplace_assignment_on_tracer(index: Any) -> None:
    def f(x: Any) -> Any:
        x[index] = 1.0
        return tnp.sum(x)

    with pytest.raises(TypeError, match=r"in-place.*tnp\.at"):
        T.grad(f)(np.ones(3))
    with pytest.raises(TypeError, match=r"tnp\.at"):
        T.jvp(f, (np.ones(3),), (np.ones(3),))


# ---------------------------------------------------------------------------------------
# NumPy names that transforms.numpy lacks
# ---------------------------------------------------------------------------------------
_CANDIDATES = ["cumsum", "unwrap", "histogram", "trapezoid", "nanprod", "polyval", "gradient"]
MISSING = [n for n in _CANDIDATES if hasattr(np, n) and n not in vars(tnp)]


def test_some_numpy_functions_are_missing() -> None:
    assert MISSING, "every candidate is implemented: pick other missing names"
    for name in MISSING:
        assert name not in tnp.__all__


@pytest.mark.parametrize("name", MISSING)
def test_missing_numpy_function_attribute_error(name: str) -> None:
    with pytest.raises(AttributeError, match=rf"'{name}'.*not \(yet\) differentiable"):
        getattr(tnp, name)


@pytest.mark.parametrize(("module", "name"), [(tnp.fft, "hfft"), (tnp.linalg, "tensorinv")])
def test_missing_submodule_function_attribute_error(module: Any, name: str) -> None:
    with pytest.raises(AttributeError, match=rf"'{name}'.*not \(yet\) differentiable.*define it"):
        getattr(module, name)
    with pytest.raises(AttributeError, match="has no attribute 'definitely_not_numpy'"):
        module.definitely_not_numpy


def test_missing_function_is_not_hasattr() -> None:
    assert not hasattr(tnp, MISSING[0])


def test_name_unknown_to_numpy() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'definitely_not_numpy'"):
        tnp.definitely_not_numpy


# ---------------------------------------------------------------------------------------
# exceptions inside transformed code leave the trace stack clean
# ---------------------------------------------------------------------------------------
class Boom(Exception):
    pass


def _raise_after_work(x: Any) -> Any:
    y = tnp.sin(x) * x
    if y is not None:
        raise Boom("boom")
    return y


@pytest.mark.parametrize(
    "call",
    [
        lambda: T.grad(_raise_after_work)(1.0),
        lambda: T.grad(T.grad(_raise_after_work))(1.0),
        lambda: T.jacfwd(T.jacrev(lambda x: tnp.sum(_raise_after_work(x))))(np.ones(2)),
        lambda: T.jvp(T.grad(_raise_after_work), (1.0,), (1.0,)),
        lambda: T.hessian(lambda x: tnp.sum(_raise_after_work(x)))(np.ones(2)),
        lambda: T.grad(lambda x: T.jvp(_raise_after_work, (x,), (1.0,))[1])(1.0),
    ],
    ids=["grad", "grad_grad", "jacfwd_jacrev", "jvp_grad", "hessian", "grad_jvp"],
)
def test_exception_inside_nested_transforms_unwinds_stack(call: Any) -> None:
    with pytest.raises(Boom, match="boom"):
        call()
    assert current_traces() == ()
    # the next differentiation works and is right
    close(T.grad(T.grad(tnp.sin))(0.5), -np.sin(0.5))
    assert current_traces() == ()


def test_exception_in_inner_transform_caught_by_user_inside_outer() -> None:
    # the user catches the inner failure and carries on inside the outer transform
    def f(x: Any) -> Any:
        try:
            T.grad(_raise_after_work)(x)
        except Boom:
            pass
        assert len(current_traces()) == 1
        return x * x

    close(T.grad(f)(3.0), 6.0)


def test_exception_inside_pullback_under_outer_transform() -> None:
    bad = Primitive("raising_pullback", np.sin)
    defjvp(bad, lambda t, ans, x: t * tnp.cos(x))

    def maker(ans: Any, x: Any) -> Any:
        def pullback(ct: Any) -> Any:
            raise Boom("boom in pullback")

        return pullback

    defvjp(bad, maker)
    _, pullback = T.vjp(bad, 0.5)
    with pytest.raises(Boom, match="boom in pullback"):
        T.grad(lambda ct: pullback(ct)[0])(1.0)
    assert current_traces() == ()
    close(T.grad(tnp.cos)(0.5), -np.sin(0.5))


# ---------------------------------------------------------------------------------------
# malformed calls to the transforms
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("transform", "error"),
    [
        (T.grad, TypeError),
        (T.value_and_grad, TypeError),
        (T.jacfwd, ValueError),
        (T.jacrev, ValueError),
    ],
)
def test_argnums_out_of_range(transform: Any, error: type[Exception]) -> None:
    # JAX's types: a TypeError for grad/value_and_grad, a ValueError for the Jacobians
    with pytest.raises(error, match=r"argnums 2 is out of range.*2 positional"):
        transform(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    with pytest.raises(error, match=r"argnums -3 is out of range"):
        transform(lambda x, y: x * y, argnums=-3)(1.0, 2.0)


def test_empty_argnums() -> None:
    with pytest.raises(ValueError, match="at least one argument"):
        T.grad(lambda x, y: x * y, argnums=())(1.0, 2.0)


def test_has_aux_without_a_pair() -> None:
    with pytest.raises(TypeError, match=r"has_aux=True.*pair \(output, aux\)"):
        T.grad(lambda x: x * x, has_aux=True)(1.0)
    with pytest.raises(TypeError, match=r"has_aux=True.*pair"):
        T.vjp(lambda x: x * x, 1.0, has_aux=True)
    with pytest.raises(TypeError, match=r"has_aux=True.*pair"):
        T.jvp(lambda x: (x, x, x), (1.0,), (1.0,), has_aux=True)


def test_jvp_malformed_primals_and_tangents() -> None:
    with pytest.raises(TypeError, match=r"tuples or lists.*jvp\(f, \(x,\), \(t,\)\)"):
        T.jvp(tnp.sin, 1.0, 1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"2 primal\(s\) but 1 tangent\(s\)"):
        T.jvp(lambda x, y: x * y, (1.0, 2.0), (1.0,))
    with pytest.raises(ValueError, match=r"tangent 0 has shape \(3,\).*primal has shape \(2,\)"):
        T.jvp(tnp.sin, (np.ones(2),), (np.ones(3),))
    with pytest.raises(TypeError, match="structure"):
        T.jvp(lambda p: p[0], ((1.0, 2.0),), ([1.0, 2.0],))


def test_custom_rule_returning_another_dtype_is_an_error_not_a_complex_gradient() -> None:
    """A user's VJP rule that returns a complex cotangent for a real operand must not leak an
    imaginary part into a real gradient: the pullback refuses, naming the contract."""
    doubled = Primitive("doubled", lambda x: x * 2.0)
    defvjp(doubled, lambda ans, x: lambda ct: (ct * 2.0).astype(np.complex128))
    defjvp(doubled, lambda t, ans, x: t * 2.0)
    with pytest.raises(TypeError, match=r"input 0 came out complex128 for a float64 input"):
        T.grad(lambda x: tnp.sum(doubled.bind(x) * 3.0))(np.ones(2))
    assert current_traces() == ()
