"""Shared parameter documentation, written once and placed into each model's docstring."""

from __future__ import annotations

import textwrap

# The parameters _BaseNB implements for every model (nbgpu/_base.py); a model
# names the ones its __init__ takes with @shared_parameters_doc.
_PARAMETER_DOCS = {
    "prior_smoothing": """prior_smoothing : float, default=0.0
    Additive smoothing λ >= 0 of the fitted class prior,
    ``P(c) = (N_c + λ) / (N + Kλ)`` (λ = 1 is Laplace's rule; 0 is the
    maximum-likelihood estimate scikit-learn uses). Not combinable with a
    fixed prior (an error); no effect on a uniform prior.""",
    "loss_matrix": """loss_matrix : array-like of shape (n_classes, n_classes), default=None
    Cost of deciding ``classes_[i]`` when the truth is ``classes_[j]``
    (finite, >= 0). ``predict`` returns the class of least expected cost,
    see :meth:`predict_risk`; None is the 0-1 loss (the most probable
    class). Read at predict time, so ``set_params`` needs no refit.""",
    "missing": """missing : {"error", "ignore"}, default="error"
    What a NaN in ``X`` means. "error" rejects it; "ignore" treats it as a
    missing value: it adds nothing to that feature's statistics in fit,
    and that feature is left out of the sample's likelihood in predict.""",
}


def shared_parameters_doc(*names):
    """Class decorator: put the docs of ``names`` at ``{shared_parameters}``."""

    def decorate(cls):
        block = textwrap.indent("\n".join(_PARAMETER_DOCS[n] for n in names), "    ")
        cls.__doc__ = cls.__doc__.replace("    {shared_parameters}", block)
        return cls

    return decorate
