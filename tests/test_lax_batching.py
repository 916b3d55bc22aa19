"""transforms.lax under vmap: per-example predicates, frozen finished examples, NaN-free
untaken branches (warnings are errors here: no out-of-domain arithmetic runs either), the
type errors JAX raises, and the primitives' own rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms import lax
from transforms.lax._branch import switch_p
from transforms.lax._construct import Construct, bind_traced
from transforms.lax._loops import fori_loop_p, while_loop_p
from transforms.lax._scan import scan_p, scan_segment_p


def _safe_root(x: Any) -> Any:
    return lax.cond(x > 0, lambda x: tnp.sqrt(x) * tnp.log(x), lambda x: x**2, x)


def _root_unrolled(x: Any) -> Any:
    return tnp.sqrt(x) * tnp.log(x) if x > 0 else x**2


X = np.array([4.0, -1.0, 0.0, 2.5, -3.0])


def test_cond_untaken_branch_is_nan_free_in_every_mode() -> None:
    ref = np.array([float(T.grad(_root_unrolled)(x)) for x in X])
    _close(T.vmap(_safe_root)(X), [float(_root_unrolled(x)) for x in X])
    _close(T.vmap(T.grad(_safe_root))(X), ref)
    _close(T.grad(lambda x: tnp.sum(T.vmap(_safe_root)(x)))(X), ref)
    _close(np.diag(T.jacfwd(T.vmap(_safe_root))(X)), ref)
    hess = np.array([float(T.hessian(_root_unrolled)(x)) for x in X])
    _close(T.vmap(T.hessian(_safe_root))(X), hess)
    _close(np.diag(T.hessian(lambda x: tnp.sum(T.vmap(_safe_root)(x)))(X)), hess)
    series = ([np.ones(5), np.zeros(5)],)
    _, coeffs = T.jet(T.vmap(_safe_root), (X,), series)
    for i, x in enumerate(X):
        _, ref_coeffs = T.jet(_root_unrolled, (x,), ([1.0, 0.0],))
        _close([c[i] for c in coeffs], ref_coeffs)


def test_switch_branches_each_outside_the_others_domain() -> None:
    branches = [tnp.log, tnp.arcsin, lambda x: tnp.sqrt(-x)]
    i = np.array([0, 1, 2, 1, 0])
    x = np.array([3.0, 0.5, -4.0, -0.2, 0.1])
    f = lambda i, x: lax.switch(i, branches, x)
    _close(T.vmap(f)(i, x), [float(branches[k](v)) for k, v in zip(i, x, strict=True)])
    grads = T.vmap(T.grad(f, argnums=1))(i, x)
    _close(grads, [float(T.grad(branches[k])(v)) for k, v in zip(i, x, strict=True)])


def test_nested_vmap_masks_untaken_examples() -> None:
    xs = np.array([[4.0, -1.0], [-2.0, 9.0]])
    ref = np.array([[float(T.grad(_root_unrolled)(x)) for x in row] for row in xs])
    _close(T.vmap(T.vmap(T.grad(_safe_root)))(xs), ref)
    _close(T.grad(lambda x: tnp.sum(T.vmap(T.vmap(_safe_root))(x)))(xs), ref)


def _sqrt_newton(a: Any) -> tuple[Any, Any]:
    """Newton's iteration for sqrt(a), counting its steps: a per-example trip count."""

    def body(c: tuple[Any, Any]) -> tuple[Any, Any]:
        x, k = c
        return (x + a / x) / 2, k + 1

    return lax.while_loop(lambda c: abs(c[0] * c[0] - a) > 1e-10 * a, body, (a, 0))


def _sqrt_newton_unrolled(a: Any) -> tuple[Any, Any]:
    x, k = a, 0
    while abs(x * x - a) > 1e-10 * a:
        x, k = (x + a / x) / 2, k + 1
    return x, k


def test_while_loop_examples_finish_at_their_own_iteration() -> None:
    a = np.array([1.0, 4.0, 1e4, 2.0, 1e-3])
    x, k = T.vmap(_sqrt_newton)(a)
    ref = [_sqrt_newton_unrolled(v) for v in a]
    assert k.tolist() == [r[1] for r in ref] and len(set(k.tolist())) > 2, k
    _close(x, [float(r[0]) for r in ref])
    grads = T.vmap(T.grad(lambda a: _sqrt_newton(a)[0]))(a)
    _close(grads, [float(T.grad(lambda v: _sqrt_newton_unrolled(v)[0])(v)) for v in a])
    # converged, the iterations' derivative is sqrt's (a = 1 runs none: x = a, slope 1)
    np.testing.assert_allclose(grads[1:], 0.5 / np.sqrt(a[1:]), rtol=1e-6)
    _close(
        T.grad(lambda a: tnp.sum(T.vmap(_sqrt_newton)(a)[0]))(a),
        grads,
    )


