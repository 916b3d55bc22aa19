"""Issue 11: never a silently wrong derivative. Each test here failed (a wrong number, or a
confusing error) before the fix it names.

- transposing a custom rule (forward mode of ``custom_vjp``, reverse mode of ``custom_jvp``)
  refuses control flow on the values being transposed, naming the function and the fix;
- ``custom_jvp`` / ``custom_vjp`` functions take pytree arguments and return pytree outputs,
  as in JAX, in every mode (jet and sparsity detection too), a rule's output of the wrong
  structure, shape or dtype being an error of JAX's type;
- namedtuples and registered dataclasses are pytree nodes; unregistered objects are refused
  with the registration to use;
- tracers are weak-referenceable.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, NamedTuple

import numpy as np
import pytest
from numpy.testing import assert_allclose

import transforms as T
import transforms.numpy as tnp

TOL = 1e-9


# ---- a fixed point x = a cos(x) with convergence loops in fwd and bwd ------------------------
def _iterate(a: Any) -> Any:
    x = tnp.zeros_like(a)
    while True:
        nx = a * tnp.cos(x)
        if tnp.max(tnp.abs(nx - x)) < 1e-14:
            return nx
        x = nx


@T.custom_vjp
def fixed_point(a: Any) -> Any:
    return _iterate(a)


def _fp_fwd(a: Any) -> tuple[Any, Any]:
    x = fixed_point(a)
    return x, (a, x)


def _fp_bwd(res: Any, ct: Any) -> tuple[Any]:
    a, x = res  # adjoint fixed point w = ct + w * df/dx, df/dx = -a sin x; then w * df/da
    w = ct
    while True:
        nw = ct - w * a * tnp.sin(x)
        if tnp.max(tnp.abs(nw - w)) < 1e-14:  # control flow on the cotangent
            return (nw * tnp.cos(x),)
        w = nw


fixed_point.defvjp(_fp_fwd, _fp_bwd)


def _fp_exact(a: Any) -> Any:
    x = np.asarray(_iterate(np.asarray(a, dtype=float)))
    return np.cos(x) / (1 + a * np.sin(x))


def test_custom_vjp_loop_grad_is_exact() -> None:
    assert_allclose(T.grad(fixed_point)(0.5), _fp_exact(0.5), rtol=TOL)


@pytest.mark.parametrize(
    "call",
    [
        lambda: T.jvp(fixed_point, (0.5,), (1.0,)),
        lambda: T.jacfwd(fixed_point)(0.5),
        lambda: T.jvp(T.grad(fixed_point), (0.5,), (1.0,)),
    ],
    ids=["jvp", "jacfwd", "jvp-of-grad"],
)
def test_custom_vjp_loop_forward_mode_refused(call: Any) -> None:
    # before: ~1e-2 off with no error (the adjoint loop stopped after one step at ct = 0)
    with pytest.raises(T.ConcretizationTypeError) as info:
        call()
    message = str(info.value)
    assert isinstance(info.value, TypeError)
    assert "custom_vjp function fixed_point" in message
    assert "cotangent" in message and "T.custom_root" in message


def test_custom_vjp_loop_hessian_of_a_scalar_runs_bwd_as_written() -> None:
    # hessian is reverse over reverse: at a scalar, grad of grad, which runs the loop on
    # plain cotangents (a vector's batched cotangents cannot branch: test_custom_paths)
    h = 1e-5
    fd = (_fp_exact(0.5 + h) - _fp_exact(0.5 - h)) / (2 * h)
    assert_allclose(T.hessian(fixed_point)(0.5), fd, rtol=1e-7)
    assert_allclose(T.hessian(fixed_point)(0.5), T.grad(T.grad(fixed_point))(0.5), rtol=1e-12)


def test_custom_vjp_bool_in_bwd_is_tracer_bool_conversion_error() -> None:
    @T.custom_vjp
    def f(x: Any) -> Any:
        return 2 * x

    def bwd(_: Any, ct: Any) -> tuple[Any]:
        return (2 * ct if ct else ct,)  # bool() of the cotangent

    f.defvjp(lambda x: (f(x), None), bwd)
    assert_allclose(T.grad(f)(1.0), 2.0)
    with pytest.raises(T.TracerBoolConversionError, match=r"custom_vjp function f.*bool"):
        T.jvp(f, (1.0,), (1.0,))


def test_custom_vjp_item_in_bwd_refused() -> None:
    @T.custom_vjp
    def f(x: Any) -> Any:
        return 2 * x

    f.defvjp(lambda x: (f(x), None), lambda _, ct: (ct * (2.0 if ct.item() > 0 else -2.0),))
    with pytest.raises(T.ConcretizationTypeError, match=r"\.item\(\)"):
        T.jvp(f, (1.0,), (1.0,))


def test_custom_vjp_linear_bwd_still_transposes_exactly() -> None:
    @T.custom_vjp
    def f(x: Any) -> Any:
        return tnp.sin(x)

    def bwd(x: Any, ct: Any) -> tuple[Any]:
        # control flow on residuals and zeros_like of the cotangent are fine
        scale = 3.0 if tnp.all(x > 0) else 1.0
        return (scale * tnp.cos(x) * ct + tnp.zeros_like(ct),)

    f.defvjp(lambda x: (f(x), x), bwd)
    x = np.array([0.3, 1.2])
    assert_allclose(T.jacfwd(f)(x), np.diag(3 * np.cos(x)), rtol=TOL)


def test_custom_vjp_loop_jacrev_names_function() -> None:
    # before: a `vmap:` error that did not say which function
    a = np.array([0.5, 0.7])
    assert_allclose(T.grad(lambda a: tnp.sum(fixed_point(a)))(a), _fp_exact(a), rtol=TOL)
    with pytest.raises(T.TracerBoolConversionError) as info:
        T.jacrev(fixed_point)(a)
    message = str(info.value)
    assert "custom_vjp function fixed_point" in message and "bwd rule" in message


# ---- the same fixed point with a custom_jvp whose tangent rule iterates ----------------------
@T.custom_jvp
def fixed_point_jvp(a: Any) -> Any:
    return _iterate(a)


@fixed_point_jvp.defjvp
def _fpj_rule(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    x = fixed_point_jvp(a)
    dx = tnp.zeros_like(x)
    while True:  # dx = cos(x) da - a sin(x) dx
        ndx = tnp.cos(x) * da - a * tnp.sin(x) * dx
        if tnp.max(tnp.abs(ndx - dx)) < 1e-14:  # control flow on the tangent
            return x, ndx
        dx = ndx


def test_custom_jvp_loop_forward_exact_reverse_refused() -> None:
    assert_allclose(T.jvp(fixed_point_jvp, (0.5,), (1.0,))[1], _fp_exact(0.5), rtol=TOL)
    for call in (lambda: T.grad(fixed_point_jvp)(0.5), lambda: T.hessian(fixed_point_jvp)(0.5)):
        with pytest.raises(T.ConcretizationTypeError) as info:
            call()
        message = str(info.value)
        assert "custom_jvp function fixed_point_jvp" in message and "tangent" in message
    with pytest.raises(T.TracerBoolConversionError, match="custom_jvp function fixed_point_jvp"):
        T.jacfwd(fixed_point_jvp)(np.array([0.5, 0.7]))


# ---- pytree arguments of custom rules --------------------------------------------------------
def test_custom_jvp_pytree_arguments_every_mode() -> None:
    @T.custom_jvp
    def f(p: Any, y: Any) -> Any:
        return tnp.sin(p["w"]) * p["b"][0] + y

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
        (p, y), (tp, ty) = primals, tangents
        w, b = p["w"], p["b"][0]
        # the rule's own scale 2 shows it was used
        return f(p, y), 2 * (tnp.cos(w) * b * tp["w"] + tnp.sin(w) * tp["b"][0] + ty)

    p = {"w": np.array(0.3), "b": (np.array(1.5),)}
    g = T.grad(f)(p, 0.2)
    assert set(g) == {"w", "b"} and isinstance(g["b"], tuple)
    assert_allclose(g["w"], 2 * np.cos(0.3) * 1.5, rtol=TOL)
    assert_allclose(g["b"][0], 2 * np.sin(0.3), rtol=TOL)
    assert_allclose(T.grad(f, argnums=1)(p, 0.2), 2.0)
    t = {"w": np.array(1.0), "b": (np.array(0.0),)}
    assert_allclose(T.jvp(f, (p, 0.2), (t, 0.0))[1], 2 * np.cos(0.3) * 1.5, rtol=TOL)
    h = T.hessian(lambda w: f({"w": w, "b": (np.array(1.5),)}, 0.2))(np.array(0.3))
    assert_allclose(h, -2 * np.sin(0.3) * 1.5, rtol=TOL)


def test_custom_vjp_pytree_arguments_every_mode() -> None:
    @T.custom_vjp
    def f(p: Any) -> Any:
        return p[0] * p[1]

    def bwd(p: Any, ct: Any) -> tuple[Any]:
        return ((3 * ct * p[1], 3 * ct * p[0]),)  # scaled by 3: the rule is used

    f.defvjp(lambda p: (f(p), p), bwd)
    g = T.grad(f)((np.array(2.0), np.array(5.0)))
    assert isinstance(g, tuple)
    assert_allclose(g, (15.0, 6.0))
    out = T.jvp(f, ((np.array(2.0), np.array(5.0)),), ((np.array(1.0), np.array(0.0)),))[1]
    assert_allclose(out, 15.0)
    xs = np.array([1.0, 2.0, 3.0])
    assert_allclose(T.vmap(T.grad(lambda x: f((x, x))))(xs), 6 * xs)

    def bad(p: Any, ct: Any) -> tuple[Any]:
        return ([ct, ct],)  # a list for a tuple argument

    f.defvjp(lambda p: (f(p), p), bad)
    with pytest.raises(TypeError, match=r"custom_vjp bwd of f.*structure"):
        T.grad(f)((np.array(2.0), np.array(5.0)))


# ---- pytree outputs of custom rules ------------------------------------------------------------
# (r, theta) -> {"x": r cos theta, "y": (r sin theta,)}: each rule is the true derivative, checked
# against JAX's derivatives of the same custom functions (or of the plain function, in forward
# mode of a custom_vjp, which JAX refuses) and against closed forms
def _polar(np_: Any, r: Any, theta: Any) -> Any:
    return {"x": r * np_.cos(theta), "y": (r * np_.sin(theta),)}


def _custom_polar(m: Any) -> tuple[Any, Any]:
    T_, np_ = m

    @T_.custom_jvp
    def polar_jvp(r: Any, theta: Any) -> Any:
        return _polar(np_, r, theta)

    @polar_jvp.defjvp
    def polar_rule(primals: Any, tangents: Any) -> Any:
        (r, theta), (dr, dtheta) = primals, tangents
        c, s = np_.cos(theta), np_.sin(theta)
        return polar_jvp(r, theta), {"x": c * dr - r * s * dtheta, "y": (s * dr + r * c * dtheta,)}

    @T_.custom_vjp
    def polar_vjp(r: Any, theta: Any) -> Any:
        return _polar(np_, r, theta)

    def bwd(res: Any, ct: Any) -> Any:
        r, theta = res
        c, s, cx, cy = np_.cos(theta), np_.sin(theta), ct["x"], ct["y"][0]
        return c * cx + s * cy, r * (c * cy - s * cx)

    polar_vjp.defvjp(lambda r, theta: (polar_vjp(r, theta), (r, theta)), bwd)
    return polar_jvp, polar_vjp


def _polar_loss(np_: Any, polar: Any) -> Any:
    def loss(r: Any, theta: Any) -> Any:
        out = polar(r, theta)
        return np_.sum(out["x"] ** 2 * out["y"][0] + 3 * out["x"])

    return loss


R, THETA = np.array([1.5, 0.7, 2.0]), np.array([0.3, -1.2, 2.5])


def test_custom_rules_pytree_outputs_match_jax() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    ours_jvp, ours_vjp = _custom_polar((T, tnp))
    theirs_jvp, theirs_vjp = _custom_polar((jax, jnp))
    r, theta, jr, jtheta = R, THETA, jnp.asarray(R), jnp.asarray(THETA)
    args, jargs, t, jt = (r, theta), (jr, jtheta), (np.ones(3), R), (jnp.ones(3), jnp.asarray(R))

    def close(a: Any, b: Any) -> None:  # JAX computes in float32 here
        leaves, tree = T.tree_util.tree_flatten(a)
        assert tree == T.tree_util.tree_structure(jax.tree_util.tree_map(np.asarray, b))
        for x, y in zip(leaves, jax.tree_util.tree_leaves(b), strict=True):
            assert_allclose(x, np.asarray(y), rtol=2e-5, atol=1e-5)

    plain = _polar_loss(jnp, lambda r, theta: _polar(jnp, r, theta))
    for ours, theirs in ((ours_jvp, theirs_jvp), (ours_vjp, theirs_vjp)):
        loss, jloss = _polar_loss(tnp, ours), _polar_loss(jnp, theirs)
        close(ours(*args), theirs(*jargs))
        close(
            T.vjp(ours, *args)[1]({"x": R, "y": (THETA,)}),
            jax.vjp(theirs, *jargs)[1]({"x": jr, "y": (jtheta,)}),
        )
        close(T.grad(loss, argnums=(0, 1))(*args), jax.grad(jloss, argnums=(0, 1))(*jargs))
        close(T.jacrev(ours, argnums=1)(*args), jax.jacrev(theirs, argnums=1)(*jargs))
        close(T.vmap(T.grad(loss))(*args), jax.vmap(jax.grad(jloss))(*jargs))
        close(T.jvp(ours, args, t), jax.jvp(theirs_jvp, jargs, jt))
        close(T.jacfwd(ours, argnums=1)(*args), jax.jacfwd(theirs_jvp, argnums=1)(*jargs))
        close(T.hessian(loss, argnums=1)(*args), jax.hessian(plain, argnums=1)(*jargs))
        close(T.jvp(T.grad(loss), args, t), jax.jvp(jax.grad(plain), jargs, jt))


@pytest.mark.parametrize("kind", [0, 1], ids=["custom_jvp", "custom_vjp"])
def test_custom_rules_pytree_outputs_in_jet_and_sparsity(kind: int) -> None:
    polar = _custom_polar((T, tnp))[kind]
    # d^k/dtheta^k of r cos(theta) is r cos(theta + k pi / 2)
    _, series = T.jet(lambda th: polar(R, th), (THETA,), ([np.ones(3), 0 * R, 0 * R],))
    assert set(series) == {"x", "y"} and len(series["y"]) == 1
    for k in range(3):
        assert_allclose(series["x"][k], R * np.cos(THETA + (k + 1) * np.pi / 2), rtol=TOL)
        assert_allclose(series["y"][0][k], R * np.sin(THETA + (k + 1) * np.pi / 2), rtol=TOL)

    # each output element depends on its own r and theta only; the loss's Hessian pairs too
    def stacked(v: Any) -> Any:
        out = polar(v[:3], v[3:])
        return tnp.concatenate([out["x"], out["y"][0]])

    v = np.concatenate([R, THETA])
    block = np.eye(3, dtype=bool)
    pattern = np.block([[block, block], [block, block]])
    assert (T.jacobian_sparsity(stacked)(v).toarray() == pattern).all()
    loss = _polar_loss(tnp, polar)
    assert (T.hessian_sparsity(lambda v: loss(v[:3], v[3:]))(v).toarray() == pattern).all()


# ---- weak references --------------------------------------------------------------------------
def test_tracers_are_weak_referenceable_in_every_transform() -> None:
    # before: TypeError: cannot create weak reference to 'VJPTracer' object
    cache: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
    seen: list[str] = []

    def f(x: Any) -> Any:
        ref = weakref.ref(x)
        assert ref() is x
        cache["x"] = x  # a user cache keyed to the traced value
        seen.append(type(x).__name__)
        return tnp.sum(cache["x"] ** 2)

    x = np.array([1.0, 2.0])
    assert_allclose(T.grad(f)(x), 2 * x)
    assert_allclose(T.jvp(f, (x,), (np.ones(2),))[1], 6.0)
    assert_allclose(T.vmap(f)(np.eye(2)), [1.0, 1.0])
    assert_allclose(T.hessian(f)(x), 2 * np.eye(2))
    assert {"VJPTracer", "JVPTracer", "BatchTracer"} <= set(seen)


# ---- custom_root and custom_linear_solve: exact in every mode ---------------------------------
def _chord(f: Any, x: Any) -> Any:
    """A solver with a convergence loop (on plain arrays: it is never traced)."""
    x = np.asarray(x, dtype=float)
    for _ in range(200):
        fx = np.asarray(f(x))
        if np.max(np.abs(fx)) < 1e-15:
            break
        x = x - fx / 1.3
    return x


def _root_fp(a: Any) -> Any:
    """x = a cos(x) as the root of x - a cos(x)."""
    return T.custom_root(
        lambda x: x - a * tnp.cos(x), tnp.zeros_like(a), _chord, lambda g, y: y / g(1.0)
    )


def _fd(f: Any, x: float, h: float = 1e-5) -> Any:
    return (np.asarray(f(x + h)) - np.asarray(f(x - h))) / (2 * h)


def test_custom_root_value_and_every_mode() -> None:
    a = 0.5
    x = np.asarray(_root_fp(a))
    assert_allclose(x, a * np.cos(x), atol=1e-15)
    exact = _fp_exact(a)
    for value in (
        T.grad(_root_fp)(a),
        T.jvp(_root_fp, (a,), (1.0,))[1],
        T.jacfwd(_root_fp)(a),
        T.jacrev(_root_fp)(a),
    ):
        assert_allclose(value, exact, rtol=TOL)
    second = _fd(_fp_exact, a)
    for value in (
        T.hessian(_root_fp)(a),
        T.grad(T.grad(_root_fp))(a),
        T.jvp(T.grad(_root_fp), (a,), (1.0,))[1],
    ):
        assert_allclose(value, second, rtol=1e-7)
    third = _fd(lambda a: T.hessian(_root_fp)(a), a)  # third order, against the second
    assert_allclose(T.grad(T.grad(T.grad(_root_fp)))(a), third, rtol=1e-6)


def test_custom_root_closed_form_sqrt_and_vmap_of_derivatives() -> None:
    def newton(f: Any, x: Any) -> Any:
        for _ in range(60):
            x = x - f(x) / (2 * x)
        return x

    def sqrt(a: Any) -> Any:
        def diagonal_solve(g: Any, y: Any) -> Any:  # f's Jacobian is diagonal
            return y / g(np.ones_like(y))

        return T.custom_root(lambda x: x**2 - a, tnp.ones_like(a), newton, diagonal_solve)

    a = np.array([4.0, 2.0, 9.0])
    assert_allclose(sqrt(a), np.sqrt(a), rtol=1e-14)
    assert_allclose(T.jacfwd(sqrt)(a), np.diag(0.5 / np.sqrt(a)), rtol=TOL, atol=1e-14)
    assert_allclose(T.jacrev(sqrt)(a), np.diag(0.5 / np.sqrt(a)), rtol=TOL, atol=1e-14)
    h = T.hessian(lambda a: tnp.sum(sqrt(a)))(a)
    assert_allclose(h, np.diag(-0.25 * a**-1.5), rtol=TOL, atol=1e-14)
    # vmap over the values f closes over: the solver runs per example (issue 33)
    assert_allclose(T.vmap(sqrt)(a), np.sqrt(a), rtol=1e-14)


def test_custom_root_has_aux() -> None:
    def counted(f: Any, x: Any) -> Any:
        return _chord(f, x), "converged"

    def root(a: Any) -> Any:
        x, aux = T.custom_root(
            lambda x: x - a * tnp.cos(x), 0.0, counted, lambda g, y: y / g(1.0), has_aux=True
        )
        assert aux == "converged"
        return x

    assert_allclose(T.grad(root)(0.5), _fp_exact(0.5), rtol=TOL)


def _jacobi(matvec: Any, b: Any) -> Any:
    x = np.zeros_like(b)
    for _ in range(500):
        r = b - matvec(x)
        if np.max(np.abs(r)) < 1e-15:
            break
        x = x + r / 5.0
    return x


M = np.array([[5.0, 1.0, 0.5], [0.2, 4.0, 1.0], [0.3, 0.1, 6.0]])
B = np.array([1.0, -2.0, 0.5])


def test_custom_linear_solve_in_b_every_mode_and_vmap() -> None:
    def f(b: Any) -> Any:
        return T.custom_linear_solve(lambda x: M @ x, b, _jacobi, _jacobi_t)

    def _jacobi_t(vecmat: Any, b: Any) -> Any:
        return _jacobi(vecmat, b)

    inv = np.linalg.inv(M)
    assert_allclose(f(B), inv @ B, rtol=1e-12)
    assert_allclose(T.jacfwd(f)(B), inv, rtol=1e-12, atol=1e-14)
    assert_allclose(T.jacrev(f)(B), inv, rtol=1e-12, atol=1e-14)
    assert_allclose(T.hessian(lambda b: tnp.sum(f(b) ** 2))(B), 2 * inv.T @ inv, rtol=1e-10)
    bs = np.stack([B, 2 * B, -B])
    assert_allclose(T.vmap(f)(bs), bs @ inv.T, rtol=1e-12)
    assert_allclose(T.vmap(T.grad(lambda b: tnp.sum(f(b))))(bs), np.tile(inv.sum(0), (3, 1)))


def test_custom_linear_solve_has_aux() -> None:
    def solve(matvec: Any, b: Any) -> Any:
        x = _jacobi(matvec, b)
        return x, float(np.max(np.abs(matvec(x) - b)))  # the residual: per example

    def f(b: Any) -> Any:
        return T.custom_linear_solve(lambda x: M @ x, b, solve, solve, has_aux=True)

    x, residual = f(B)
    assert_allclose(x, np.linalg.solve(M, B), rtol=1e-12)
    assert residual < 1e-12
    g = T.grad(lambda b: tnp.sum(f(b)[0]))(B)
    assert_allclose(g, np.linalg.inv(M).sum(0), rtol=1e-12)
    # under vmap over b there is one aux per example: refused, never the first example's
    with pytest.raises(NotImplementedError, match=r"custom_linear_solve: has_aux=True under vmap"):
        T.vmap(f)(np.stack([B, 2 * B]))


def test_custom_linear_solve_in_the_operator_every_mode() -> None:
    def f(scale: Any) -> Any:  # (M + s I) x = B
        x = T.custom_linear_solve(
            lambda x: M @ x + scale * x, B, _jacobi, lambda vm, b: _jacobi(vm, b)
        )
        return tnp.sum(x * tnp.arange(1.0, 4.0))

    def exact(s: float) -> Any:
        return np.linalg.solve(M + s * np.eye(3), B) @ np.arange(1.0, 4.0)

    s = 0.3
    assert_allclose(f(s), exact(s), rtol=1e-12)
    first = _fd(exact, s)
    for value in (T.grad(f)(s), T.jvp(f, (s,), (1.0,))[1], T.jacfwd(f)(s), T.jacrev(f)(s)):
        assert_allclose(value, first, rtol=1e-8)
    second = _fd(lambda s: _fd(exact, s, 1e-3), s, 1e-3)
    assert_allclose(T.hessian(f)(s), second, rtol=1e-5)
    assert_allclose(T.grad(T.grad(f))(s), T.hessian(f)(s), rtol=1e-12)


def test_custom_linear_solve_symmetric_and_missing_transpose() -> None:
    A = M + M.T

    def f(b: Any) -> Any:
        return tnp.sum(T.custom_linear_solve(lambda x: A @ x, b, _cg, symmetric=True))

    def _cg(matvec: Any, b: Any) -> Any:
        return np.linalg.solve(np.stack([matvec(e) for e in np.eye(3)], axis=1), b)

    assert_allclose(T.grad(f)(B), np.linalg.solve(A, np.ones(3)), rtol=1e-12)

    def g(b: Any) -> Any:
        return tnp.sum(T.custom_linear_solve(lambda x: M @ x, b, _cg))

    assert_allclose(T.jvp(g, (B,), (B,))[1], np.sum(np.linalg.solve(M, B)), rtol=1e-12)
    with pytest.raises(TypeError, match=r"custom_linear_solve: reverse mode .*transpose_solve"):
        T.grad(g)(B)


# ---- namedtuples and dataclasses are pytree nodes ---------------------------------------------
class Pair(NamedTuple):
    x: Any
    y: Any


def test_namedtuple_is_a_node_in_every_transform() -> None:
    # before: grad returned array([3., 2.]) and p.x failed on a tracer
    p = Pair(np.array(2.0), np.array(3.0))
    g = T.grad(lambda p: p.x * p.y)(p)
    assert type(g) is Pair
    assert_allclose(g.x, 3.0)
    assert_allclose(g.y, 2.0)
    out, tangent = T.jvp(lambda p: Pair(p.y, p.x * p.y), (p,), (Pair(1.0, 0.0),))
    assert type(out) is Pair and type(tangent) is Pair
    assert_allclose(tangent.y, 3.0)
    h = T.hessian(lambda p: p.x**2 * p.y)(p)
    assert type(h) is Pair and type(h.x) is Pair
    assert_allclose(h.x.x, 2 * 3.0)
    assert_allclose(h.x.y, 2 * 2.0)
    batched = T.vmap(lambda p: p.x - p.y)(Pair(np.arange(3.0), np.ones(3)))
    assert_allclose(batched, np.arange(3.0) - 1)
    jac = T.jacrev(lambda p: tnp.stack([p.x, p.y]))(p)
    assert type(jac) is Pair and jac.x.shape == (2,)
    assert T.tree_util.tree_map(lambda a: a * 2, p) == Pair(4.0, 6.0)


def test_register_dataclass_decorator_and_explicit_fields() -> None:
    @T.tree_util.register_dataclass
    @dataclasses.dataclass
    class Layer:
        w: Any
        b: Any
        act: str = dataclasses.field(default="tanh", metadata={"static": True})

    g = T.grad(lambda m: tnp.sum(tnp.tanh(m.w * 2.0 + m.b)))(Layer(np.array(0.1), np.array(0.2)))
    assert type(g) is Layer and g.act == "tanh"
    d = 1 - np.tanh(0.4) ** 2
    assert_allclose(g.w, 2 * d, rtol=TOL)
    assert_allclose(g.b, d, rtol=TOL)

    class Plain:  # not a dataclass: fields given explicitly
        def __init__(self, a: Any, scale: float) -> None:
            self.a, self.scale = a, scale

    T.tree_util.register_dataclass(Plain, data_fields=["a"], meta_fields=["scale"])
    g2 = T.grad(lambda p: p.a**2 * p.scale)(Plain(np.array(3.0), 0.5))
    assert isinstance(g2, Plain) and g2.scale == 0.5
    assert_allclose(g2.a, 3.0)
    with pytest.raises(TypeError, match="not a dataclass"):
        T.tree_util.register_dataclass(type("Other", (), {}))


def test_unregistered_object_argument_says_how_to_register() -> None:
    # before: "grad requires float or complex inputs, but argument 0 has dtype object"
    @dataclasses.dataclass
    class Unregistered:
        w: Any

    for call in (
        lambda: T.grad(lambda m: m.w)(Unregistered(1.0)),
        lambda: T.jvp(lambda m: m.w, (Unregistered(1.0),), (Unregistered(1.0),)),
    ):
        with pytest.raises(TypeError) as info:
            call()
        message = str(info.value)
        assert "Unregistered" in message and "register_dataclass" in message
        assert "register_pytree_node" in message


# ---- error types follow JAX (0.10) for the same misuse ----------------------------------------
def _sq(x: Any) -> Any:
    return x**2


def _two_outputs_jvp(m: Any, tangent_out: Any) -> Any:
    """``x -> (x, 2 x)`` as a custom_jvp of ``m`` whose rule's tangent is ``tangent_out(t)``."""
    T_, _ = m

    @T_.custom_jvp
    def f(x: Any) -> Any:
        return x, 2 * x

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(x), tangent_out(t)

    return lambda: T_.jvp(f, (m[1].ones(2),), (m[1].ones(2),))


