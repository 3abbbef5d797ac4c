"""`pip install --no-build-isolation --target DIR .` from the checkout, no network; the installed module imports."""

import math
import os
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT


@pytest.mark.slow
def test_pip_install_target():
    with tempfile.TemporaryDirectory() as d:
        target = os.path.join(d, "site")
        env = dict(os.environ, PIP_NO_INDEX="1", PYTHONPATH="")
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--target",
                        target, ROOT], check=True, env=env, cwd=d)
        out = subprocess.run([sys.executable, "-c", "import ropekit; print(ropekit.__file__, "
                              "ropekit.kernel('rope:dim=4,base=100', [1])['kernel'][0])"],
                             env=dict(env, PYTHONPATH=target), cwd=d, capture_output=True, text=True, check=True)
        path, value = out.stdout.split()
        # Phi(1) of rope:dim=4,base=100: theta = 1, 0.1, so (cos 1 + cos 0.1) / 2.
        assert path.startswith(target) and float(value) == pytest.approx((math.cos(1) + math.cos(0.1)) / 2, rel=1e-15)
