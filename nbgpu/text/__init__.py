"""Text featurization: an exact, faster scikit-learn HashingVectorizer.

``nbgpu.text.HashingVectorizer`` returns the same sparse matrix as
``sklearn.feature_extraction.text.HashingVectorizer`` with tokenisation,
n-grams and MurmurHash3 written as array code (numpy on the CPU threads;
the kernels take an array namespace so they can run on a GPU).
"""

__all__ = ["HashingVectorizer"]


def __getattr__(name):
    # Imported on first use (PEP 562); neither the class nor its hashing
    # imports scikit-learn (_hashing_vectorizer.py).
    if name == "HashingVectorizer":
        from ._hashing_vectorizer import HashingVectorizer

        return HashingVectorizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
