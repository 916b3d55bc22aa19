"""Per-example gradients with ``vmap(grad)``, clipped per example (DP-SGD's inner step).

``T.vmap(T.grad(loss), in_axes=(None, 0, 0))`` gives one gradient per example in a single
vectorised pass: no Python loop over the batch. They are checked against a loop of
``grad`` calls, their mean against the batch gradient, then each is clipped to norm at most
``CLIP`` (the norm over the whole parameter pytree), averaged, noised, and used to train a
small classifier on generated data; the loss must go down.
"""

from __future__ import annotations

import numpy as np
from _cli import parse_args

import transforms as T
import transforms.numpy as tnp

Params = dict[str, T.Array]
CLIP, NOISE, LEARNING_RATE = 1.0, 0.1, 0.5


def loss(params: Params, x: T.Array, y: T.Array) -> T.Array:
    """Logistic loss of a one-hidden-layer network on one example (or the mean of a batch)."""
    hidden = tnp.tanh(x @ params["w1"] + params["b1"])
    logit = hidden @ params["w2"] + params["b2"]
    return tnp.mean(tnp.logaddexp(0.0, -y * logit))


per_example_grads = T.vmap(T.grad(loss), in_axes=(None, 0, 0))


def clipped_mean(grads: Params, clip: float) -> Params:
    """Scale each example's gradient to norm <= ``clip``, then average over the batch."""
    sq_norms = sum(tnp.sum(tnp.reshape(g, (g.shape[0], -1)) ** 2, axis=1) for g in grads.values())
    scale = tnp.minimum(1.0, clip / (tnp.sqrt(sq_norms) + 1e-12))  # one factor per example
    return {
        k: tnp.mean(tnp.reshape(scale, (-1,) + (1,) * (g.ndim - 1)) * g, axis=0)
        for k, g in grads.items()
    }


def main() -> None:
    args = parse_args(__doc__)
    rng = np.random.default_rng(0)
    n, d, h = (64, 5, 8) if args.quick else (512, 10, 32)
    X = rng.standard_normal((n, d))
    teacher = rng.standard_normal((d, 4))  # labels from a random tanh network
    y = np.sign(np.tanh(X @ teacher) @ rng.standard_normal(4))  # in {-1, +1}
    params: Params = {
        "w1": rng.standard_normal((d, h)) / np.sqrt(d),
        "b1": np.zeros(h),
        "w2": rng.standard_normal(h) / np.sqrt(h),
        "b2": np.zeros(()),
    }

    grads = per_example_grads(params, X, y)
    looped = [T.grad(loss)(params, X[i], y[i]) for i in range(n)]
    for k, g in grads.items():
        assert g.shape == (n, *params[k].shape)
        assert np.allclose(g, np.stack([lg[k] for lg in looped]), rtol=1e-12, atol=1e-14)
        assert np.allclose(np.mean(g, axis=0), T.grad(loss)(params, X, y)[k], atol=1e-14)
    print(f"per-example gradients of {n} examples: equal to a loop of grad, mean = batch grad")

    clipped = clipped_mean(grads, CLIP)
    keys = sorted(grads)
    flat = np.concatenate([np.asarray(grads[k]).reshape(n, -1) for k in keys], axis=1)
    norms = np.linalg.norm(flat, axis=1)  # each example's gradient norm, over all parameters
    reference = np.mean(flat * np.minimum(1.0, CLIP / norms)[:, None], axis=0)
    got = np.concatenate([np.ravel(clipped[k]) for k in keys])
    print(f"per-example gradient norms: median {np.median(norms):.3f}, max {norms.max():.3f}")
    assert np.allclose(got, reference, rtol=1e-10) and np.linalg.norm(got) <= CLIP

    initial = float(loss(params, X, y))
    for _ in range(30 if args.quick else 300):
        batch = rng.choice(n, size=32, replace=False)
        step = clipped_mean(per_example_grads(params, X[batch], y[batch]), CLIP)
        noisy = T.tree_util.tree_map(
            lambda g: g + NOISE * CLIP / 32 * rng.standard_normal(g.shape), step
        )
        params = T.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, noisy)
    final = float(loss(params, X, y))
    print(f"training with clipped, noised per-example gradients: loss {initial:.3f} -> {final:.3f}")
    assert final < 0.8 * initial, "the loss did not go down"


if __name__ == "__main__":
    main()
