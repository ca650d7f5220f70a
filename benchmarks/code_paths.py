"""How much code one behaviour passes through (issue 36's targets), counted.

    python benchmarks/code_paths.py [--json FILE]

- ``distinct_functions``: nbgpu functions (comprehensions and lambdas included:
  each is a code object) entered during one MultinomialNB fit on a CSR matrix
  (2,000 × 5,000, 1 % stored, 4 classes) and one predict of it, on every
  thread (``sys.setprofile`` and ``threading.setprofile``); ``deepest_stack``:
  the most nbgpu frames on one thread's stack at once. ``named_functions``
  and ``deepest_named_stack`` leave out comprehensions, generator
  expressions and lambdas (Python 3.12 inlines comprehensions: PEP 709; the
  first two counts depend on the interpreter, these do not).
- ``mro``: the nbgpu classes in each public estimator's MRO.
- ``base_names``: the names the estimators' base class defines (methods,
  properties and class-level flags; dunders but ``__getstate__``/
  ``__setstate__``/``__sklearn_tags__`` left out, and ``abc``'s
  ``_abc_impl``, which the class statement does not write). The base class
  is the most derived nbgpu class in every public estimator's MRO
  (``base_class`` names it).
- ``jedi``: whether jedi (where installed) completes ``fit``, ``partial_fit``
  and ``predict_proba`` on ``nbgpu.MultinomialNB()`` and on
  ``from nbgpu import GaussianNB; GaussianNB()``.
- ``lines``: lines of ``nbgpu/**.py``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import threading
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import nbgpu

ROOT = os.path.dirname(nbgpu.__file__)
PUBLIC = ("BernoulliNB", "CategoricalNB", "ColumnwiseNB", "ComplementNB", "GaussianNB", "KernelDensityNB",
          "MultinomialNB", "NormalBayesClassifier", "PoissonNB")


def traced(call):
    """``{"distinct_functions": n, "deepest_stack": n, "named_functions": n,
    "deepest_named_stack": n}`` of ``call()``."""
    seen, deepest, deepest_named = set(), [0], [0]

    def profile(frame, event, arg):
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(ROOT):
            return
        seen.add((code.co_filename, code.co_firstlineno, code.co_name))
        depth = named = 0
        f = frame
        while f is not None:
            if f.f_code.co_filename.startswith(ROOT):
                depth += 1
                named += not f.f_code.co_name.startswith("<")
            f = f.f_back
        deepest[0] = max(deepest[0], depth)
        deepest_named[0] = max(deepest_named[0], named)

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return {"distinct_functions": len(seen), "deepest_stack": deepest[0],
            "named_functions": sum(not name.startswith("<") for _, _, name in seen),
            "deepest_named_stack": deepest_named[0]}


def _nbgpu_classes(cls):
    return [c for c in cls.__mro__ if c.__module__.startswith("nbgpu")]


def _base_class():
    """The most derived nbgpu class that every public estimator derives from."""
    shared = set.intersection(*(set(_nbgpu_classes(getattr(nbgpu, name))) for name in PUBLIC))
    return next(c for c in _nbgpu_classes(nbgpu.MultinomialNB) if c in shared)


def jedi_completes():
    try:
        import jedi
    except ImportError:
        return None
    wanted = ("fit", "partial_fit", "predict_proba")
    sources = ("import nbgpu\nnbgpu.MultinomialNB().", "from nbgpu import GaussianNB\nGaussianNB().")
    return {src: all(name in {c.name for c in jedi.Script(src).complete()} for name in wanted) for src in sources}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the counts here")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    X = sp.random(2000, 5000, density=0.01, format="csr", random_state=0,
                  data_rvs=lambda n: rng.integers(1, 5, n)).astype(np.float64)
    y = rng.integers(0, 4, 2000)
    model = nbgpu.MultinomialNB().fit(X, y)
    model.predict(X)  # imports and first-call set-up outside the count
    base = _base_class()
    kept = {"__getstate__", "__setstate__", "__sklearn_tags__"}
    out = {
        "MultinomialNB.fit(csr)": traced(lambda: nbgpu.MultinomialNB().fit(X, y)),
        "MultinomialNB.predict(csr)": traced(lambda: model.predict(X)),
        "mro": {name: [c.__name__ for c in _nbgpu_classes(getattr(nbgpu, name))] for name in PUBLIC},
        "getattr_hooks": [name for name in PUBLIC
                          if any("__getattr__" in vars(c) for c in getattr(nbgpu, name).__mro__
                                 if c.__module__.startswith("nbgpu"))],
        "getsource_works": all(bool(inspect.getsource(getattr(nbgpu, name))) for name in PUBLIC),
        "base_class": f"{base.__module__}.{base.__qualname__}",
        "base_names": len([n for n in vars(base) if (not n.startswith("__") or n in kept) and n != "_abc_impl"]),
        "jedi": jedi_completes(),
        "lines": sum(len(p.read_text().splitlines()) for p in Path(ROOT).rglob("*.py")),
    }
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
