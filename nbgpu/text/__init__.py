"""Text featurization: an exact, faster scikit-learn HashingVectorizer.

``nbgpu.text.HashingVectorizer`` returns the same sparse matrix as
``sklearn.feature_extraction.text.HashingVectorizer`` with tokenisation,
n-grams and MurmurHash3 written as array code (numpy on the CPU threads;
the kernels take an array namespace so they can run on a GPU).
"""

from ._hashing_vectorizer import HashingVectorizer

__all__ = ["HashingVectorizer"]
