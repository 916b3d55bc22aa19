"""tanh and its first six derivatives, by nesting ``grad`` six deep and ``vmap``-ing each.

Every derivative of tanh is a polynomial in t = tanh(x): P_0(t) = t and
P_{k+1}(t) = P_k'(t) (1 - t^2) by the chain rule. The nested ``grad``s are compared with
those closed forms on a grid, and the figure shows all seven curves.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.polynomial.polynomial as poly
from _cli import new_figure, parse_args, save

import transforms as T
import transforms.numpy as tnp

ORDER = 6


def nested_derivatives(f: Callable[[T.Array], T.Array], order: int) -> list[Callable[..., T.Array]]:
    """``[f, f', f'', ...]`` up to ``order``, each mapped over a vector of points."""
    scalar = [f]
    for _ in range(order):
        scalar.append(T.grad(scalar[-1]))  # a scalar function of a scalar: grad of grad ...
    return [T.vmap(g) for g in scalar]


def closed_forms(order: int) -> list[np.ndarray]:
    """Coefficients (lowest first) of P_0 ... P_order in t = tanh(x)."""
    one_minus_t2 = np.array([1.0, 0.0, -1.0])
    polys = [np.array([0.0, 1.0])]
    for _ in range(order):
        polys.append(poly.polymul(poly.polyder(polys[-1]), one_minus_t2))
    return polys


def main() -> None:
    args = parse_args(__doc__)
    x = np.linspace(-7.0, 7.0, 60 if args.quick else 400)
    values = [np.asarray(d(x)) for d in nested_derivatives(tnp.tanh, ORDER)]

    t = np.tanh(x)
    for k, (value, coeffs) in enumerate(zip(values, closed_forms(ORDER), strict=True)):
        exact = poly.polyval(t, coeffs)
        err = np.max(np.abs(value - exact)) / max(1.0, np.max(np.abs(exact)))
        print(f"d^{k} tanh: max |value| {np.max(np.abs(exact)):8.3f}, relative error {err:.1e}")
        assert err < 1e-12, f"derivative {k} of tanh disagrees with its closed form ({err:.1e})"

    figure = new_figure()
    ax = figure.add_subplot()
    for k, value in enumerate(values):
        ax.plot(x, value, label="tanh" if k == 0 else f"order {k}")
    ax.set(xlabel="x", title="tanh and its first six derivatives (nested grad, vmapped)")
    ax.set_ylim(-5, 5)
    ax.legend(loc="upper right", ncol=2, fontsize="small")
    save(figure, args.figures, "tanh_derivatives.png")
    print("all derivatives match their closed forms")


if __name__ == "__main__":
    main()
