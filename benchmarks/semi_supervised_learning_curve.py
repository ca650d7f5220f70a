"""SemiSupervisedNB against the supervised model on the same labels: a learning curve.

Run: NBGPU_CORPORA=<folder with pydoc-en.jsonl> PYTHONPATH=. python benchmarks/semi_supervised_learning_curve.py
A stratified 80/20 split of the corpus; of the training documents only a
fraction keeps its label (the rest are unlabeled, y = -1). Test accuracy of
MultinomialNB on the labeled documents alone and of SemiSupervisedNB (EM)
on all training documents, mean over seeds.
"""

import sys

import numpy as np
from sklearn.model_selection import train_test_split
from text_corpus import load_counts

import nbgpu


def main(fractions=(0.005, 0.01, 0.05, 0.2), seeds=(0, 1, 2)):
    X, labels, what = load_counts()
    classes, y = np.unique(labels, return_inverse=True)
    print(f"{what}: {X.shape[0]} x {X.shape[1]}, {len(classes)} classes")
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
    print("labeled   supervised MultinomialNB   SemiSupervisedNB (EM)   EM iterations")
    for fraction in fractions:
        sup, em, iters = [], [], []
        for seed in seeds:
            rng = np.random.default_rng(seed)
            keep = rng.random(y_train.shape[0]) < fraction
            y_partial = np.where(keep, y_train, -1)
            sup.append(nbgpu.MultinomialNB(alpha=0.1).fit(X_train[keep], y_train[keep]).score(X_test, y_test))
            model = nbgpu.SemiSupervisedNB(nbgpu.MultinomialNB(alpha=0.1), max_iter=10, unlabeled_weight=0.1)
            model.fit(X_train, y_partial)
            em.append(model.score(X_test, y_test))
            iters.append(model.n_iter_)
        print(f"{fraction:7.1%}   {np.mean(sup):.3f}                      {np.mean(em):.3f}                   "
              f"{np.mean(iters):.1f}")


if __name__ == "__main__":
    main(fractions=(0.01,), seeds=(0,)) if "--quick" in sys.argv else main()
