"""fit, fit_params and fit_spectrum against the command line's output for the same spellings and options."""

import os
import tempfile

import numpy as np
import pytest

import ropekit
from conftest import cli_csv, cli_error, numbers

INT_COLUMNS = ["seed", "context", "n_features", "n_train", "rank"]
FLOAT_COLUMNS = ["mse", "r2", "cond"]


def assert_rows_equal(got, want):
    assert list(got) == list(want) == ropekit.FIT_COLUMNS
    for col in ("target", "method", "split"):
        assert got[col] == want[col], col
    for col in INT_COLUMNS:
        assert got[col].dtype == np.int64
        np.testing.assert_array_equal(got[col], [int(c) for c in want[col]], err_msg=col)
    for col in FLOAT_COLUMNS:
        assert got[col].dtype == np.float64
        np.testing.assert_array_equal(got[col], numbers(want[col]), err_msg=col)


def test_fit_matches_command_line():
    encs = ["rope", "jordan_m3", "direct-sum:[rope,alibi]", "rope:scaling=yarn(factor=4,orig=256)"]
    got = ropekit.fit(encs, ["mixed", "phase"], 1024, [2048, 8192])
    want = cli_csv("fit", "--encoding", *encs, "--target", "mixed", "phase", "--train-context", "1024",
                   "--eval-contexts", "2048,8192")
    assert_rows_equal(got, want)
    assert len(got["mse"]) == 2 * 4 * 3


def test_fit_options_match_command_line():
    got = ropekit.fit("damped", "linear", 256, [512], ridge=1e-3, methods=["rope", "jordan_raw_tau"], seeds=[0, 7],
                      num_freqs=8, head_dim=32, theta=500, gamma=1e-3, tau="raw", target_freq_index=2,
                      second_freq_index=4, threads=1)
    want = cli_csv("fit", "--encoding", "damped", "--target", "linear", "--train-context", "256", "--eval-contexts",
                   "512", "--ridge", "1e-3", "--methods", "rope", "jordan_raw_tau", "--seed", "0,7", "--num-freqs",
                   "8", "--head-dim", "32", "--theta", "500", "--gamma", "1e-3", "--tau", "raw",
                   "--target-freq-index", "2", "--second-freq-index", "4")
    assert_rows_equal(got, want)


def test_fit_default_targets():
    got = ropekit.fit("rope", None, 128, [256])
    assert sorted(set(got["target"])) == ["linear", "mixed", "phase"]


def test_fit_ridge_solution_independently():
    # An independent route for one row: numpy's least squares on the augmented system [X; sqrt(l) I] w = [y; 0].
    L, lam = 256, 1e-4
    X, _ = ropekit.features("rope:dim=64,F=16", np.arange(L))
    theta = 1e4 ** (-2 * 3 / 64)   # the targets' frequency idx 3 on the head_dim 64 grid
    y = np.cos(theta * np.arange(L))  # `phase`
    A = np.vstack([X, np.sqrt(lam) * np.eye(X.shape[1])])
    w = np.linalg.lstsq(A, np.concatenate([y, np.zeros(X.shape[1])]), rcond=None)[0]
    mse = np.mean((X @ w - y) ** 2)
    got = ropekit.fit("rope", "phase", L, [L])
    assert got["mse"][0] == pytest.approx(mse, rel=1e-6, abs=1e-14)


@pytest.mark.parametrize("call, args", [
    (lambda: ropekit.fit(["rope:dim=63"], "mixed", 128, [256]),
     ["fit", "--encoding", "rope:dim=63", "--target", "mixed", "--train-context", "128", "--eval-contexts", "256"]),
    (lambda: ropekit.fit(["rope"], "nosuch", 128, [256]),
     ["fit", "--encoding", "rope", "--target", "nosuch", "--train-context", "128", "--eval-contexts", "256"]),
    (lambda: ropekit.fit(["rope"], "mixed", 128, [256], ridge=float("nan")),
     ["fit", "--encoding", "rope", "--target", "mixed", "--train-context", "128", "--eval-contexts", "256",
      "--ridge", "nan"]),
    (lambda: ropekit.fit(["rope"], "mixed", 128, [256], tau="x"),
     ["fit", "--encoding", "rope", "--target", "mixed", "--train-context", "128", "--eval-contexts", "256",
      "--tau", "x"]),
])
def test_fit_errors_carry_the_command_line_message(call, args):
    with pytest.raises(ValueError) as e:
        call()
    # The module names the list `encodings` where the command line's option is --encoding.
    assert str(e.value) == cli_error(*args).replace("ropekit.fit: encoding: ", "ropekit.fit: encodings: ")


