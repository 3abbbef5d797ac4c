"""ropekit.check (issue 33 item 3): `ropekit check` as a function. Values against independent routes (plain RoPE's
group law at rounding level, RoFormer's long-term decay bound by its definition in numpy), a model layer type's
window masking the window lags it hides with a note, Llama 4's query temperature, the command line's rows and its
one-line messages."""

import math
import os
import warnings

import numpy as np
import pytest

import ropekit
from conftest import ROOT, cli_csv, cli_error, numbers

GEMMA = os.path.join(ROOT, "data", "models", "gemma-3-4b.json")
SCOUT = os.path.join(ROOT, "data", "models", "llama-4-scout.json")
SLIDING = "rope:dim=256,base=10000,F=128"  # Gemma 3's sliding layers (sliding_window = 1024 in the file)
FULL = "rope:dim=256,base=1000000,F=128,scaling=linear(factor=8)"


def decay_by_hand(dim, base, lag):
    """RoFormer's relative bound (1/D) sum_j |S_j|, S_j = sum_{k<j} exp(i lag theta_k), theta_k = base^(-2k/dim)."""
    theta = base ** (-2.0 * np.arange(dim // 2) / dim)
    return np.mean(np.abs(np.cumsum(np.exp(1j * lag * theta))))


def rows_of(c, quantity, encoding=None):
    keep = [i for i, q in enumerate(c["quantity"]) if q == quantity and (encoding is None or c["encoding"][i] == encoding)]
    return c["lag"][keep], c["value"][keep]


def test_plain_rope_is_exact_to_rounding_and_its_decay_bound_is_roformers():
    c = ropekit.check("rope:dim=8,base=100", window=[0, 1, 7, 100])
    assert list(c) == ["encoding", "quantity", "lag", "value"]
    assert c["encoding"] == ["rope:dim=8,base=100,F=4"] * len(c["quantity"])
    assert c["quantity"][:3] == ["is_relative", "is_exact", "is_orthogonal"]
    assert c["value"][0] == 1.0 and c["value"][2] == 1.0
    for q in ("group_law_defect", "orthogonality_defect", "reversibility_defect"):
        lag, v = rows_of(c, q)
        assert np.isnan(lag).all() and 0 <= v[0] < 1e-14, q  # rotations: a few ulps of entries of size 1
    lag, v = rows_of(c, "long_term_decay_bound")
    assert list(lag) == [0, 1, 7, 100]
    assert v[0] == pytest.approx(2.5, rel=1e-15)  # (D + 1)/2 at lag 0
    np.testing.assert_allclose(v, [decay_by_hand(8, 100, d) for d in lag], rtol=1e-13)
    # The window as the command line spells it gives the same rows.
    s = ropekit.check("rope:dim=8,base=100", window="0,1,7,100")
    assert s["quantity"] == c["quantity"] and np.array_equal(s["value"], c["value"])


def test_rows_are_the_command_lines():
    for args, kwargs in [(["--encoding", "rope:dim=64", "--encoding", "sinusoidal:dim=8"],
                          {"encoding": ["rope:dim=64", "sinusoidal:dim=8"]}),
                         (["--encoding", "rope:dim=64,scaling=yarn(factor=4,orig=2048)", "--seq-len", "5000"],
                          {"encoding": "rope:dim=64,scaling=yarn(factor=4,orig=2048)", "seq_len": 5000}),
                         (["--model", GEMMA, "--window", "0,10,2000"], {"model": GEMMA, "window": "0,10,2000"})]:
        cli = cli_csv("check", *args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = ropekit.check(**kwargs)
        assert list(c) == list(cli), args
        for k in ("layer_type", "encoding", "quantity"):
            if k in c:
                assert c[k] == cli[k], (args, k)
        np.testing.assert_array_equal(c["lag"], numbers(cli["lag"]))
        values = [1.0 if v == "true" else 0.0 if v == "false" else float(v) for v in cli["value"]]
        np.testing.assert_array_equal(c["value"], values)


def test_sliding_layer_is_checked_on_the_window_lags_it_sees():
    window = [0, 10, 1023, 1024, 5000]
    with pytest.warns(UserWarning, match="ropekit.check: note: sliding_attention: sliding 1024 hides \\|lag\\| >= "
                                         "1024: checked on the 3 window lag\\(s\\) it sees"):
        c = ropekit.check(model=GEMMA, window=window)
    assert list(c)[0] == "layer_type"
    lag, v = rows_of(c, "long_term_decay_bound", SLIDING)
    assert list(lag) == [0, 10, 1023]  # lags >= 1024 are not checked
    np.testing.assert_allclose(v, [decay_by_hand(256, 10000, d) for d in lag], rtol=1e-12)
    full, _ = rows_of(c, "long_term_decay_bound", FULL)
    assert list(full) == window
    labels = {e: {c["layer_type"][i] for i in range(len(c["encoding"])) if c["encoding"][i] == e} for e in (SLIDING, FULL)}
    assert labels == {SLIDING: {"sliding_attention"}, FULL: {"full_attention"}}
    # One layer type; every window lag hidden is refused as the command line refuses it.
    one = ropekit.check(model=GEMMA, layer_type="sliding_attention", window="0,1")
    assert set(one["layer_type"]) == {"sliding_attention"}
    with pytest.raises(ValueError) as e:
        ropekit.check(model=GEMMA, layer_type="sliding_attention", window=[1024, 5000])
    assert str(e.value) == cli_error("check", "--model", GEMMA + ":sliding_attention", "--window", "1024,5000")
    assert str(e.value).startswith("ropekit.check: window = '1024,5000' (must be lags sliding_attention sees")


def test_llama4_query_temperature_makes_the_layer_not_relative():
    with pytest.warns(UserWarning, match="full_attention: is_relative false: the score is scaled by s\\(p\\)"):
        c = ropekit.check(model=SCOUT, layer_type="full_attention", window=[0, 1])
    i = c["quantity"].index("is_relative")
    assert c["value"][i] == 0.0
    _, g = rows_of(c, "group_law_defect")
    assert list(g) == [0.0]  # nope: G = I, its own rows exact


def test_bad_input_raises_the_command_lines_message():
    cases = [({"encoding": "rope:dim=8", "window": "a"}, ["--encoding", "rope:dim=8", "--window", "a"]),
             ({"encoding": "rope:dim=8", "seq_len": -1}, ["--encoding", "rope:dim=8", "--seq-len", "-1"]),
             ({"encoding": "bogus"}, ["--encoding", "bogus"]),
             ({"encoding": "jordan:m=3,dim=64", "window": "0,1,1e300"},
              ["--encoding", "jordan:m=3,dim=64", "--window", "0,1,1e300"]),
             ({"encoding": "rope:dim=2097152", "window": "0:100"}, ["--encoding", "rope:dim=2097152", "--window", "0:100"]),
             ({"model": GEMMA, "layer_type": "global"}, ["--model", GEMMA + ":global"])]
    for kwargs, args in cases:
        with pytest.raises(ValueError) as e:
            ropekit.check(**kwargs)
        assert str(e.value) == cli_error("check", *args), kwargs
    with pytest.raises(ValueError, match="ropekit.check: encoding = None \\(must be given, or model\\)"):
        ropekit.check()
    with pytest.raises(ValueError, match="ropekit.check: encoding = 'rope:dim=8' \\(must be absent with model"):
        ropekit.check("rope:dim=8", model=GEMMA)
    with pytest.raises(ValueError, match="ropekit.check: window = \\[\\] \\(must be at least one lag\\)"):
        ropekit.check("rope:dim=8", window=[])
    with pytest.raises(ValueError, match="ropekit.check: encoding = 3 \\(must be a str or a list of str\\)"):
        ropekit.check(3)


def test_features_of_a_model_layer_type_carry_its_label():
    X, names, layer_type = ropekit.features(model=GEMMA, layer_type="sliding_attention", lags="0:4")
    assert layer_type == ["sliding_attention"] * 4
    Y, plain_names = ropekit.features(SLIDING, "0:4")
    assert names == plain_names and np.array_equal(X, Y)
    cli = cli_csv("features", "--model", GEMMA + ":sliding_attention", "--lags", "0:4")
    assert list(cli)[:2] == ["layer_type", "lag"] and cli["layer_type"] == layer_type
    np.testing.assert_array_equal(np.array([numbers(cli[n]) for n in names]).T, X)
