"""scikit-learn's decoding and preprocessing of documents, with Python's string methods."""

from __future__ import annotations

import unicodedata

__all__ = ["decoded", "prepared"]


class _CombiningDropper(dict):
    """``str.translate`` table deleting combining characters, filled on first sight."""

    def __missing__(self, key):
        value = None if unicodedata.combining(chr(key)) else key
        self[key] = value
        return value


_DROP_COMBINING = _CombiningDropper()


def _strip_accents_unicode(doc):
    """Exactly scikit-learn's ``strip_accents_unicode``, with its per-character
    Python loop replaced by ``str.translate``."""
    if doc.isascii():
        return doc
    return unicodedata.normalize("NFKD", doc).translate(_DROP_COMBINING)


def decoded(docs, plan):
    """The documents as ``str`` (``bytes`` decoded as scikit-learn does)."""
    if not plan.has_bytes:
        return docs
    return [d.decode(plan.encoding, plan.decode_error) if isinstance(d, bytes) else d for d in docs]


def prepared(docs, plan):
    """The preprocessed strings of decoded documents (scikit-learn's preprocessor)."""
    if plan.lowercase:
        docs = [d.lower() for d in docs]
    strip = plan.strip_accents
    if strip == "ascii":
        # scikit-learn's own, imported when first needed: the command line hashes text before loading it
        from sklearn.feature_extraction.text import strip_accents_ascii as strip
    elif strip == "unicode":
        strip = _strip_accents_unicode
    return docs if strip is None else [strip(d) for d in docs]
