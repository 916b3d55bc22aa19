"""``transforms.scipy.stats``: ``scipy.stats``'s distributions as modules of functions, as
autograd and JAX have them (``from transforms.scipy.stats import norm``; ``norm.logpdf(x,
loc, scale)``), differentiable in the data and the parameters at every order.

Each function takes SciPy's arguments and defaults and broadcasts them as SciPy does; values
outside the support and invalid parameters give SciPy's results (0, ``-inf``, 1, NaN).
Derivatives that need a function without a closed-form derivative (a regularized incomplete
gamma or beta function in its shape parameters: ``gamma.cdf`` in ``a``, ``t.cdf`` in ``df``,
``beta.cdf`` in ``a`` and ``b``...) raise ``NoRuleError`` naming that function, never a wrong
number.
"""

from . import bernoulli as bernoulli
from . import beta as beta
from . import binom as binom
from . import cauchy as cauchy
from . import chi2 as chi2
from . import dirichlet as dirichlet
from . import expon as expon
from . import gamma as gamma
from . import laplace as laplace
from . import logistic as logistic
from . import multivariate_normal as multivariate_normal
from . import nbinom as nbinom
from . import norm as norm
from . import poisson as poisson
from . import t as t
from . import uniform as uniform
