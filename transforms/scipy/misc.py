"""``transforms.scipy.misc``: HIPS/autograd's ``autograd.scipy.misc``, whose one function,
``logsumexp``, SciPy has since moved to ``scipy.special`` (and removed ``scipy.misc``)."""

from ._logistic import logsumexp as logsumexp

__all__ = ["logsumexp"]
