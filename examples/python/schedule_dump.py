"""schedule_dump.py: what the compiler did with a small program, stage by stage.

HEDRA_DUMP (docs/dumps.md) is read at every compile, so setting it from Python works: each
stage (the lazy graph, the partition into kernels, each kernel's iteration domains, schedule
tree and generated C++) goes to a numbered file. This script compiles relu(x @ w + b) and a
row-wise softmax, then prints the partition and the first kernel's schedule.

    python examples/python/schedule_dump.py [--dir DIR] [--all]
"""
import argparse
import os
import pathlib
import tempfile

import hedra as hd
from hedra import nn


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default="", help="where the dump files go (default: a temporary folder)")
    p.add_argument("--all", action="store_true", help="print every stage, not only the schedule")
    args = p.parse_args()
    folder = pathlib.Path(args.dir or tempfile.mkdtemp(prefix="hedra-dump-"))
    os.environ["HEDRA_DUMP"] = str(folder)

    x = hd.placeholder((64, 128), name="x")
    w = hd.placeholder((32, 128), name="w")
    b = hd.placeholder((32,), name="b")
    y = nn.softmax(hd.relu(nn.linear(x, w, b)), axis=1)
    hd.compile(y, [x, w, b])
    del os.environ["HEDRA_DUMP"]

    files = sorted(folder.iterdir())
    print(f"{len(files)} dump files in {folder}:")
    for f in files:
        print("  " + f.name)
    wanted = files if args.all else [f for f in files if "partition" in f.name or
                                     ("schedule" in f.name and "-k0-" in f.name)]
    for f in wanted:
        print(f"\n== {f.name} ==")
        print(f.read_text().rstrip())


if __name__ == "__main__":
    main()
