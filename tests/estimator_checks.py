"""scikit-learn's estimator checks for models built on the shared core.

Some checks test the core's input validation (its wording for a missing
``y``, object arrays, negative counts, all-zero weights). A model built on
the core shares those results, so such a check is an expected failure of a
new model exactly when the core's own estimator of the same kind fails it
too: computed here, so these expectations follow the core as it is fixed.
"""

from __future__ import annotations

import warnings

from sklearn.utils import estimator_checks

CORE_VALIDATION_CHECKS = (
    "check_all_zero_sample_weights_error",
    "check_dtype_object",
    "check_positive_only_tag_during_fit",
    "check_requires_y_none",
)


def inherited_failures(core_twin, checks=CORE_VALIDATION_CHECKS):
    """``{check name: reason}`` for those of ``checks`` that ``core_twin`` fails."""
    failed = {}
    for name in checks:
        check = getattr(estimator_checks, name)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check(type(core_twin).__name__, core_twin)
        except Exception as exc:  # noqa: BLE001 - any failure of the core counts
            failed[name] = f"the core's {type(core_twin).__name__} fails it too: {type(exc).__name__}"
    return failed