def test_while_loop_frozen_examples_never_leave_the_body_domain() -> None:
    """x <- sqrt(x - 1) while x > 1.5: 0.5 is done at once, and sqrt(0.5 - 1) is nan."""
    f = lambda x: lax.while_loop(lambda x: x > 1.5, lambda x: tnp.sqrt(x - 1), x)

    def unrolled(x: Any) -> Any:
        while x > 1.5:
            x = tnp.sqrt(x - 1)
        return x

    x = np.array([10.0, 0.5, 50.0])
    _close(T.vmap(f)(x), [float(unrolled(v)) for v in x])
    _close(T.vmap(T.grad(f))(x), [float(T.grad(unrolled)(v)) for v in x])
    _close(T.vmap(T.hessian(f))(x), [float(T.hessian(unrolled)(v)) for v in x])
    # nested vmaps: no example can stand in, the finished ones are masked instead
    xs = np.array([[10.0, 0.5], [50.0, 1.2]])
    ref = [[float(T.grad(unrolled)(v)) for v in row] for row in xs]
    _close(T.vmap(T.vmap(f))(xs), [[float(unrolled(v)) for v in row] for row in xs])
    _close(T.vmap(T.vmap(T.grad(f)))(xs), ref)
    _close(T.grad(lambda xs: tnp.sum(T.vmap(T.vmap(f))(xs)))(xs), ref)


def test_fori_loop_with_per_example_bounds() -> None:
    f = lambda n, x: lax.fori_loop(0, n, lambda i, y: y * x + i, 1.0)

    def unrolled(n: int, x: float) -> Any:
        y = 1.0
        for i in range(n):
            y = y * x + i
        return y

    n, x = np.array([0, 3, 1, 5]), np.array([0.5, 1.5, -2.0, 0.9])
    _close(T.vmap(f)(n, x), [unrolled(int(a), b) for a, b in zip(n, x, strict=True)])
    grads = T.vmap(T.grad(f, argnums=1))(n, x)
    ref = [float(T.grad(lambda b, a=a: unrolled(int(a), b))(b)) for a, b in zip(n, x, strict=True)]
    _close(grads, ref)


def test_vmap_error_names_the_lax_fix() -> None:
    with pytest.raises(T.TracerBoolConversionError, match=r"transforms\.lax\.cond") as info:
        T.vmap(lambda x: x if x > 0 else -x)(np.array([1.0, -1.0]))
    assert "transforms.lax.while_loop" in str(info.value)


def test_type_errors_like_jax() -> None:
    with pytest.raises(TypeError, match="branch 1's output"):
        T.vmap(lambda x: lax.cond(x > 0, lambda x: x, lambda x: tnp.stack([x, x]), x))(X)
    with pytest.raises(TypeError, match="body_fun's output"):
        lax.while_loop(lambda c: c < 3, lambda c: tnp.stack([c, c]), 0.0)
    with pytest.raises(TypeError, match="boolean scalar"):
        lax.while_loop(lambda c: c - 3.0, lambda c: c + 1, 0.0)
    with pytest.raises(TypeError, match="carry output"):
        lax.scan(lambda c, x: (tnp.astype(c, np.float32), x), 0.0, np.ones(3))
    with pytest.raises(ValueError, match="leading axes"):
        lax.scan(lambda c, x: (c, x), 0.0, np.ones(3), length=4)
    with pytest.raises(TypeError, match="integer"):
        lax.switch(1.0, [lambda: 0.0])
    with pytest.raises(TypeError, match="boolean"):
        lax.select(np.array([1, 0]), np.ones(2), np.zeros(2))


class _Weights:
    w: Any = None


def test_scan_checkpoint_converts_traced_values_it_closes_over() -> None:
    """Closed over, ``w`` is an operand of each segment: differentiated exactly (d/dw of the
    unrolled polynomial), as when it travels through the carry."""

    def f(w: Any) -> Any:
        return lax.scan(lambda c, x: (c * w + x, c), 1.0, np.ones(9), checkpoint=True)[0]

    want = T.grad(lambda w: _poly(w))(0.5)
    _close(T.grad(f)(0.5), want)
    g = T.grad(
        lambda w: lax.scan(
            lambda c, x: ((c[0] * c[1] + x, c[1]), None), (1.0, w), np.ones(9), checkpoint=True
        )[0][0]
    )(0.5)
    _close(g, want)


def test_scan_checkpoint_refuses_traced_values_it_reads_otherwise() -> None:
    """Read through an object's attribute, a traced value cannot be made an operand: a
    segment recomputed from its operands would miss its derivative, so it is refused."""

    def f(w: Any) -> Any:
        weights = _Weights()
        weights.w = w
        step = lambda c, x: (c * weights.w + x, c)
        return lax.scan(step, 1.0, np.ones(9), checkpoint=True)[0]

    with pytest.raises(TypeError, match="neither one of its arguments nor reached"):
        T.grad(f)(0.5)


def _poly(w: Any) -> Any:
    c = 1.0
    for _ in range(9):
        c = c * w + 1.0
    return c


