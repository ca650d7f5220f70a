"""Multinomial, complement and Bernoulli on a real labelled corpus, fed as
people feed it: TF-IDF in float64 and float32 and integer counts straight
from scikit-learn's vectorizers (unsorted indices), and the float64 TF-IDF
matrix with sorted indices for comparison. Fit on 80 % of the documents,
predict the other 20 %.
"""

import pytest


@pytest.mark.parametrize("op", ["fit", "predict"])
@pytest.mark.parametrize("model", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
def test_real_text(time_op, real_text, model, op, bench_backend, input_kind):
    X_train, y_train, X_validation = real_text(input_kind)
    time_op(
        model, op, bench_backend, X_train, y_train, X_predict=X_validation,
        group=f"{model} {op} real text {input_kind}", extra={"input": input_kind, "real": True},
    )
