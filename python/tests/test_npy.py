"""`--format npy` / `--out FILE.npy`: numpy.load reads the command line's tables back, equal to its CSV cell for cell
(numpy's own reader is the independent route; the CSV's shortest round-trip text parses to the same doubles)."""

import os
import subprocess

import numpy as np
import pytest

from conftest import CLI, ROOT, cli_csv, numbers

CASES = [
    ("kernel", "--encoding", "rope:dim=128,base=5e5", "--encoding", "jordan:m=3,dim=16", "--lags", "0:300:7"),
    ("kernel", "--model", os.path.join(ROOT, "data/models/gemma-3-4b.json"), "--lags", "0,1,10,1000,4096"),  # masked lags: empty cells
    ("features", "--encoding", "rope:dim=96,base=1e4", "--lags", "0:50"),
    ("frequencies", "--encoding", "rope:dim=64,base=1e4,scaling=yarn(factor=8,orig=4096)", "--float32"),
    ("precision", "--encoding", "rope:dim=128,base=1e4", "--dtype", "bf16"),
]


def same_table(arr, want):
    assert list(arr.dtype.names) == list(want), (arr.dtype.names, list(want))
    for col, cells in want.items():
        got = arr[col]
        if got.dtype.kind == "S":  # text: UTF-8 bytes
            assert [x.decode("utf-8") for x in got.tolist()] == cells, col
        elif got.dtype.kind == "b":
            assert got.tolist() == [c == "true" for c in cells], col
        else:
            np.testing.assert_array_equal(got, np.array(numbers(cells)), err_msg=col)


@pytest.mark.parametrize("args", CASES, ids=[" ".join(os.path.basename(a) for a in c[:3]) for c in CASES])
def test_npy_file_equals_the_csv(args, tmp_path, cli):
    out = tmp_path / "t.npy"
    p = subprocess.run([CLI, *args, "--out", str(out)], capture_output=True)  # --format by the extension
    assert p.returncode in (0, 3), p.stderr
    arr = np.load(out)  # no pickle: a plain structured array
    assert arr.ndim == 1 and arr.dtype.names
    same_table(arr, cli_csv(*args))


def test_npy_types_and_pipe(tmp_path):
    # Integer columns stay integers; a pipe takes the binary bytes.
    p = subprocess.run([CLI, "frequencies", "--encoding", "rope:dim=8", "--format", "npy"], capture_output=True)
    assert p.returncode == 0
    out = tmp_path / "q.npy"
    out.write_bytes(p.stdout)
    q = np.load(out)
    assert q.dtype["i"] == np.int64 and q["i"].tolist() == [0, 1, 2, 3]
    subprocess.run([CLI, "frequencies", "--encoding", "rope:dim=8", "--out", str(tmp_path / "f.npy")], check=True)
    assert (tmp_path / "f.npy").read_bytes() == p.stdout


def test_streamed_kernel_npy_does_not_depend_on_the_block_size(tmp_path):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    for out, rows in ((a, "65536"), (b, "7")):
        subprocess.run([CLI, "kernel", "--encoding", "rope:dim=16", "--lags", "0:1000", "--block-rows", rows,
                        "--out", str(out)], check=True)
    assert a.read_bytes() == b.read_bytes()


def test_npy_refused_where_the_output_is_not_one_table():
    p = subprocess.run([CLI, "model", os.path.join(ROOT, "data/models/llama-3.1-8b.json"), "--format", "npy"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip() == ("error: ropekit model: --format = 'npy' (must be one of csv, md, json, latex "
                                "(npy: the tables of kernel, features, frequencies and precision))")
    assert p.stdout == ""
