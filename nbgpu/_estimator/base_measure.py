"""Models whose density has a class-independent factor ``h(x)``: PoissonNB's ``−Σ log xⱼ!``, and
the support of a model whose densities may be 0 (KernelDensityNB's compact kernels). Posteriors
and decisions are scored without it; it is added for the joint only."""

from __future__ import annotations

import math

from .scoring import _ScoringMixin, blockwise_collections


def least_excluded(z, s, *, xp):
    """Scores from ``(z, s)`` (n × k): per class the count of factors of density 0 and the log of
    the others. The classes with the fewest zeros keep ``s``, the others get −inf: the limit, as
    ε → 0, of densities floored at ε (R naivebayes' ``threshold``). Where some class has no zero
    that is the exact posterior; where none has, it is defined, not 0 / 0."""
    fewest = xp.min(z, axis=1, keepdims=True)
    return xp.where(z == fewest, s, xp.full_like(s, -math.inf))


class _BaseMeasureMixin:
    """``predict_joint_log_proba`` = scores + ``_log_base_measure`` (n × 1)."""

    # True where a density may be 0: the model then has ``_excluded_and_joint(X, ..., scores=)``
    # giving ``(z, s)`` as :func:`least_excluded` takes them (``s`` only where ``scores``).
    _excludes = False

    def _class_free_log(self, X, *, xp, device, dtype):
        """``log h(x)`` of every row of a validated block (n × 1), the support aside."""
        return xp.zeros((X.shape[0], 1), dtype=dtype, device=device)

    def _log_base_measure(self, X, *, xp, device, dtype):
        out = self._class_free_log(X, xp=xp, device=device, dtype=dtype)
        if self._excludes:  # h(x) = 0 where every class has a density of 0 at x
            z, _ = self._excluded_and_joint(X, xp=xp, device=device, dtype=dtype, scores=False)
            fewest = xp.min(z, axis=1, keepdims=True)
            out = out + xp.where(fewest == 0, xp.zeros_like(fewest), xp.full_like(fewest, -math.inf))
        return out

    def _scores_and_joint(self, X):
        # Posteriors come from the scores without log h(x): a large
        # class-independent term added first would cost float32 precision.
        jll, _, _ = self._score_blocks(X)
        X, xp, device = self._validated_for_scoring(X)  # _score_blocks checked the values
        return jll, jll + self._log_base_measure(self._model_input(X, xp), xp=xp, device=device, dtype=jll.dtype)

    @blockwise_collections
    def predict_joint_log_proba(self, X):
        return self._scores_and_joint(X)[1]


_BaseMeasureMixin.predict_joint_log_proba.__doc__ = _ScoringMixin.predict_joint_log_proba.__doc__