def _two_outputs_vjp(m: Any, fwd: Any, bwd: Any) -> Any:
    """``x -> (x, 2 x)`` as a custom_vjp of ``m``, pulled back at ``(1, 1)``."""
    T_, np_ = m

    @T_.custom_vjp
    def f(x: Any) -> Any:
        return x, 2 * x

    f.defvjp(lambda x: fwd(f(x), x), lambda _, ct: bwd(ct))
    return lambda: T_.vjp(f, np_.ones(2))[1]((np_.ones(2), np_.ones(2)))


def _misuse(m: Any) -> dict[str, Any]:
    """The same misuse, written for ``m`` = transforms (with tnp) or JAX (with jnp)."""
    T_, np_ = m
    return {
        "custom_jvp tangent structure": _two_outputs_jvp(m, lambda t: (t,)),
        "custom_jvp tangent shape": _two_outputs_jvp(m, lambda t: (t, np_.ones(3))),
        "custom_jvp tangent dtype": _two_outputs_jvp(m, lambda t: (t, t.astype(np_.float16))),
        "custom_vjp fwd not a pair": _two_outputs_vjp(
            m, lambda out, x: (out, x, x), lambda ct: (ct[0],)
        ),
        "custom_vjp bwd count": _two_outputs_vjp(m, lambda out, x: (out, x), lambda ct: ct),
        "custom_vjp bwd not a tuple": _two_outputs_vjp(
            m, lambda out, x: (out, x), lambda ct: ct[0]
        ),
        "custom_vjp bwd structure": _two_outputs_vjp(
            m, lambda out, x: (out, x), lambda ct: ((ct[0],),)
        ),
        "custom_vjp bwd shape": _two_outputs_vjp(
            m, lambda out, x: (out, x), lambda ct: (np_.sum(ct[0]),)
        ),
        "grad argnums out of range": lambda: T_.grad(_sq, argnums=1)(1.0),
        "value_and_grad argnums out of range": lambda: T_.value_and_grad(_sq, argnums=1)(1.0),
        "grad without positional arguments": lambda: T_.grad(lambda x: x)(x=1.0),
        "jacfwd argnums out of range": lambda: T_.jacfwd(_sq, argnums=2)(1.0),
        "jacrev argnums out of range": lambda: T_.jacrev(_sq, argnums=2)(1.0),
        "hessian argnums out of range": lambda: T_.hessian(_sq, argnums=2)(1.0),
        "grad argnums empty": lambda: T_.grad(_sq, argnums=())(1.0),
        "grad argnums float": lambda: T_.grad(_sq, argnums=1.5)(1.0),
        "grad of a non-callable": lambda: T_.grad(1.0),
        "jacfwd of a non-callable": lambda: T_.jacfwd(1.0),
        "jacrev of a non-callable": lambda: T_.jacrev(1.0),
        "hessian of a non-callable": lambda: T_.hessian(1.0),
        "vmap of a non-callable": lambda: T_.vmap(1.0),
        "vjp of a non-callable": lambda: T_.vjp(1.0, 1.0),
        "grad int input": lambda: T_.grad(_sq)(1),
        "jacrev int input": lambda: T_.jacrev(_sq)(1),
        "grad non-scalar output": lambda: T_.grad(lambda x: x)(np_.ones(2)),
        "grad complex output": lambda: T_.grad(lambda x: x * 1j)(1.0),
        "grad has_aux without a pair": lambda: T_.grad(lambda x: x, has_aux=True)(1.0),
        "grad holomorphic real input": lambda: T_.grad(_sq, holomorphic=True)(1.0),
        "jvp tangent shape": lambda: T_.jvp(_sq, (1.0,), (np_.ones(2),)),
        "jvp tangent dtype": lambda: T_.jvp(
            _sq, (np_.ones(2, np_.float32),), (np_.ones(2, np_.float16),)
        ),
        "jvp primals not a tuple": lambda: T_.jvp(_sq, 1.0, 1.0),
        "jvp structures differ": lambda: T_.jvp(lambda a, b: a, (1.0, 2.0), (1.0,)),
        "vjp cotangent shape": lambda: T_.vjp(_sq, np_.ones(2))[1](np_.ones(3)),
        "vjp cotangent dtype": lambda: T_.vjp(_sq, np_.ones(2))[1](np_.ones(2, np_.int32)),
        "vjp cotangent structure": lambda: T_.vjp(lambda v: (v, v), np_.ones(2))[1](np_.ones(2)),
        "vmap in_axes out of range": lambda: T_.vmap(_sq, in_axes=1)(np_.ones(2)),
        "vmap in_axes float": lambda: T_.vmap(_sq, in_axes=0.5)(np_.ones(2)),
        "vmap out_axes float": lambda: T_.vmap(_sq, out_axes=0.5)(np_.ones(2)),
        "vmap inconsistent sizes": lambda: T_.vmap(lambda a, b: a + b)(np_.ones(2), np_.ones(3)),
        "vmap in_axes length": lambda: T_.vmap(lambda a, b: a + b, in_axes=(0,))(
            np_.ones(2), np_.ones(2)
        ),
        "vmap nothing mapped": lambda: T_.vmap(_sq, in_axes=None)(np_.ones(2)),
        "vmap scalar mapped": lambda: T_.vmap(_sq)(1.0),
        "vmap out_axes out of range": lambda: T_.vmap(_sq, out_axes=3)(np_.ones(2)),
    }


_BASES = (TypeError, ValueError, IndexError, NotImplementedError)


def _raised(call: Any) -> type[BaseException]:
    try:
        call()
    except Exception as err:  # the test compares exception types
        return type(err)
    raise AssertionError("no exception")


@pytest.mark.parametrize("misuse", sorted(_misuse((T, tnp))))
def test_error_types_follow_jax(misuse: str) -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    theirs = _raised(_misuse((jax, jnp))[misuse])
    ours = _raised(_misuse((T, tnp))[misuse])
    base = next(b for b in theirs.__mro__ if b in _BASES)
    assert issubclass(ours, base), f"{misuse}: JAX raises {theirs.__name__} ({base.__name__})"
