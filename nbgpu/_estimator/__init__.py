"""The estimator protocol: the abstract base every model implements, scoring, merging and
conversion to scikit-learn. Imports only the array layer and validation."""
