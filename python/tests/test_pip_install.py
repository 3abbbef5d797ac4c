"""`pip install --no-build-isolation --target DIR .` from the checkout, no network: the installed module imports and
runs on every SIMD path this CPU has (a portable build: no -march=native), the `ropekit` console script runs the
command line with its Ceres module, and the checkout gains no build files."""

import glob
import hashlib
import math
import os
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT


def checkout_paths():
    """Every path of the checkout but .git and what lies inside build/ (the repository's own CMake tree): the
    entries directly under build/ are listed, so setuptools' build/lib.*, build/bdist.* would show."""
    out = set()
    for path in glob.glob(os.path.join(ROOT, "**"), recursive=True):
        rel = os.path.relpath(path, ROOT)
        parts = rel.split(os.sep)
        if parts[0] == ".git" or (parts[0] == "build" and len(parts) > 2):
            continue
        out.add(rel)
    return out


@pytest.mark.slow
def test_pip_install_target():
    before = checkout_paths()
    with tempfile.TemporaryDirectory() as d:
        target = os.path.join(d, "site")
        env = dict(os.environ, PIP_NO_INDEX="1", PYTHONPATH="")
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--target",
                        target, ROOT], check=True, env=env, cwd=d)
        for simd in ("scalar", "avx2", "avx512"):
            probe = subprocess.run([sys.executable, "-c", "import ropekit"], env=dict(env, PYTHONPATH=target,
                                   ROPEKIT_SIMD=simd), cwd=d, capture_output=True)
            if probe.returncode != 0:
                continue  # a path this CPU lacks
            out = subprocess.run([sys.executable, "-c", "import ropekit, numpy as np; print(ropekit.__file__, "
                                  "ropekit.kernel('rope:dim=4,base=100', np.arange(3.0))['kernel'][1])"],
                                 env=dict(env, PYTHONPATH=target, ROPEKIT_SIMD=simd), cwd=d, capture_output=True,
                                 text=True, check=True)
            path, value = out.stdout.split()
            # Phi(1) of rope:dim=4,base=100: theta = 1, 0.1, so (cos 1 + cos 0.1) / 2.
            assert path.startswith(target)
            assert float(value) == pytest.approx((math.cos(1) + math.cos(0.1)) / 2, rel=1e-15), simd
        script = os.path.join(target, "bin", "ropekit")
        out = subprocess.run([script, "fit-params", "--encoding", "damped:dim=16,base=100,gamma=1e-4", "--free",
                              "gamma", "--target", "kernel:damped:dim=16,base=100,gamma=3e-3"],
                             env=dict(env, PYTHONPATH=target), cwd=d, capture_output=True, text=True)
        assert out.returncode == 0 and "CONVERGENCE" in out.stdout, out.stderr
        # Portable: no AVX-512 or AVX2 instruction outside the dispatched kernels would run on an older CPU; the
        # build flags say so (CMake's cache of the pip build).
        scratch = "ropekit-pip-" + hashlib.sha256(ROOT.encode()).hexdigest()[:12]  # setup.py's
        cache = os.path.join(tempfile.gettempdir(), scratch, "cmake", "CMakeCache.txt")
        assert "ROPEKIT_NATIVE:BOOL=OFF" in open(cache).read()
    assert sorted(checkout_paths() - before) == []  # no build files, no egg-info in the checkout
