"""kernel, frequencies, features and the lists against the command line's output for the same spellings."""

import numpy as np
import pytest

import ropekit
from conftest import cli_csv, cli_error, numbers

ENCODINGS = ["rope:dim=8,base=100", "rope:dim=64,base=1e4,scaling=yarn(factor=4,orig=256)", "jordan:m=3,dim=16",
             "xpos:dim=8", "alibi", "damped:dim=16,gamma=0.01", "direct-sum:[rope(dim=8),alibi]", "jordan_m3",
             "rf-rope:spectrum=cauchy:b=4,blocks=8,seed=3"]


@pytest.mark.parametrize("enc", ENCODINGS)
def test_kernel_matches_command_line(enc):
    lags = "0,1,2.5,10,100,1000"
    got = ropekit.kernel(enc, lags, rho=0.5)
    want = cli_csv("kernel", "--encoding", enc, "--lags", lags, "--rho", "0.5")
    assert got["encoding"] == want["encoding"][0]
    # The command line has every column whatever the encoding (empty cells where it has none); Python returns the
    # encoding's own.
    filled = [c for c in want if c != "encoding" and any(want[c])]
    assert list(got) == ["encoding"] + filled
    for col in want:
        if col not in got:
            assert not any(want[col]), col
        elif col != "encoding":
            np.testing.assert_array_equal(got[col], numbers(want[col]), err_msg=col)
            assert got[col].dtype == np.float64 and got[col].shape == (6,)


def test_kernel_array_lags_equal_spelled_lags():
    a = ropekit.kernel("rope:dim=16", np.array([0.0, 3.0, 7.5]))
    b = ropekit.kernel("rope:dim=16", "0,3,7.5")
    for col in ("lag", "kernel", "content_variance"):
        np.testing.assert_array_equal(a[col], b[col])
    # Integer and list input convert to float64.
    np.testing.assert_array_equal(ropekit.kernel("rope:dim=16", [0, 3])["kernel"], b["kernel"][:2])


def test_kernel_k_dimensional_lags():
    enc = "nd:family=axial,dim=8,axes=2"
    got = ropekit.kernel(enc, "1,0;0,2;3,4")
    assert got["lag"].shape == (3, 2)
    want = cli_csv("kernel", "--encoding", enc, "--lags", "1,0;0,2;3,4")
    np.testing.assert_array_equal(got["kernel"], numbers(want["kernel"]))
    np.testing.assert_array_equal(ropekit.kernel(enc, np.array([[1, 0], [0, 2], [3, 4]]))["kernel"], got["kernel"])


@pytest.mark.parametrize("enc", ["rope:dim=8", "rope:dim=128,scaling=yarn(factor=32,orig=4096)",
                                 "direct-sum:[rope(dim=8),damped(dim=4)]", "nd:family=axial,dim=8,axes=2"])
def test_frequencies_match_command_line(enc):
    got = ropekit.frequencies(enc, float32=True)
    want = cli_csv("frequencies", "--encoding", enc, "--float32")
    assert [c for c in got if c != "encoding"] == list(want)
    for col in want:
        np.testing.assert_array_equal(np.asarray(got[col], dtype=float), numbers(want[col]), err_msg=col)
    assert got["i"].dtype == np.int64


def test_frequencies_seq_len_and_convention():
    enc = "rope:dim=16,scaling=yarn(factor=4,orig=64)"
    got = ropekit.frequencies(enc, seq_len=512, convention="ggml")
    want = cli_csv("frequencies", "--encoding", enc, "--seq-len", "512", "--convention", "ggml")
    np.testing.assert_array_equal(got["theta"], numbers(want["theta"]))


