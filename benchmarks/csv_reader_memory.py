"""Peak memory of reading a numeric CSV file, per ``--chunk-mb``.

    python benchmarks/csv_reader_memory.py [--chunk-mb 4,16,64] [--chunks 4] [--columns 20] [--train] [--json OUT]

The README promises that a command's memory holds "a few chunks, never the file". This measures it
for numeric CSV: a file of ``--chunks`` times the largest chunk (``--columns`` feature columns of
short decimals, "3.142", the costliest per byte, and an integer label) is read, for each chunk size
in a fresh process, through ``parsed_chunks`` as the commands read it (a chunk parsed in the
background while the one before is used; nothing is kept). Reported: the growth of the peak resident
set (``VmHWM``) over the process's resident set just before reading, in MiB and in chunks. With
``--train`` the whole ``nbgpu train --model multinomial`` command is measured the same way (its peak
over that of a process that only imports nbgpu's command line). Not a unit test: a script for figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

# Reads every chunk of the file and forgets it; prints the resident sets before and at the peak.
_READ = r"""
import json, sys
from nbgpu._app.readers import open_reader, parsed_chunks

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))

path, chunk_bytes = sys.argv[1], int(sys.argv[2])
reader = open_reader(path, "csv", chunk_bytes=chunk_bytes)
before = status("VmRSS")
rows = sum(chunk.X.shape[0] for chunk in parsed_chunks(reader, labels=True) if chunk.X is not None)
print(json.dumps({"rows": rows, "before_kb": before, "peak_kb": status("VmHWM")}))
"""

# The command's baseline: what importing its modules takes before any file is read.
_IMPORTS = r"""
import json
import nbgpu._app.cli, nbgpu._app.readers, nbgpu._app.training, scipy.sparse  # noqa: F401
with open("/proc/self/status") as f:
    print(json.dumps({"peak_kb": next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))}))
"""

_TRAIN = r"""
import resource, subprocess, sys, json
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(json.dumps({"peak_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def write_csv(path, nbytes, columns, seed=0):
    """A numeric CSV of about ``nbytes``: a header, ``columns`` features "d.ddd" and a label 0-9."""
    rng = np.random.default_rng(seed)
    rows = 20_000
    values = rng.integers(0, 10_000, size=(rows, columns))
    labels = rng.integers(0, 10, size=rows)
    lines = "".join(",".join(f"{v // 1000}.{v % 1000:03d}" for v in row) + f",{label}\n"
                    for row, label in zip(values.tolist(), labels.tolist()))
    block = lines.encode()
    with open(path, "wb") as f:
        f.write((",".join(f"f{i}" for i in range(columns)) + ",label\n").encode())
        for _ in range(max(1, nbytes // len(block))):
            f.write(block)
    return os.path.getsize(path)


def run_json(code_or_argv):
    argv = [sys.executable, "-c", code_or_argv[0], *code_or_argv[1:]]
    out = subprocess.run(argv, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunk-mb", default="4,16,64", help="comma-separated chunk sizes in MiB")
    parser.add_argument("--chunks", type=int, default=4, help="the file holds this many of the largest chunk")
    parser.add_argument("--columns", type=int, default=20, help="feature columns")
    parser.add_argument("--train", action="store_true", help="also measure the whole `nbgpu train` command")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    sizes = [float(s) for s in args.chunk_mb.split(",")]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "numbers.csv")
        size = write_csv(path, int(args.chunks * max(sizes) * 2**20), args.columns)
        print(f"{path}: {size / 2**20:.0f} MiB, {args.columns} feature columns")
        imports = run_json([_IMPORTS])["peak_kb"] if args.train else None
        print(f"{'chunk MiB':>9} {'reader peak MiB':>16} {'in chunks':>10}"
              + (f" {'train peak MiB':>15} {'in chunks':>10}" if args.train else ""))
        for mb in sizes:
            chunk = int(mb * 2**20)
            read = run_json([_READ, path, str(chunk)])
            grown = (read["peak_kb"] - read["before_kb"]) * 1024
            row = {"chunk_mb": mb, "file_mb": size / 2**20, "rows": read["rows"],
                   "reader_peak_mb": grown / 2**20, "reader_chunks": grown / chunk}
            line = f"{mb:>9g} {grown / 2**20:>16.0f} {grown / chunk:>10.1f}"
            if args.train:
                model = os.path.join(tmp, "model.nbgpu")
                command = [sys.executable, "-m", "nbgpu", "train", path, "-o", model, "--model", "multinomial",
                           "--chunk-mb", f"{mb:g}", "--quiet"]
                trained = (run_json([_TRAIN, *command])["peak_kb"] - imports) * 1024
                row.update(train_peak_mb=trained / 2**20, train_chunks=trained / chunk)
                line += f" {trained / 2**20:>15.0f} {trained / chunk:>10.1f}"
            print(line, flush=True)
            results.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": sys.version.split()[0], "numpy": np.__version__, "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
