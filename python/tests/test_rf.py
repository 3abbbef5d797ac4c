"""spectrum_kernel, verify_master and design against the command line's output."""

import numpy as np
import pytest

import ropekit
from conftest import cli_csv, cli_error, numbers


@pytest.mark.parametrize("spec", ["gaussian:sigma=2", "cauchy:b=4", "matern:nu=2.5,l=3", "sinc:W=1,2"])
def test_spectrum_kernel_matches_command_line(spec):
    got = ropekit.spectrum_kernel(spec)
    want = cli_csv("kernel", "--spectrum", spec)
    for col in ("phi", "phi2", "var_cos", "var_sin"):
        np.testing.assert_array_equal(got[col], numbers(want[col]), err_msg=col)


def test_spectrum_kernel_closed_form():
    # Independent route: the Gaussian kernel exp(-Dp^2 / (2 sigma^2)) and Var[cos u] = (1 + Phi2)/2 - Phi^2.
    x = np.array([0.0, 0.3, 1.0, 4.0])
    got = ropekit.spectrum_kernel("gaussian:sigma=2", x)
    phi, phi2 = np.exp(-x ** 2 / 8), np.exp(-(2 * x) ** 2 / 8)
    np.testing.assert_allclose(got["phi"], phi, rtol=1e-15)
    np.testing.assert_allclose(got["var_cos"], (1 + phi2) / 2 - phi ** 2, rtol=1e-12, atol=1e-17)


def test_verify_master_matches_command_line():
    rows, s = ropekit.verify_master("cauchy:b=4", blocks=8, trials=4000, seed=5, content="correlated")
    want = cli_csv("verify", "master", "--spectrum", "cauchy:b=4", "--blocks", "8", "--trials", "4000", "--seed", "5",
                   "--content", "correlated")
    for col in ("expected", "mean", "stderr", "z", "var_expected", "var_observed"):
        np.testing.assert_array_equal(rows[col], numbers(want[col]), err_msg=col)
    assert list(rows["pass"]) == [c == "true" for c in want["pass"]]
    assert s["pass"] and s["trials"] == 4000 and rows["pass"].dtype == bool


def test_verify_master_power_check_fails():
    rows, s = ropekit.verify_master("cauchy:b=4", blocks=8, trials=20000, power=True, content="aligned")
    assert not s["pass"]


def test_verify_master_errors():
    with pytest.raises(ValueError) as e:
        ropekit.verify_master("cauchy:b=4", alpha=2)
    assert str(e.value) == cli_error("verify", "master", "--spectrum", "cauchy:b=4", "--alpha", "2")
    with pytest.raises(ValueError) as e:
        ropekit.verify_master("nosuch:x=1")
    assert str(e.value) == cli_error("verify", "master", "--spectrum", "nosuch:x=1")


@pytest.mark.parametrize("kernel, extra", [
    ("gaussian:sigma=2", ["--lags", "0:65"]),
    ("kernel:rope:dim=16", ["--lags", "0:65"]),
    ("kernel:xpos:dim=8", ["--lags", "0:33"]),
])
@pytest.mark.parametrize("sampling", ["quantile", "iid"])
def test_design_matches_command_line(kernel, extra, sampling):
    seed = None if sampling == "quantile" else 11
    rows, s = ropekit.design(kernel, 16, sampling=sampling, seed=seed, lags=extra[1])
    args = ["design", "--kernel", kernel, "--blocks", "16", "--sampling", sampling, *extra]
    if seed is not None:
        args += ["--seed", str(seed)]
    want = cli_csv(*args)
    assert list(rows) == list(want)
    for col in want:
        np.testing.assert_array_equal(rows[col], numbers(want[col]), err_msg=col)
    if kernel.startswith("kernel:xpos"):
        assert not s["positive_definite"]  # xPos's kernel is not even
    else:
        assert s["positive_definite"]


@pytest.mark.parametrize("kernel, options, flags", [
    ("kernel:rope:dim=16", {"spectrum_route": "table", "taper": "fejer", "wpoints": 513},
     ["--spectrum-route", "table", "--taper", "fejer", "--wpoints", "513"]),
    ("kernel:rope:dim=16", {"spectrum_route": "table", "tolerance": 1e-6}, ["--spectrum-route", "table", "--tolerance", "1e-6"]),
    ("gaussian:sigma=2", {"wmax": 20.0, "wpoints": 257}, ["--wmax", "20", "--wpoints", "257"]),
])
def test_design_options_match_command_line(kernel, options, flags):
    # The keyword-only options are the command line's, through the same library function (inverse_design).
    rows, s = ropekit.design(kernel, 16, lags="0:65", **options)
    want = cli_csv("design", "--kernel", kernel, "--blocks", "16", "--lags", "0:65", *flags)
    for col in want:
        np.testing.assert_array_equal(rows[col], numbers(want[col]), err_msg=col)
    assert s["route"] == ("closed form" if kernel.startswith("gaussian") else "table")


def test_design_with_lags_as_an_array_equals_the_text():
    a, _ = ropekit.design("kernel:rope:dim=16", 8, lags=np.arange(0.0, 65.0))
    b, _ = ropekit.design("kernel:rope:dim=16", 8, lags="0:65")
    for col in b:
        np.testing.assert_array_equal(a[col], b[col], err_msg=col)


def test_design_error():
    with pytest.raises(ValueError) as e:
        ropekit.design("gaussian:sigma=2", 8, seed=3)
    assert str(e.value) == cli_error("design", "--kernel", "gaussian:sigma=2", "--blocks", "8", "--seed", "3")
    with pytest.raises(ValueError) as e:
        ropekit.design("gaussian:sigma=2", 8, taper="fejer")
    assert str(e.value) == cli_error("design", "--kernel", "gaussian:sigma=2", "--blocks", "8", "--taper", "fejer")


def test_verify_master_checks_as_the_command_line():
    # Issue 19: the module binds the library's request, so the command line's fourth-moment overflow guard, its
    # q/k checks and its time/memory budget hold here too (they were missing before).
    with pytest.raises(ValueError) as e:
        ropekit.verify_master("cauchy:b=4", q=[1e100, 1e100], k=[1e100, 1e100])
    assert str(e.value) == cli_error("verify", "master", "--spectrum", "cauchy:b=4", "--q", "1e100,1e100",
                                     "--k", "1e100,1e100")
    with pytest.raises(ValueError) as e:
        ropekit.verify_master("cauchy:b=4", q=[1, 2, 3], k=[1, 2, 3])
    assert str(e.value) == cli_error("verify", "master", "--spectrum", "cauchy:b=4", "--q", "1,2,3", "--k", "1,2,3")
    with pytest.raises(ValueError) as e:
        ropekit.verify_master("cauchy:b=4", blocks=1000000, trials=1000000000)
    assert str(e.value) == cli_error("verify", "master", "--spectrum", "cauchy:b=4", "--blocks", "1000000",
                                     "--trials", "1000000000")


def test_verify_master_refuses_negative_threads():
    # Issue 20 item 14: threads=-1 ran on all cores; the command line's --threads takes integers >= 0.
    with pytest.raises(ValueError, match=r"^ropekit.verify_master: threads = -1 \(must be an integer >= 0"):
        ropekit.verify_master("gaussian:sigma=1", blocks=4, trials=200, lags=[1], threads=-1)
