"""What a model family declares about itself: one :class:`Traits` per model class (``_traits``),
read by the shared machinery (validation, fitting, scoring, model files) instead of a flag each.

A model states only what differs from its parent's, e.g.
``_traits = replace(_BaseNB._traits, lazy_parameters=False)``. Where a trait depends on the
model's parameters (BernoulliNB's ``binarize``), :class:`ByParameters` gives the declared traits
on the class (all model files need) and the adjusted ones on a model.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Callable, Mapping, Optional, Tuple

replace = dataclasses.replace


@dataclasses.dataclass(frozen=True)
class Traits:
    """A model family's declarations, each with its default."""

    #: How check_X takes X: False for a model that only sums and multiplies a sparse X's
    #: stored values (duplicate entries kept); True sums duplicates first.
    acts_on_elements: bool = True
    #: The same for a fit, where it differs (None: ``acts_on_elements``): a model that acts on
    #: elements only when it scores sums a fit's duplicates for nothing.
    fit_acts_on_elements: Optional[bool] = None
    #: Integer X stays integer on the host (no float copy to check and cast back).
    integer_input: bool = False
    #: The TypeError message of a dense-only model given sparse X ({name}: the class name).
    dense_only_message: Optional[str] = None
    #: The parameter that fixes the class prior ("class_prior" for the count models).
    prior_parameter: str = "priors"
    #: The statistics whose arrays (or tuples of arrays) have the class axis first.
    class_axis_statistics: Tuple[str, ...] = ("class_count",)
    #: Statistics entries that may be kept sparse (``sums.py``).
    sparse_statistics: Tuple[str, ...] = ()
    #: Statistics that are the training data itself (NaN where missing), not sums.
    raw_statistics: Tuple[str, ...] = ()
    #: True where a NaN or infinity in X always makes the summed statistics non-finite (not
    #: where X is binarized or looked up): a fit on a device checks X only if they are not.
    sums_show_nonfinite: bool = True
    #: True where a NaN or infinity in a row of X always makes the row's scores non-finite:
    #: scoring then checks each row's best score (n values) instead of the n × d of X.
    nonfinite_reaches_scores: bool = False
    #: False where finalize can fail on the data (a singular covariance): the fit raises.
    lazy_parameters: bool = True
    #: {name: method}: ``getattr(model, method)(stats, attrs, dtype)`` makes a parameter too
    #: large to derive before it is needed; a fit makes it at once, a lazy model at its first read.
    deferred_parameters: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: The memory of the parameters derived from dense statistics, per byte of them (model
    #: files bound a load by it before reading: ``model_files.memory_needed``).
    derived_per_statistic: int = 1
    #: Fitted arrays sparse X is multiplied with: to_device lays them out for the target.
    product_operands: Tuple[str, ...] = ()
    #: True where the density has a class-independent factor h(x) (``base_measure.py``): the
    #: joint log-likelihood adds it, posteriors and decisions are scored without it.
    has_base_measure: bool = False
    #: True where a density may be 0 at a point (``base_measure.py``).
    excludes: bool = False
    #: False where scores are not joint log-likelihoods (ComplementNB): not a ColumnwiseNB part.
    scores_are_log_likelihoods: bool = True

    def __post_init__(self):
        object.__setattr__(self, "deferred_parameters", MappingProxyType(dict(self.deferred_parameters)))


class ByParameters:
    """A ``_traits`` of which some depend on the model's parameters: on the class, the traits
    as declared; on a model, ``adjust(model, declared)``."""

    def __init__(self, declared: Traits, adjust: Callable[[object, Traits], Traits]):
        self.declared, self.adjust = declared, adjust

    def __get__(self, model, owner=None):
        return self.declared if model is None else self.adjust(model, self.declared)