def test_fit_params_matches_command_line():
    args = dict(targets=["phase"], train_context=256, eval_contexts=[512], starts=2)
    rows, summary = ropekit.fit_params("rope:dim=16", ["theta"], **args)
    want = cli_csv("fit-params", "--encoding", "rope:dim=16", "--free", "theta", "--target", "phase",
                   "--train-context", "256", "--eval-contexts", "512", "--starts", "2")
    assert list(rows) == list(want)
    for col in ("target", "which", "encoding", "split"):
        assert rows[col] == want[col]
    for col in ("mse", "r2", "cond"):
        np.testing.assert_array_equal(rows[col], numbers(want[col]), err_msg=col)
    assert summary["phase"]["tuned_encoding"] == rows["encoding"][-1]
    assert summary["phase"]["tuned_cost"] <= summary["phase"]["untuned_cost"]


def test_fit_params_errors():
    with pytest.raises(ValueError) as e:
        ropekit.fit_params("rope", [])
    assert str(e.value) == "ropekit.fit_params: free = none (must be the parameters to tune, e.g. theta)"
    with pytest.raises(ValueError) as e:
        ropekit.fit_params("rope", "theta", ridge=0)
    assert str(e.value) == cli_error("fit-params", "--encoding", "rope", "--free", "theta", "--ridge", "0")
    # The budget of the library's request, as the command line's (issue 19: missing here before).
    args = dict(train_context=1000000, starts=1000, max_iterations=100000)
    with pytest.raises(ValueError) as e:
        ropekit.fit_params("rope:dim=4096", "theta", **args)
    assert str(e.value) == cli_error("fit-params", "--encoding", "rope:dim=4096", "--free", "theta", "--train-context",
                                     "1000000", "--starts", "1000", "--max-iterations", "100000")


def test_fit_spectrum_matches_command_line():
    x = np.linspace(0, 6, 61)
    y = 1 / (1 + (x / 2.5) ** 2)  # Cauchy kernel, b = 2.5
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.csv")
        with open(path, "w") as f:
            f.write("lag,value\n" + "".join(f"{a!r},{b!r}\n" for a, b in zip(x, y)))
        params, summary = ropekit.fit_spectrum("cauchy:b=?", x, y)
        from_file, _ = ropekit.fit_spectrum("cauchy:b=?", path)
        want = cli_csv("fit-params", "--spectrum", "cauchy:b=?", "--kernel-data", path)
    assert params["parameter"] == want["parameter"] == ["b"]
    np.testing.assert_array_equal(params["estimate"], numbers(want["estimate"]))
    np.testing.assert_array_equal(from_file["estimate"], params["estimate"])
    assert params["estimate"][0] == pytest.approx(2.5, rel=1e-9)


def test_fit_spectrum_refuses_bad_tables_and_non_finite_residuals():
    # Issue 20 item 9: a NaN or an empty table killed the interpreter; non-finite residuals crashed the standard
    # errors. Each is now a one-line ValueError naming the function.
    x = np.linspace(0, 6, 61)
    y = 1 / (1 + (x / 2.5) ** 2)
    bad = y.copy()
    bad[3] = np.nan
    cases = [
        ((x, bad), "(must be finite values at finite lags >= 0)"),
        ((np.array([]), np.array([])), "rows = 0 (must be more than the free parameters"),
        ((x[::-1].copy(), y), "(must be strictly increasing lags)"),
        ((x - 1, y), "(must be finite values at finite lags >= 0)"),
    ]
    for args, expect in cases:
        with pytest.raises(ValueError) as e:
            ropekit.fit_spectrum("cauchy:b=?", *args)
        assert str(e.value).startswith("ropekit.fit_spectrum: ") and expect in str(e.value), str(e.value)
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError) as e:
        ropekit.fit_spectrum("gaussian:sigma=?1e-300", x, y)
    assert str(e.value).startswith("ropekit.fit_spectrum: spectrum = 'gaussian:sigma=?1e-300' (must be finite residuals")


def test_fit_params_summary_counts_starts_from_one():
    # Issue 20 item 7: best_start is 1-based in Python, the command line's JSON and its Markdown.
    _, summary = ropekit.fit_params("rope:dim=16", ["theta"], targets=["phase"], train_context=256,
                                    eval_contexts=[256], starts=2)
    s = summary["phase"]
    assert 1 <= s["best_start"] <= len(s["starts"])
    assert s["starts"][s["best_start"] - 1]["final_cost"] == s["tuned_cost"]


@pytest.mark.parametrize("call, message", [
    (lambda: ropekit.design("gaussian:sigma=0.5", 4, seed=-1),
     "ropekit.design: seed = -1 (must be an integer in [0, 2^64) or None)"),
    (lambda: ropekit.fit([1, 2], None, 256, [256]), "ropekit.fit: encodings = [1, 2] (must be a str or a list of str)"),
    (lambda: ropekit.fit_params("rope", [3]), "ropekit.fit_params: free = [3] (must be a str or a list of str)"),
    (lambda: ropekit.verify_master("gaussian:sigma=0.5", content=3),
     "ropekit.verify_master: content = 3 (must be an encoding spelling (str) or None)"),
])
def test_wrong_python_types_are_value_errors(call, message):
    # Issue 20 item 10: pybind11's RuntimeError "Unable to cast Python instance" before.
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == message