def test_plain_operands_bind_the_construct_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """At plain operands a construct is one application of its primitive (what T.jit
    records), its impl running the loop."""
    seen: list[str] = []
    bind = T.Primitive.bind

    def recording(self: T.Primitive, *args: Any, **params: Any) -> Any:
        if self in (while_loop_p, scan_p, switch_p, fori_loop_p):
            assert not any(isinstance(a, T.core.Tracer) for a in args)
            seen.append(self.name)
        return bind(self, *args, **params)

    monkeypatch.setattr(T.Primitive, "bind", recording)
    lax.while_loop(lambda c: c < 5, lambda c: c + 1, 0)
    lax.scan(lambda c, x: (c + x, c), 0.0, np.ones(4))
    lax.cond(True, lambda: 1.0, lambda: 2.0)
    lax.fori_loop(0, 3, lambda i, c: c * 2.0, 1.0)
    assert seen == ["while_loop", "scan", "switch", "fori_loop"]


@pytest.mark.parametrize("primitive", [switch_p, while_loop_p, fori_loop_p, scan_p, scan_segment_p])
def test_primitive_rules_bound_on_traced_operands(primitive: Construct) -> None:
    """Bound directly on traced operands, a construct's rules are those of its function."""

    def fun(a: Any, b: Any) -> tuple[Any, Any]:
        return tnp.sin(a) * b, a * b**2

    def bound(a: Any, b: Any) -> Any:
        u, v = bind_traced(primitive, fun, [a, b], "test")
        return tnp.concatenate([u, v])

    def direct(a: Any, b: Any) -> Any:
        return tnp.concatenate(fun(a, b))

    a, b = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    both = (0, 1)
    for transform in (
        lambda f: T.jacfwd(f, argnums=both),
        lambda f: T.jacrev(f, argnums=both),
        lambda f: T.hessian(f, argnums=both),
        lambda f: T.jacfwd(T.jacrev(f, argnums=both), argnums=both),
    ):
        for got, want in zip(
            _leaves(transform(bound)(a, b)), _leaves(transform(direct)(a, b)), strict=True
        ):
            _close(got, want)
    _close(
        T.vmap(bound, in_axes=(0, None))(np.ones((3, 2)), b),
        T.vmap(direct, in_axes=(0, None))(np.ones((3, 2)), b),
    )
    _close(
        T.jet(lambda a: bound(a, b), (a,), ([np.ones(2), np.ones(2)],))[1],
        T.jet(lambda a: direct(a, b), (a,), ([np.ones(2), np.ones(2)],))[1],
    )
    assert (
        T.jacobian_sparsity(lambda a: bound(a, b))(a).toarray()
        == T.jacobian_sparsity(lambda a: direct(a, b))(a).toarray()
    ).all()


def _leaves(tree: Any) -> list[Any]:
    return T.tree_util.tree_leaves(tree)


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(
        np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=1e-12
    )


def test_scan_edges_like_jax() -> None:
    """Zero steps return the carry and empty outputs of the right shape; ``xs=None`` with
    ``length``; ``map`` with a ``batch_size`` that does not divide the length."""
    carry, ys = lax.scan(lambda c, x: (c + x, (c * x, tnp.stack([x, x]))), 1.0, np.zeros((0,)))
    assert float(carry) == 1.0 and ys[0].shape == (0,) and ys[1].shape == (0, 2)
    carry, ys = lax.scan(lambda c, _: (c * 2, c), 1.0, length=4)
    assert float(carry) == 16.0 and ys.tolist() == [1.0, 2.0, 4.0, 8.0]
    xs = np.arange(10.0).reshape(5, 2)
    _close(lax.map(lambda r: r[0] * r[1], xs, batch_size=2), xs[:, 0] * xs[:, 1])
    _close(lax.map(lambda r: r[0], np.zeros((0, 2)), batch_size=2), np.zeros(0))


def test_no_branch_on_a_linear_map_being_transposed() -> None:
    """Forward mode transposes a custom_vjp's bwd: a lax.cond on its cotangent would trace
    one branch of a map that must be linear, so it is refused, as a Python ``if`` is."""

    @T.custom_vjp
    def f(x: Any) -> Any:
        return x * 2.0

    f.defvjp(
        lambda x: (x * 2.0, None),
        lambda _, ct: (lax.cond(ct > 0, lambda c: c * 2.0, lambda c: c * 3.0, ct),),
    )
    assert float(T.grad(f)(1.0)) == 2.0
    with pytest.raises(T.ConcretizationTypeError):
        T.jvp(f, (1.0,), (1.0,))


def test_importable_as_jax_spells_it() -> None:
    import transforms.lax as lax_module

    assert T.lax is lax_module is lax
    assert set(lax.__all__) == {
        "associative_scan",
        "cond",
        "fori_loop",
        "map",
        "scan",
        "select",
        "select_n",
        "stop_gradient",
        "switch",
        "while_loop",
    }
    assert lax.stop_gradient is T.stop_gradient
