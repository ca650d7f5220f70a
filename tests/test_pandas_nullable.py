"""pandas' nullable columns (Int64, Float64, boolean) as input: pd.NA is NaN.

scikit-learn reads them as float64 with NaN; every model then refuses the
NaN with a ValueError, or, with ``missing="ignore"``, treats it as missing,
exactly as the same values given as float64 NaN.
"""

from __future__ import annotations

import numpy as np
import pytest

import nbgpu

pd = pytest.importorskip("pandas")

ALL = ["GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB", "PoissonNB"]


def _frames():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 4, (40, 3)).astype(np.float64)
    values[[3, 17], [0, 2]] = np.nan
    nullable = pd.DataFrame({
        "f": pd.array(values[:, 0], dtype="Float64"),
        "i": pd.array([None if np.isnan(v) else int(v) for v in values[:, 1]], dtype="Int64"),
        "g": pd.array([None if np.isnan(v) else int(v) for v in values[:, 2]], dtype="Int64"),
    })
    return nullable, pd.DataFrame(values, columns=["f", "i", "g"]), np.arange(40) % 2


@pytest.mark.parametrize("name", ALL)
def test_pd_na_is_refused_as_nan_is(name):
    nullable, _, y = _frames()
    with pytest.raises(ValueError, match="NaN"):
        getattr(nbgpu, name)().fit(nullable, y)


def test_pd_na_is_missing_where_nan_is():
    nullable, floats, y = _frames()
    a = nbgpu.GaussianNB(missing="ignore").fit(nullable, y)
    b = nbgpu.GaussianNB(missing="ignore").fit(floats, y)
    np.testing.assert_array_equal(a.theta_, b.theta_)
    np.testing.assert_allclose(a.predict_proba(nullable), b.predict_proba(floats), rtol=1e-14)
    assert list(a.feature_names_in_) == ["f", "i", "g"]


def test_strings_in_a_frame_are_still_refused_by_name():
    frame = pd.DataFrame({"a": pd.array(["x", None], dtype="string"), "b": [1.0, 2.0]})
    with pytest.raises((TypeError, ValueError), match="`X` must hold numbers"):
        nbgpu.GaussianNB().fit(frame, [0, 1])