def test_embedded_nul_in_a_path_is_refused():
    # Issue 20 item 14: the system reads a path only up to its first NUL, so "data:g.csv\0.zip" read g.csv.
    x = np.linspace(0, 6, 61)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.csv")
        with open(path, "w") as f:
            f.write("lag,value\n" + "".join(f"{a!r},{np.exp(-a * a / 8)!r}\n" for a in x))
        with pytest.raises(ValueError, match=r"^ropekit.fit_params: target: path = .* \(must be a path without NUL"):
            ropekit.fit_params("rope:dim=8", ["theta"], ["data:" + path + "\x00.zip"])
        with pytest.raises(ValueError, match=r"^ropekit.fit_spectrum: kernel_data: path = .* \(must be a path without NUL"):
            ropekit.fit_spectrum("gaussian:sigma=?", path + "\x00.zip")
        with pytest.raises(ValueError, match=r"^ropekit.design: kernel: path = .* \(must be a path without NUL"):
            ropekit.design("data:" + path + "\x00.zip", 4)


def test_fit_spectrum_refuses_complex_and_huge_values():
    # Issue 20 items 12 and 14: complex values lost their imaginary parts; 1e308 gave NaN standard errors.
    x = np.linspace(0, 6, 61)
    y = np.exp(-x * x / 8)
    with pytest.raises(ValueError, match=r"^ropekit.fit_spectrum: kernel_data = an array of dtype complex128"):
        ropekit.fit_spectrum("gaussian:sigma=?", x, y + 0j)
    huge = y.copy()
    huge[3] = 1e308
    with pytest.raises(ValueError, match=r"^ropekit.fit_spectrum: kernel_data = row 4: .* \(must be values at most "
                                         r"1e\+100 in magnitude"):
        ropekit.fit_spectrum("gaussian:sigma=?", x, huge)


def test_fit_spectrum_notes_a_parameter_the_data_do_not_bound():
    # Gaussian data (Matern's nu = infinity) from nu = 5e5: nu is unresolved (Phi moves by ~1e-12 per unit of nu);
    # its standard error is large (the pseudo-inverse gave ~1e-19); l, which the data fix at 3, has no note.
    x = np.linspace(0, 9.5, 20)
    params, _ = ropekit.fit_spectrum("matern:nu=?5e5,l=?", x, np.exp(-x * x / 18))
    assert params["parameter"] == ["nu", "l"]
    assert params["std_error"][0] > 1e4
    assert params["note"][1] == ""


def test_fit_summary_is_the_rows_best_per_target_and_length():
    # Issue 24: fit printed long tables but no summary. summary=True (ropekit fit --summary) against pandas' own
    # group-by of the rows: the method with the lowest mean eval MSE over seeds, and the runner-up.
    import pandas as pd
    args = (["rope:dim=32", "jordan:m=2,dim=32", "alibi"], ["mixed", "phase"], 256, [256, 1024])
    rows = pd.DataFrame(ropekit.fit(*args, seeds=[0, 1]))
    s = pd.DataFrame(ropekit.fit(*args, seeds=[0, 1], summary=True))
    means = rows[rows.split == "eval"].groupby(["target", "context", "method"], sort=False).mse.mean()
    assert len(s) == 4
    for _, r in s.iterrows():
        m = means.loc[(r.target, r.context)].sort_values(kind="stable")
        assert r.best == m.index[0] and r.best_mse == m.iloc[0]
        assert r.runner_up == m.index[1] and r.runner_up_mse == m.iloc[1]
        assert r.ratio == m.iloc[1] / m.iloc[0] and r.methods == 3 and r.seeds == 2
    cli = cli_csv("fit", "--encoding", *args[0], "--targets", "mixed", "phase", "--train-context", "256",
                  "--eval-contexts", "256,1024", "--seed", "0,1", "--summary")
    assert cli["best"] == list(s.best) and numbers(cli["best_mse"]) == list(s.best_mse)


def test_fit_params_tunes_ropes_base():
    # Issue 32: `free` takes the spelling's keys; base was refused for rope. The target is rope with base 500.
    rows, summary = ropekit.fit_params("rope:dim=16,base=100", ["base"], ["kernel:rope:dim=16,base=500"],
                                       ridge=1e-14, eval_contexts=[1024])
    s = summary["kernel:rope:dim=16,base=500"]
    assert s["params"][0] == pytest.approx(500, rel=1e-6)  # an exact kernel and ridge 1e-14: far better than asked
    assert len(s["starts"]) == 3 + 3  # --starts 3 and the scan's 3, as the command line announces
    with pytest.raises(ValueError, match=r"must be a parameter of rope: one of theta, factor \(with scaling=yarn"):
        ropekit.fit_params("rope:dim=16,scaling=yarn(factor=4,orig=64)", ["base"], ["phase"])
