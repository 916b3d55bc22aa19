"""``T.jit`` (staging: the package is not named ``jit``, so that ``transforms.jit`` is only ever the
function): record a function's primitives once, replay them at NumPy speed, never stale."""

from ._api import Jitted as Jitted
from ._api import JitWarning as JitWarning
from ._api import Lowered as Lowered
from ._api import jit as jit
from ._api import replayed as replayed
from ._cache import JitStats as JitStats

__all__ = ["JitStats", "JitWarning", "Jitted", "Lowered", "jit", "replayed"]