def test_transformers_options_warn_with_the_command_lines_notes():
    # yarn without factor (s = max / orig = 8: a = 0.1 ln 8 + 1) and beta_fast = 0 (transformers' `or 32`): accepted
    # with the note the command line prints on stderr, as a UserWarning; nothing to note, no warning.
    enc = "rope:dim=8,scaling=yarn(orig=4096,max=32768,beta_fast=0)"
    with pytest.warns(UserWarning, match=r"^ropekit\.frequencies: note: yarn\.beta_fast = 0 means 32"):
        got = ropekit.frequencies(enc)
    np.testing.assert_allclose(got["attention_factor"], 0.1 * np.log(8) + 1, rtol=1e-15)
    with pytest.warns(UserWarning, match=r"^ropekit\.kernel: note: partial = 0\.5: dim \* partial = 5"):
        k = ropekit.kernel("rope:dim=10,partial=0.5", [0])
    assert k["content_variance"][0] == 20  # G(0) = I_10: n = 10 kept with r = int(5) = 5
    with pytest.warns(UserWarning, match=r"^ropekit\.features: note: linear\.factor = 0\.5 is below 1"):
        ropekit.features("rope:dim=8,scaling=linear(factor=0.5)", [0, 1])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ropekit.frequencies("rope:dim=8,scaling=yarn(factor=8,orig=4096,max=32768)")


@pytest.mark.parametrize("enc", ["rope:dim=8", "jordan:m=2,dim=8", "jordan_m3", "poly:k=3", "xpos:dim=8"])
def test_features_match_command_line(enc):
    X, names = ropekit.features(enc, "0:50:7")
    want = cli_csv("features", "--encoding", enc, "--lags", "0:50:7")
    assert names == list(want)[1:]
    assert X.dtype == np.float64 and X.shape == (len(want["lag"]), len(names))
    for j, name in enumerate(names):
        np.testing.assert_array_equal(X[:, j], numbers(want[name]), err_msg=name)


def test_features_reproduce_the_kernel_scale():
    # An independent route: rope's columns are cos/sin(theta_i d), so the mean of the cosine columns is Phi(d).
    X, names = ropekit.features("rope:dim=8,base=100", [0, 1, 5])
    cos = [j for j, n in enumerate(names) if n.startswith("cos")]
    theta = 100.0 ** (-np.arange(4) / 4)
    np.testing.assert_allclose(X[:, cos].mean(axis=1), np.cos(np.outer([0, 1, 5], theta)).mean(axis=1), rtol=0,
                               atol=4e-16)
    np.testing.assert_allclose(ropekit.kernel("rope:dim=8,base=100", [0, 1, 5])["kernel"], X[:, cos].mean(axis=1),
                               rtol=0, atol=4e-16)


def test_lists_match_command_line():
    enc = ropekit.list_encodings()
    want = cli_csv("list", "encodings")
    assert enc["spelling"] == want["spelling"] and enc["features"] == want["features"]
    tg = ropekit.list_targets()
    want = cli_csv("list", "targets")
    assert tg == want
    sp = ropekit.list_spectra()
    want = cli_csv("kernel", "--families")
    assert sp == want
    sc = ropekit.list_schemes()
    assert sc == cli_csv("list", "schemes")
    verbose = ropekit.list_encodings(verbose=True)
    assert verbose == cli_csv("list", "encodings", "--verbose")
    assert "keys" not in enc


def test_list_schemes_rows_and_examples_that_parse():
    sc = ropekit.list_schemes()
    rows = {(s, k): (d, hf) for s, k, d, hf in zip(sc["scheme"], sc["key"], sc["default"], sc["transformers key"])}
    # transformers' llama3 keys and yarn's fallbacks (modeling_rope_utils.py: beta_fast `or 32`, beta_slow `or 1`).
    assert rows["llama3", "low"] == ("1", "low_freq_factor")
    assert rows["llama3", "high"] == ("4", "high_freq_factor")
    assert rows["yarn", "orig"] == ("required", "original_max_position_embeddings")
    assert rows["yarn", "beta_fast"] == ("32", "beta_fast") and rows["yarn", "beta_slow"] == ("1", "beta_slow")
    for example in ropekit.list_encodings(verbose=True)["example"]:
        try:
            ropekit.kernel(example, [0, 1])  # parses (and evaluates)
        except ValueError as e:  # parsed, but absolute: no kernel of the lag
            assert "sinusoidal is absolute" in str(e), str(e)


def test_yarn_without_orig_is_refused():
    with pytest.raises(ValueError, match=r"yarn\.orig = \(missing\) \(must be given: yarn needs orig"):
        ropekit.frequencies("rope:dim=8,scaling=yarn(factor=8)")


