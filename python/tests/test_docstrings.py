"""Every function has a docstring with maths and an example; the examples run (doctest) and their output is real."""

import doctest

import numpy as np
import pytest

import ropekit

FUNCTIONS = ["kernel", "frequencies", "features", "fit", "fit_params", "fit_spectrum", "spectrum_kernel",
             "verify_master", "design", "lie_check", "model", "list_encodings", "list_targets", "list_spectra", "sweep"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_docstring_example_runs(name):
    f = getattr(ropekit, name)
    assert "Example" in f.__doc__ and ">>>" in f.__doc__
    test = doctest.DocTestParser().get_doctest(f.__doc__, {"ropekit": ropekit, "np": np}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{name}'s example failed (output above)"


def test_package_docstring_example_runs():
    r = doctest.testmod(ropekit, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert r.failed == 0


def test_help_reads_well():
    text = ropekit.kernel.__doc__
    assert text.startswith("kernel(encoding: str")  # pybind11's signature line, then the description
    assert "Phi(Dp) = tr G(Dp) / tr G(0)" in text
