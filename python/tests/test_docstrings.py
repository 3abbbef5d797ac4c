"""Every function has a docstring with maths and an example; the examples run (doctest) and their output is real."""

import doctest

import numpy as np
import pytest

import ropekit

FUNCTIONS = ["kernel", "check", "frequencies", "features", "fit", "fit_params", "fit_spectrum", "spectrum_kernel",
             "verify_master", "design", "lie_check", "model", "frameworks", "report", "envelope", "list_encodings", "list_schemes",
             "list_targets", "list_spectra", "sweep"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_docstring_example_runs(name):
    f = getattr(ropekit, name)
    assert "Example" in f.__doc__ and ">>>" in f.__doc__
    test = doctest.DocTestParser().get_doctest(f.__doc__, {"ropekit": ropekit, "np": np}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{name}'s example failed (output above)"


def test_plot_module_docstring_example_runs():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import ropekit.plot
    test = doctest.DocTestParser().get_doctest(ropekit.plot.__doc__, {}, "ropekit.plot", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert test.examples and runner.failures == 0
    mpl.pyplot.close("all")


def test_package_docstring_example_runs():
    # The package's own docstring (each function's examples run above).
    test = doctest.DocTestParser().get_doctest(ropekit.__doc__, {"np": np}, "ropekit", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert test.examples and runner.failures == 0


@pytest.mark.parametrize("name", [n for n in ropekit.__all__ if callable(getattr(ropekit, n))])
def test_every_function_has_a_real_signature(name):
    # Issue 24: inspect.signature failed on every pybind11 function (no hints in Jupyter or IDEs). The signature's
    # parameters are the binding's, as pybind11's docstring line names them; the function still calls through.
    import inspect
    f = getattr(ropekit, name)
    sig = inspect.signature(f)
    if hasattr(ropekit._ropekit, name):  # the library's (sweep is Python's own)
        head = f.__doc__.splitlines()[0]
        for p in sig.parameters.values():
            assert f"{p.name}: " in head or p.kind == p.VAR_KEYWORD, (name, p.name)
    assert f.__name__ == name
    assert f.__module__ == ("ropekit" if hasattr(ropekit._ropekit, name) else "ropekit.sweep")


def test_help_reads_well():
    text = ropekit.kernel.__doc__
    assert text.startswith("kernel(encoding: object")  # pybind11's signature line (a spelling or a list), then the text
    assert "Phi(Dp) = tr G(Dp) / tr G(0)" in text