@pytest.mark.parametrize("call, args", [
    (lambda: ropekit.kernel("rope:dim=63"), ["kernel", "--encoding", "rope:dim=63"]),
    (lambda: ropekit.kernel("rope", rho=2), ["kernel", "--encoding", "rope", "--rho", "2"]),
    (lambda: ropekit.kernel("rope", seq_len=-1), ["kernel", "--encoding", "rope", "--seq-len", "-1"]),
    (lambda: ropekit.kernel("sinusoidal"), ["kernel", "--encoding", "sinusoidal"]),
    (lambda: ropekit.kernel("nd:family=axial,dim=8,axes=2"), ["kernel", "--encoding", "nd:family=axial,dim=8,axes=2"]),
    (lambda: ropekit.kernel("rope", "0,nan"), ["kernel", "--encoding", "rope", "--lags", "0,nan"]),
    (lambda: ropekit.kernel("bogus:x=1"), ["kernel", "--encoding", "bogus:x=1"]),
    (lambda: ropekit.frequencies("alibi"), ["frequencies", "--encoding", "alibi"]),
    (lambda: ropekit.frequencies("rope", convention="x"), ["frequencies", "--encoding", "rope", "--convention", "x"]),
    (lambda: ropekit.features("rope", "-1"), ["features", "--encoding", "rope", "--lags", "-1"]),
    (lambda: ropekit.features("sinusoidal"), ["features", "--encoding", "sinusoidal"]),
])
def test_errors_carry_the_command_line_message(call, args):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == cli_error(*args)
    assert "\n" not in str(e.value)


# Sizes over the command line's time or memory budget are refused by the module with the same message (the
# budgets live in the library's requests; these are refused on the time cap whatever the machine's memory; the
# frequencies' budget is reached on memory only, tests/requests/test_requests.cpp checks it).
@pytest.mark.parametrize("call, args", [
    (lambda: ropekit.kernel("rope:dim=4194304", "0:200000"),
     ["kernel", "--encoding", "rope:dim=4194304", "--lags", "0:200000"]),
])
def test_budgets_carry_the_command_line_message(call, args):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == cli_error(*args)
    assert "must be at most" in str(e.value)


def test_features_budget_counts_the_matrix_python_holds():
    # The module holds one float64 matrix (and the basis's tables), not the command line's text rows: a size the
    # command line refuses as text can fit, and a size over the memory is refused with the same kind of message.
    with pytest.raises(ValueError, match=r"^ropekit.features: lags = 2000 lags \(must be at most \d+ lags for "
                                         r"rope:dim=4194304 .*needs [\d.]+ GB of memory"):
        ropekit.features("rope:dim=4194304", "0:2000")
    x, names = ropekit.features("rope:dim=96,base=1e4", "0:200000")  # as text (98 columns with the lag): 2.5 GB
    assert x.shape == (200000, 97) and names[:2] == ["1", "cos0"]


def test_bad_lag_shapes_are_refused():
    with pytest.raises(ValueError, match=r"ropekit.kernel: lags = an array of shape \(2, 3\)"):
        ropekit.kernel("rope", np.zeros((2, 3)))
    with pytest.raises(ValueError, match="ropekit.kernel: lags = "):
        ropekit.kernel("rope", ["a"])


def test_complex_arrays_are_refused_not_cast():
    # Issue 20 item 14: numpy cast complex lags to float64 with a ComplexWarning only (1+2j read as 1).
    with pytest.raises(ValueError, match=r"^ropekit.kernel: lags = an array of dtype complex128 \(must be real"):
        ropekit.kernel("rope:dim=8", np.array([1 + 2j, 3]))
    with pytest.raises(ValueError, match=r"^ropekit.features: lags = an array of dtype complex128"):
        ropekit.features("rope:dim=8", 1 + 0j)
    with pytest.raises(ValueError, match=r"^ropekit.lie_check: generators = an array of dtype complex128"):
        ropekit.lie_check(np.zeros((1, 2, 2), dtype=complex))
    # A real array of another dtype is still read (as the command line reads its numbers).
    np.testing.assert_array_equal(ropekit.kernel("rope:dim=8", np.array([0, 1], dtype=np.float32))["lag"], [0, 1])


