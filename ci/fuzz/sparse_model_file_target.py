"""Fuzz campaign: format-2 model files (statistics stored sparse) load or are refused cleanly.

The seeds (``tests/model_file_fuzzing.py``: ``sparse_seed_files``) are
models whose statistics are stored as ``<key>.indices`` / ``<key>.values``
with a header entry ``{"sparse": {"shape": ..., "indices": ..., "values": ...}}``:
MultinomialNB, ComplementNB and BernoulliNB of 8 classes x 2**20 features
fitted on sparse data, and a mostly-zeros MultinomialNB. Each case stacks
one to three format-2 mutations (``SPARSE_MUTATIONS``: the sparse shape set
to odd, huge (3 x (2**31-1)), negative or non-int values; the members
swapped, shared or missing; the indices reversed, duplicated, out of range,
of other dtypes or lengths; the values of other dtypes, NaN, fewer; the
member bytes truncated or flipped; the entry moved or the format version
changed), or one generic mutation of ``tests/model_file_edits.py``.

The property (``check_sparse_outcome``): a model that loads and predicts
finite probabilities, or a ValueError naming the file, within 2 s and 256
MiB traced allocations. The cases run in a worker process whose address
space is capped (``RLIMIT_AS``, ``--memory-limit`` MiB), so an allocation
the tracer does not see cannot take the machine; a worker that dies is a
failure of its case, and a fresh worker goes on with the next one.

    python ci/fuzz/sparse_model_file_target.py --survey 20000
    python ci/fuzz/sparse_model_file_target.py --minutes 5          # as many cases as fit
    python ci/fuzz/sparse_model_file_target.py --replay 1234        # one case, in process, with its traceback

Case ``i`` makes its choices with ``random.Random(i)``; the quick subset
in ``tests/test_fuzz_round3.py`` runs the same cases by number.
"""

from __future__ import annotations

import argparse
import collections
import json
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2] / "tests"))


def _seeds(folder):
    from model_file_fuzzing import sparse_seed_files

    return [path.read_bytes() for path in sparse_seed_files(folder)]


def run_case(seeds, case, folder, names=None):
    from model_file_fuzzing import check_sparse_outcome, mutated_sparse

    name, data = mutated_sparse(seeds, case)
    if names is not None:
        names.append(name)
    path = Path(folder) / "case.nbgpu"
    path.write_bytes(data)
    return name, check_sparse_outcome(path)


def worker(first, last, memory_mb):
    """Run cases ``first`` .. ``last - 1``, one JSON line before and after each."""
    if memory_mb:
        limit = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    folder = Path(tempfile.mkdtemp(prefix="nbgpu-fuzz2-"))
    seeds = _seeds(folder)
    for case in range(first, last):
        print(json.dumps({"start": case}), flush=True)
        t = time.perf_counter()
        names = []
        try:
            name, outcome = run_case(seeds, case, folder, names)
        except Exception as exc:  # noqa: BLE001  (any failure of the property: report it, go on)
            name, outcome = (names or ["?"])[0], f"FAILED {type(exc).__name__}: {exc}"[:300]
        print(json.dumps({"case": case, "name": name, "outcome": outcome, "s": round(time.perf_counter() - t, 3)}), flush=True)
    return 0


def campaign(first, n_cases, deadline, memory_mb, batch=2000):
    tally, failures, slowest, done = collections.Counter(), [], (0.0, None), 0
    case = first
    while case < first + n_cases and time.monotonic() < deadline:
        last = min(case + batch, first + n_cases)
        cmd = [sys.executable, str(HERE), "--worker", str(case), str(last), "--memory-limit", str(memory_mb)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        started = None
        for line in proc.stdout:
            rec = json.loads(line)
            if "start" in rec:
                started = rec["start"]
                continue
            started, done = None, done + 1
            mutation = rec["name"].split("+")[0].split(" ")[0] if rec["name"] else "?"
            outcome = rec["outcome"]
            tally[mutation, outcome if not outcome.startswith("FAILED") else outcome.split(":")[0]] += 1
            if outcome.startswith("FAILED"):
                failures.append((rec["case"], rec["name"], outcome))
            if rec["s"] > slowest[0]:
                slowest = (rec["s"], rec["case"])
            if time.monotonic() >= deadline:
                proc.kill()
                break
        rc = proc.wait()
        if started is not None and rc not in (0, -9):  # the worker died in a case
            done += 1
            tally["?", f"FAILED worker exit {rc}"] += 1
            failures.append((started, "?", f"FAILED the worker exited with {rc}"))
            case = started + 1
        else:
            case = last
    print(f"{done} cases (from case {first}), worker address space {memory_mb} MiB; slowest {slowest[0]} s (case {slowest[1]})")
    from model_file_fuzzing import print_campaign

    return print_campaign(tally, failures)


def replay(case):
    folder = Path(tempfile.mkdtemp(prefix="nbgpu-fuzz2-"))
    seeds = _seeds(folder)
    try:
        print(case, *run_case(seeds, case, folder))
    except Exception:  # noqa: BLE001  (show whatever it is)
        traceback.print_exc()
        return 1
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--survey", type=int, help="run this many cases")
    parser.add_argument("--minutes", type=float, help="run cases until this much time has passed")
    parser.add_argument("--first", type=int, default=0, help="the first case number")
    parser.add_argument("--replay", type=int)
    parser.add_argument("--memory-limit", type=int, default=3072, help="the worker's address space, MiB (0: none)")
    parser.add_argument("--worker", type=int, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(*args.worker, args.memory_limit)
    if args.replay is not None:
        return replay(args.replay)
    if args.survey is None and args.minutes is None:
        parser.error("give --survey N, --minutes M or --replay CASE")
    deadline = time.monotonic() + (args.minutes * 60 if args.minutes else float("inf"))
    return campaign(args.first, args.survey or 10**12, deadline, args.memory_limit)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
