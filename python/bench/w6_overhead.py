"""W6 from Python: the per-call cost of a compiled chain of 10 elementwise ops on 1000 f32
elements (x + y, * x, - y, * 0.5, + 1, relu, tanh, * y, + x, neg), called from Python, against
the same program called from C++ (build/bench/fused --only chain10) and PyTorch 2 eager's chain
(bench/peers/w6_torch.py, in the peers' venv), all measured in this run on one thread. Prints one line per measurement and the differences.

    build/python-venv/bin/python python/bench/w6_overhead.py [--peers-python /opt/hedra-peers/bin/python]
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]


def python_us(samples=15, target_s=0.05):
    os.environ["HEDRA_NUM_THREADS"] = "1"
    import hedra as hd
    x, y = hd.placeholder((1000,), name="x"), hd.placeholder((1000,), name="y")
    t = ((x + y) * x - y) * 0.5 + 1.0
    program = hd.compile(-(hd.tanh(hd.relu(t)) * y + x), [x, y], num_threads=1)
    rng = np.random.default_rng(5)
    xv, yv = rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
    calls = 100
    start = time.perf_counter()
    while time.perf_counter() - start < 0.3:  # warm-up, and the calls per sample
        for _ in range(calls):
            program(xv, yv)
    calls = max(100, int(target_s / ((time.perf_counter() - start) / calls) / 10) or 100)
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(calls):
            program(xv, yv)
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def cpp_us(build):
    out = subprocess.run([str(build / "bench" / "fused"), "--only", "chain10", "--threads", "1"],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"hedra_us=([0-9.]+)", out).group(1))


def torch_us(peers_python):
    script = REPO / "bench" / "peers" / "w6_torch.py"
    out = subprocess.run([peers_python, str(script), "--threads", "1"], check=True,
                         capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("W6 ") and "op=chain10 us " in l)
    return float(re.search(r"median=([0-9.]+)", line).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--peers-python", default="/opt/hedra-peers/bin/python")
    args = p.parse_args()
    py = python_us()
    cpp = cpp_us(pathlib.Path(args.build))
    print(f"W6 chain10 hedra_python_us={py:.2f} hedra_cpp_us={cpp:.2f} python_overhead_us={py - cpp:.2f}")
    if os.path.exists(args.peers_python):
        torch = torch_us(args.peers_python)
        print(f"W6 chain10 torch2_eager_us={torch:.2f} hedra_python_vs_torch_eager={torch / py:.2f}x")
    else:
        print(f"W6 chain10 torch2_eager: no peers' Python at {args.peers_python}")


if __name__ == "__main__":
    main()
