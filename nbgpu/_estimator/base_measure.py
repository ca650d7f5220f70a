"""Models whose density has a class-independent factor ``h(x)`` (PoissonNB's ``−Σ log xⱼ!``):
scored without it, which posteriors and decisions do not need; added for the joint only."""

from __future__ import annotations

from .scoring import _ScoringMixin, blockwise_collections


class _BaseMeasureMixin:
    """``predict_joint_log_proba`` = scores + ``_log_base_measure`` (n × 1)."""

    def _log_base_measure(self, X, *, xp, device, dtype):
        """``log h(x)`` of every row of a validated block (n × 1)."""
        raise NotImplementedError

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
