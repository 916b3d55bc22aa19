"""``transforms.tree_util``: JAX's pytree utilities (``from transforms.tree_util import tree_map``).

A real submodule re-exporting ``transforms.core.tree_util``, where the implementation lives
(the core flattens every transform's inputs and outputs with it).
"""

from transforms.core.tree_util import *  # noqa: F403
from transforms.core.tree_util import __all__ as __all__
