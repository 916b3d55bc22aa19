"""``transforms.nn``: ``jax.nn``'s names, differentiable in every mode and nesting
(``import transforms.nn as nn`` in place of ``jax.nn``).

Needs SciPy, the ``scipy`` extra (``sigmoid`` is ``transforms.scipy.special.expit``).
"""

from . import _functions
from ._functions import *  # noqa: F403

__all__: list[str] = list(_functions.__all__)
