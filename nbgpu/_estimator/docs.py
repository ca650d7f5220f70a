"""Shared parameter documentation, written once and placed into each model's docstring."""

from __future__ import annotations

import textwrap

# Parameters documented alike in several models; the last three _BaseNB implements for all.
_PARAMETER_DOCS = {
    "force_alpha": """force_alpha : bool, default=True
    If False and alpha is less than 1e-10, it is set to 1e-10 with a
    warning; if True, alpha is kept as given.""",
    "fit_prior": """fit_prior : bool, default=True
    Whether to learn class prior probabilities; if False a uniform prior
    is used.""",
    "class_prior": """class_prior : array-like of shape (n_classes,), default=None
    Prior probabilities of the classes; not adjusted to the data.""",
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
    """Class decorator: put the docs of ``names`` at ``{shared_parameters}``, and each
    shared doc at a ``{name}`` line of its own."""

    def decorate(cls):
        doc = cls.__doc__.replace("{shared_parameters}", "\n    ".join("{" + n + "}" for n in names))
        for name, text in _PARAMETER_DOCS.items():
            doc = doc.replace("    {" + name + "}", textwrap.indent(text, "    "))
        cls.__doc__ = doc
        return cls

    return decorate
