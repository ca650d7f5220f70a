"""Fuzz target: every mutation of a valid model file loads or is refused with a ValueError.

The same seeds, mutations and property as ``tests/test_model_file_fuzz.py``
(``tests/model_file_edits.py``, ``tests/model_file_fuzzing.py``), for runs
of hours instead of the test's fixed budget of 200 cases.

With atheris (libFuzzer), for hours, in a fresh directory::

    pip install atheris
    mkdir -p /tmp/nbgpu-fuzz/corpus
    python ci/fuzz/model_file_target.py -max_total_time=14400 -rss_limit_mb=4096 -max_len=65536 \\
        -timeout=30 -print_final_stats=1 /tmp/nbgpu-fuzz/corpus

Each input drives one of two things: the structured mutations of the
seeds (zip headers, members, the JSON header, arrays with recomputed
checksums), or, for inputs that begin with byte 0, the rest of the input
taken as a file itself (libFuzzer's own byte mutations; the seed files are
written to the corpus directory at start). A failure (any exception other
than ValueError from ``load``, a message that does not name the file, more
than 64 MiB allocated, or a loaded model that cannot predict) stops the run
and leaves the input as ``crash-*`` for ``python ci/fuzz/model_file_target.py
crash-...``.

Without atheris, replay random mutations (case ``i`` uses ``random.Random(i)``)
and print how they ended, per mutation::

    python ci/fuzz/model_file_target.py --survey 20000
    python ci/fuzz/model_file_target.py --replay 1234     # one case, with its traceback

Format-2 files (statistics stored sparse) have a campaign of their own,
``ci/fuzz/sparse_model_file_target.py``; long tokens in the hashing
vectorizer, ``ci/fuzz/text_hashing_target.py``.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

import model_file_edits as edits
from model_file_fuzzing import check_outcome, mutated, print_campaign, seed_files

WORK = Path(tempfile.mkdtemp(prefix="nbgpu-fuzz-"))
(WORK / "seeds").mkdir()
SEEDS = [path.read_bytes() for path in seed_files(WORK / "seeds")]
CASE = WORK / "case.nbgpu"


def run_case(data):
    """The outcome of loading the file ``data``; raises on a failure of the property."""
    CASE.write_bytes(data)
    return check_outcome(CASE)


def test_one_input(data):
    """The atheris entry point."""
    import atheris

    fdp = atheris.FuzzedDataProvider(data)
    if data[:1] == b"\0":
        run_case(data[1:])
        return
    pick = edits.Picker(lambda lo, hi: fdp.ConsumeIntInRange(lo, hi))
    seed = SEEDS[pick.integer(0, len(SEEDS) - 1)]
    run_case(pick.choice(edits.MUTATIONS)(seed, pick))


def survey(n_cases):
    tally, failures = collections.Counter(), []
    for case in range(n_cases):
        name, data = mutated(SEEDS, case)
        try:
            tally[name, run_case(data)] += 1
        except Exception as exc:  # noqa: BLE001  (any failure of the property: count it, go on)
            tally[name, f"FAILED {type(exc).__name__}"] += 1
            failures.append((case, name, f"{type(exc).__name__}: {exc}"[:160]))
    print(f"{n_cases} cases")
    return print_campaign(tally, failures)


def replay(case):
    name, data = mutated(SEEDS, case)
    print(f"case {case}: {name}, {len(data)} bytes")
    try:
        print(run_case(data))
    except Exception:  # noqa: BLE001  (show whatever it is)
        traceback.print_exc()
        return 1
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--survey", type=int)
    parser.add_argument("--replay", type=int)
    args, rest = parser.parse_known_args(argv)
    if args.survey is not None:
        return survey(args.survey)
    if args.replay is not None:
        return replay(args.replay)
    import atheris

    corpus = [Path(a) for a in rest if not a.startswith("-") and Path(a).is_dir()]
    for directory in corpus[:1]:
        for i, seed in enumerate(SEEDS):
            (directory / f"seed-{i}").write_bytes(b"\0" + seed)
    atheris.instrument_all()  # coverage of nbgpu, numpy's Python code, zipfile, json: libFuzzer's guide
    atheris.Setup([sys.argv[0], *rest], test_one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