def test_kernel_of_several_encodings_is_one_tidy_table():
    # Issue 24: one encoding per call. A list gives their rows one after another, as `kernel --encoding E1 E2`
    # prints them (the same numbers), in the union of their columns: NaN where a column does not apply.
    import pandas as pd
    encs = ["rope:dim=8,base=100", "jordan:m=2,dim=8", "alibi"]
    lags = "0,1,10,1000"
    d = ropekit.kernel(encs, lags, rho=0.5)
    assert list(d) == ["encoding", "lag", "kernel", "content_variance", "sine_residual", "continuum", "continuum_sine"]
    want = cli_csv("kernel", "--encoding", *encs, "--lags", lags, "--rho", "0.5")
    assert d["encoding"] == want["encoding"]
    for col in ("lag", "kernel", "content_variance"):
        np.testing.assert_array_equal(d[col], numbers(want[col]), err_msg=col)
    single = ropekit.kernel(encs[0], lags)
    np.testing.assert_array_equal(d["sine_residual"][:4], single["sine_residual"])
    assert np.isnan(d["sine_residual"][4:]).all()
    assert pd.DataFrame(d).shape == (12, 7)
    only = ropekit.kernel(encs, np.arange(3.0), columns=["kernel"])
    assert list(only) == ["kernel"] and len(only["kernel"]) == 9
    assert ropekit.kernel(encs, np.arange(3.0), columns=["encoding"])["encoding"] == [e for e in d["encoding"][::4]
                                                                                     for _ in range(3)]
    with pytest.raises(ValueError, match=r"^ropekit.kernel: encoding = \[\] \(must be at least one spelling\)$"):
        ropekit.kernel([], "1")
    with pytest.raises(ValueError, match=r"^ropekit.kernel: columns = 'kernal' \(must be columns of kernel: "):
        ropekit.kernel(encs, "1", columns=["kernal"])



def test_kernel_columns_checked_by_the_library_as_on_the_command_line():
    # Issue 33: ropekit.kernel(columns=) and --columns go through one check (commands/kernel_request): the same
    # message, and the columns an rf-rope's rows fill are the six the kernel table documents for it.
    rf = "rf-rope:spectrum=gaussian(sigma=1),blocks=32,seed=1"
    want = cli_error("kernel", "--encoding", rf, "--lags", "1", "--columns", "kernel,continuum")
    assert want.endswith("(must be columns of this encoding's kernel: encoding, lag, kernel, content_variance, "
                         "expected_kernel, frequency_variance)")
    with pytest.raises(ValueError) as e:
        ropekit.kernel(rf, "1", columns=["kernel", "continuum"])
    assert str(e.value) == want
    # Asked twice, a column comes once, in the order asked.
    assert list(ropekit.kernel("rope:dim=64", "1", columns=["continuum", "kernel", "continuum"])) == ["continuum", "kernel"]
    assert list(ropekit.kernel(rf, "1")) == ["encoding", "lag", "kernel", "content_variance", "expected_kernel",
                                             "frequency_variance"]

def test_frequencies_zero_frequency_has_infinite_wavelength():
    # Issue 32: a symmetric quantile grid of 7 blocks holds theta_3 = Phi^-1(1/2) = 0; it was refused ("theta_3 = 0
    # is below 2 pi / DBL_MAX") while kernel took it. 2 pi / 0 is infinite: the frequency never repeats.
    f = ropekit.frequencies("rf-rope:spectrum=gaussian(sigma=20),blocks=7")
    assert f["theta"][3] == 0
    assert f["wavelength"][3] == np.inf
    np.testing.assert_allclose(np.delete(f["wavelength"], 3), 2 * np.pi / np.abs(np.delete(f["theta"], 3)),
                               rtol=1e-15)  # one rounding of the division
    assert cli_csv("frequencies", "--encoding", "rf-rope:spectrum=gaussian(sigma=20),blocks=7")["wavelength"][3] == "inf"
