"""Where ``nbgpu bench`` writes its results, and how it prints them.

Results are kept only where asked: in the folder named by ``--out`` (else
``$NBGPU_BENCH_DIR``, if set), under names that carry the size and the time
of the run, or in the files named by ``--json`` and ``--png``; without
any of these only the table is printed. An existing file is never replaced
unless ``--overwrite`` says so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._interop.atomic_files import atomic_output

RESULTS_ENV = "NBGPU_BENCH_DIR"


def default_results_dir():
    """``$NBGPU_BENCH_DIR`` as a Path, else None: without it (or ``--out``)
    nothing is written, rather than into a folder of the user's home unasked."""
    return Path(os.environ[RESULTS_ENV]) if os.environ.get(RESULTS_ENV) else None


def fresh_path(folder, stem, suffix):
    """``folder/stem.suffix``, or ``stem-2``, ``stem-3``, ... if that exists."""
    path = Path(folder) / f"{stem}{suffix}"
    n = 2
    while path.exists():
        path = Path(folder) / f"{stem}-{n}{suffix}"
        n += 1
    return path


def refuse_to_overwrite(paths, *, overwrite):
    """A message naming the first of ``paths`` that exists (unless ``overwrite``), else None."""
    taken = [path for path in paths if path is not None and Path(path).exists()]
    if taken and not overwrite:
        return f"{taken[0]} exists; pass --overwrite to replace it (or name another file)"
    return None


def write_json(results, path):
    """Write ``results`` to ``path`` (never half-written), its folder made if needed."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as f:
        json.dump(results, f, indent=1)


def _ratio(value):
    return "" if value is None else f"{value:.2f}x"


def format_table(results):
    """The results as Markdown: a line per data set, then a table of its rows."""
    lines = []
    for key, data in results["data"].items():
        rows = [r for r in results["rows"] if r["data"] == key]
        if not rows:
            continue
        lines += ["", f"**{key}**: {data['label']}", ""]
        lines.append(
            "| model | op | backend | median (ms) | min (ms) | vs scikit-learn (median) | (min) "
            "| GB/s of X | fit peak extra (MB) | same predictions | target |"
        )
        lines.append("|---|---|---|---:|---:|---:|---:|---:|---:|:---:|---:|")
        for r in rows:
            target = "" if r["target"] is None else f">= {r['target']:g}x"
            peak = "" if r["fit_peak_extra_bytes"] is None else f"{r['fit_peak_extra_bytes'] / 2**20:.0f}"
            same = {None: "", True: "yes", False: "NO"}[r.get("same_predictions")]
            op = r["op"] if r.get("vs_one_chunk") is None else f"{r['op']} ({r['vs_one_chunk']:.2f}x one chunk)"
            lines.append(
                f"| {r['model']} | {op} | {r['backend']} | {1e3 * r['median_s']:.1f} | {1e3 * r['min_s']:.1f} | "
                f"{_ratio(r['speedup_vs_sklearn'])} | {_ratio(r['speedup_vs_sklearn_of_min'])} | "
                f"{r['bandwidth_GBps']:.2f} | {peak} | {same} | {target} |"
            )
    return "\n".join(lines).lstrip("\n")


def plot(results, path, *, models):
    """A bar chart of the speed-ups over scikit-learn (log scale), as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in results["rows"] if r["backend"] != "sklearn" and r["speedup_vs_sklearn"]]
    order = {m: i for i, m in enumerate(models)}
    labels = sorted({(r["data"], r["model"], r["op"]) for r in rows}, key=lambda l: (l[0], order.get(l[1], 99), l[2]))
    backends = sorted({r["backend"] for r in rows})
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(labels)), 4.5))
    width = 0.8 / max(len(backends), 1)
    for i, b in enumerate(backends):
        value = {(r["data"], r["model"], r["op"]): r["speedup_vs_sklearn"] for r in rows if r["backend"] == b}
        xs = [j + i * width for j in range(len(labels))]
        ax.bar(xs, [value.get(lab, 0) for lab in labels], width, label=b)
    targets = {(r["data"], r["model"], r["op"]): r["target"] for r in rows if r["target"]}  # nbgpu-cpu's rows
    for lab, target in targets.items():
        x0 = labels.index(lab) + backends.index("nbgpu-cpu") * width
        ax.plot([x0 - width / 2, x0 + width / 2], [target, target], "k-", lw=2)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("speed-up over scikit-learn (x)")
    ax.set_xticks([j + width * (len(backends) - 1) / 2 for j in range(len(labels))])
    ax.set_xticklabels([f"{d}\n{m.replace('NB', '')}\n{o}" for d, m, o in labels], fontsize=6)
    ax.set_title(f"nbgpu bench, size={results['size']} ({results['devices'].get('nbgpu-cpu', '')})", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path, "wb") as f:
        fig.savefig(f, dpi=120, format="png")
    plt.close(fig)
