"""The Python MNIST MLP (examples/python/mnist_mlp.py) against the C++ example: 100 steps of
batch 64 on the first 6400 Fashion-MNIST training images, losses equal to 1e-6."""
import csv
import os
import subprocess
import sys

import pytest

DATA = "/usr/share/datasets/fashion-mnist"
FLAGS = ["--epochs", "1", "--limit", "6400", "--batch", "64", "--lr", "0.1", "--seed", "0",
         "--threads", "2"]


def losses(path):
    with open(path) as f:
        return [float(row["loss"]) for row in csv.DictReader(f)]


@pytest.mark.skipif(not os.path.isdir(DATA), reason="no Fashion-MNIST (dataset-fashion-mnist)")
def test_python_mnist_losses_equal_cpp(repo, build_dir, tmp_path):
    cpp_binary = build_dir / "examples" / "mnist_mlp"
    if not cpp_binary.exists():
        pytest.skip(f"no C++ example at {cpp_binary}")
    cpp_csv, py_csv = tmp_path / "cpp.csv", tmp_path / "py.csv"
    subprocess.run([str(cpp_binary), *FLAGS, "--csv", str(cpp_csv)], check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run([sys.executable, str(repo / "examples" / "python" / "mnist_mlp.py"),
                          *FLAGS, "--csv", str(py_csv)], check=True, capture_output=True, text=True)
    assert "test_accuracy=" in out.stdout
    cpp, py = losses(cpp_csv), losses(py_csv)
    assert len(cpp) == len(py) == 100
    worst = max(abs(a - b) for a, b in zip(cpp, py))
    print(f"max |loss_python - loss_cpp| over 100 steps: {worst:.3g}")
    assert worst <= 1e-6


def test_schedule_dump_example(repo, tmp_path):
    out = subprocess.run([sys.executable, str(repo / "examples" / "python" / "schedule_dump.py"),
                          "--dir", str(tmp_path)], check=True, capture_output=True, text=True)
    assert "partition" in out.stdout and "schedule" in out.stdout
