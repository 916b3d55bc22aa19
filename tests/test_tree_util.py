"""JAX's pytree utilities: ``transforms.tree_util`` (a real submodule) and
``transforms.flatten_util.ravel_pytree``, checked against ``jax.tree_util`` where JAX is
installed and against hand-written results otherwise."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest

import transforms as T
import transforms.numpy as tnp
from transforms.flatten_util import ravel_pytree
from transforms.tree_util import (
    tree_all,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
)


def test_tree_util_is_a_real_submodule() -> None:
    import transforms.core.tree_util as core
    import transforms.tree_util as tu

    assert T.tree_util is tu
    assert set(core.__all__) <= set(tu.__all__)
    assert tu.tree_map is core.tree_map and T.flatten_util.ravel_pytree is ravel_pytree


def test_tree_map_over_several_trees() -> None:
    a = {"w": np.array([1.0, 2.0]), "b": (3.0, [4.0])}
    b = {"w": np.array([10.0, 20.0]), "b": (30.0, [40.0])}
    c = {"w": 1.0, "b": (1.0, [1.0])}
    out = tree_map(lambda x, y, z: x + y - z, a, b, c)
    np.testing.assert_array_equal(out["w"], [10.0, 21.0])
    assert out["b"] == (32.0, [43.0])
    with pytest.raises(ValueError, match="tree_map: structures differ"):
        tree_map(operator.add, a, {"w": 1.0, "b": (1.0, 2.0)})
    with pytest.raises(ValueError, match="tree_map: structures differ"):
        tree_map(operator.add, [1.0], (1.0,))


def test_tree_map_with_a_prefix_tree_as_jax() -> None:
    # a leaf of the first tree receives a whole subtree of the others
    out = tree_map(lambda x, sub: x * len(sub), [1.0, 2.0], [(0, 0, 0), {"a": 0}])
    assert out == [3.0, 2.0]


def test_is_leaf() -> None:
    tree = {"pair": (1.0, 2.0), "x": 3.0}

    def is_pair(t: Any) -> bool:
        return isinstance(t, tuple)

    assert tree_leaves(tree, is_leaf=is_pair) == [(1.0, 2.0), 3.0]
    assert tree_structure(tree, is_leaf=is_pair).num_leaves == 2
    leaves, treedef = tree_flatten(tree, is_pair)
    assert tree_unflatten(treedef, leaves) == tree
    assert tree_map(lambda p: sum(p) if is_pair(p) else p, tree, is_leaf=is_pair) == {
        "pair": 3.0,
        "x": 3.0,
    }
    assert tree_leaves([None, (None,)], is_leaf=lambda t: t is None) == [None, None]


def test_tree_reduce_and_tree_all() -> None:
    assert tree_reduce(operator.add, {"a": 1, "b": (2, [3])}) == 6
    assert tree_reduce(operator.mul, [], 7) == 7
    assert tree_reduce(lambda acc, leaf: acc + [leaf], (1, 2), []) == [1, 2]
    with pytest.raises(TypeError, match="tree_reduce: the tree has no leaves"):
        tree_reduce(operator.add, {})
    assert tree_all([True, (1, 2.0)]) and not tree_all({"a": True, "b": 0}) and tree_all(())


def test_tree_transpose() -> None:
    rows = [{"x": 1, "y": (2, 3)}, {"x": 4, "y": (5, 6)}]
    outer, inner = tree_structure([0, 0]), tree_structure({"x": 0, "y": (0, 0)})
    cols = tree_transpose(outer, inner, rows)
    assert cols == {"x": [1, 4], "y": ([2, 5], [3, 6])}
    assert tree_transpose(inner, outer, cols) == rows
    with pytest.raises(ValueError, match="tree_transpose: structures differ"):
        tree_transpose(outer, inner, [{"x": 1, "y": 2}, {"x": 4, "y": (5, 6)}])


def test_tree_utilities_agree_with_jax() -> None:
    jtu = pytest.importorskip("jax.tree_util")
    trees = [{"a": 1.0, "b": [2.0, (3.0, None)]}, (1.0,), [], {"z": 0.5, "a": [1.5]}]
    for tree in trees:
        assert tree_leaves(tree) == jtu.tree_leaves(tree)
        assert tree_structure(tree).num_leaves == jtu.tree_structure(tree).num_leaves
        assert tree_map(lambda x: 2 * x, tree) == jtu.tree_map(lambda x: 2 * x, tree)
    rows = [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}]
    ours = tree_transpose(tree_structure([0] * 3), tree_structure({"x": 0, "y": 0}), rows)
    theirs = jtu.tree_transpose(jtu.tree_structure([0] * 3), jtu.tree_structure(rows[0]), rows)
    assert ours == theirs


# ---- ravel_pytree -------------------------------------------------------------------------------
def test_ravel_pytree_round_trip_and_dtypes() -> None:
    tree = {"w": np.arange(6.0).reshape(2, 3), "b": np.float32(2.5), "n": [np.array([1, 2])]}
    flat, unravel = ravel_pytree(tree)
    # leaves in sorted-key order: b, n, w; the common dtype of float32, int64, float64
    np.testing.assert_array_equal(flat, [2.5, 1.0, 2.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    assert flat.dtype == np.float64
    back = unravel(flat)
    assert back["b"].dtype == np.float32 and back["n"][0].dtype == np.int64
    np.testing.assert_array_equal(back["w"], tree["w"])
    assert back["b"].shape == () and back["n"][0].tolist() == [1, 2]
    with pytest.raises(ValueError, match="expected a 1-d array of 9 elements, got shape"):
        unravel(np.zeros(8))
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and unravel(flat) == {}
    flat32, _ = ravel_pytree((np.ones(2, np.float32), np.float32(1.0)))
    assert flat32.dtype == np.float32


def test_ravel_pytree_agrees_with_jax() -> None:
    jfu = pytest.importorskip("jax.flatten_util")
    tree = {"w": np.arange(6.0).reshape(2, 3), "b": (np.array(2.5), [np.ones(2)])}
    flat, _ = ravel_pytree(tree)
    np.testing.assert_array_equal(flat, np.asarray(jfu.ravel_pytree(tree)[0]))


def test_ravel_pytree_is_differentiable() -> None:
    params = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": np.array([0.5, -1.0])}

    def loss(p: Any) -> Any:
        return tnp.sum(p["w"] ** 2) + tnp.sum(tnp.sin(p["b"]))

    flat, unravel = ravel_pytree(params)
    g_flat = T.grad(lambda v: loss(unravel(v)))(flat)
    g = T.grad(loss)(params)
    np.testing.assert_allclose(g_flat, ravel_pytree(g)[0], rtol=1e-15)
    # raveling inside a transform: the flat array of traced leaves is traced
    jac = T.jacfwd(lambda p: ravel_pytree(p)[0])(params)
    np.testing.assert_array_equal(jac["w"].reshape(6, 4), np.eye(6)[:, 2:])
    np.testing.assert_array_equal(jac["b"], np.eye(6)[:, :2])
