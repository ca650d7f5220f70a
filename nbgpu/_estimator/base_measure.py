"""Models whose density has a class-independent factor ``h(x)``: PoissonNB's ``−Σ log xⱼ!``, and
the support of a model whose densities may be 0 (KernelDensityNB's compact kernels). Posteriors
and decisions are scored without it; it is added for the joint only (``scoring.scores_and_joint``).

Such a model sets the trait ``has_base_measure`` and defines ``_class_free_log(X, *, xp, device, dtype)``,
``log h(x)`` of every row of a validated block (n × 1) but for the support; where a density may be
0 (trait ``excludes``) it also has ``_excluded_and_joint(X, ..., scores=)`` giving ``(z, s)`` as
:func:`least_excluded` takes them (``s`` only where ``scores``)."""

from __future__ import annotations

import math


def least_excluded(z, s, *, xp):
    """Scores from ``(z, s)`` (n × k): per class the count of factors of density 0 and the log of
    the others. The classes with the fewest zeros keep ``s``, the others get −inf: the limit, as
    ε → 0, of densities floored at ε (R naivebayes' ``threshold``). Where some class has no zero
    that is the exact posterior; where none has, it is defined, not 0 / 0."""
    fewest = xp.min(z, axis=1, keepdims=True)
    return xp.where(z == fewest, s, xp.full_like(s, -math.inf))


def log_base_measure(model, X, *, xp, device, dtype):
    """``log h(x)`` (n × 1) of ``model`` at the rows of a validated block: ``-inf`` where every
    class has a density of 0."""
    out = model._class_free_log(X, xp=xp, device=device, dtype=dtype)
    if model._traits.excludes:
        z, _ = model._excluded_and_joint(X, xp=xp, device=device, dtype=dtype, scores=False)
        fewest = xp.min(z, axis=1, keepdims=True)
        out = out + xp.where(fewest == 0, xp.zeros_like(fewest), xp.full_like(fewest, -math.inf))
    return out
