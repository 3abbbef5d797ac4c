"""Shared helpers: the command line next to the module (ROPEKIT_CLI, set by CTest; default build/ropekit) and its CSV."""

import csv
import io
import os
import subprocess

import pytest

ROOT = os.environ.get("ROPEKIT_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CLI = os.environ.get("ROPEKIT_CLI", os.path.join(ROOT, "build", "ropekit"))


def run_cli(*args):
    """stdout of `ropekit ARGS` (exit code 0 or 3)."""
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    assert p.returncode in (0, 3), p.stderr
    return p.stdout


def cli_csv(*args):
    """The command's CSV as a dict of columns of str (cells as printed)."""
    rows = list(csv.reader(io.StringIO(run_cli(*args, "--format", "csv"))))
    return {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}


def cli_error(*args):
    """The one-line message of a refused command (exit code 2), as the module words it."""
    import ropekit
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    assert p.returncode == 2, (p.returncode, p.stderr)
    line = p.stderr.strip()
    assert line.startswith("error: ") and "\n" not in line, line
    return ropekit._ropekit._pythonise(line[len("error: "):])


def numbers(cells):
    """Cells as float64 (empty cells: NaN; shortest round-trip text parses back to the same double)."""
    return [float(c) if c != "" else float("nan") for c in cells]


@pytest.fixture(scope="session")
def cli():
    assert os.access(CLI, os.X_OK), f"build the command line first: {CLI}"
    return CLI
