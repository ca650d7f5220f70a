"""Meta-estimators that predict with one fitted nbgpu model they hold."""

from __future__ import annotations


class _PredictsWithInnerModel:
    """``predict*`` delegated to ``self._fitted_model()``; input tags copied
    from the inner estimator (``self._inner_estimator()``)."""

    def _fitted_model(self):
        """The fitted inner model; subclasses name the attribute that holds it."""
        model = getattr(self, self._fitted_attribute, None)
        if model is None:
            msg = (
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' "
                "with appropriate arguments before using this estimator."
            )
            from sklearn.exceptions import NotFittedError  # the meta-estimators are scikit-learn's kind

            raise NotFittedError(msg)
        return model

    def predict(self, X):
        """Classes predicted by the fitted model."""
        return self._fitted_model().predict(X)

    def predict_proba(self, X):
        """Class probabilities from the fitted model."""
        return self._fitted_model().predict_proba(X)

    def predict_log_proba(self, X):
        """Log class probabilities from the fitted model."""
        return self._fitted_model().predict_log_proba(X)

    def predict_joint_log_proba(self, X):
        """Joint log-likelihoods ``log P(x, c)`` from the fitted model."""
        return self._fitted_model().predict_joint_log_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self._inner_estimator().__sklearn_tags__()
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.allow_nan = inner.input_tags.allow_nan
        tags.input_tags.positive_only = inner.input_tags.positive_only
        tags.classifier_tags.poor_score = inner.classifier_tags.poor_score
        return tags
