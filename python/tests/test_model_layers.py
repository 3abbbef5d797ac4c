"""model= and layer_type= (issue 33 item 3): a model file's layer types in kernel, fit, features and precision, as
`--model` gives them on the command line: the lags a window hides masked (NaN), Llama 4's query temperature applied,
a sliding layer fitted on the lags it sees, and every row led by its layer type."""

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
W = 1024


def test_kernel_of_a_sliding_layer_masks_the_lags_its_window_hides():
    lags = [0, 10, 1023, 1024, 10000]
    with pytest.warns(UserWarning, match="sliding 1024 hides \\|lag\\| >= 1024: masked there"):
        k = ropekit.kernel(model=GEMMA, layer_type="sliding_attention", lags=lags)
    assert list(k)[:3] == ["layer_type", "encoding", "lag"]
    assert k["layer_type"] == ["sliding_attention"] * 5
    plain = ropekit.kernel(SLIDING, lags)
    seen = np.asarray(lags) < W
    for c in ("kernel", "content_variance", "sine_residual", "continuum", "continuum_sine"):
        assert np.array_equal(k[c][seen], plain[c][seen]), c
        assert np.isnan(k[c][~seen]).all(), c
    # Every lag with a value is one the window shows.
    assert (k["lag"][~np.isnan(k["kernel"])] < W).all()
    # As the command line prints them (its empty cells are the NaN here).
    c = cli_csv("kernel", "--model", GEMMA + ":sliding_attention", "--lags", ",".join(map(str, lags)))
    assert c["layer_type"] == k["layer_type"]
    np.testing.assert_array_equal(numbers(c["kernel"]), k["kernel"])


def test_kernel_of_every_layer_type_and_lags_all_masked():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = ropekit.kernel(model=GEMMA, lags=[5000, 6000], columns=["kernel"])
    assert list(k) == ["layer_type", "kernel"]
    assert k["layer_type"] == ["sliding_attention"] * 2 + ["full_attention"] * 2
    assert np.isnan(k["kernel"][:2]).all()  # every lag past the sliding window: all masked
    np.testing.assert_array_equal(k["kernel"][2:], ropekit.kernel(FULL, [5000, 6000])["kernel"])


def test_kernel_of_llama4_nope_layers_applies_the_query_temperature():
    def s(p):  # models.md: s(p) = attn_scale ln(1 + floor((p + 1) / floor_scale)) + 1, by hand
        return 0.1 * math.log(1 + math.floor((p + 1) / 8192)) + 1

    lags = [0, 8190, 8191, 65536]
    with pytest.warns(UserWarning, match="scaled by s\\(p\\)"):
        k = ropekit.kernel(model=SCOUT, layer_type="full_attention", lags=lags)
    for i, p in enumerate(lags):
        assert k["kernel"][i] == pytest.approx(s(p), rel=1e-15)
        assert k["content_variance"][i] == pytest.approx(2 * 128 * s(p) ** 2, rel=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        at = ropekit.kernel(model=SCOUT, layer_type="full_attention", lags=[1, 5], position=65536)
    assert at["kernel"] == pytest.approx([s(65536)] * 2, rel=1e-15)


def test_model_and_encoding_errors():
    with pytest.raises(ValueError, match="ropekit.kernel: encoding = 'rope:dim=8' \\(must be absent with model"):
        ropekit.kernel("rope:dim=8", model=GEMMA)
    with pytest.raises(ValueError, match="ropekit.kernel: encoding = None \\(must be given, or model\\)"):
        ropekit.kernel()
    with pytest.raises(ValueError, match="ropekit.kernel: layer_type = 'sliding_attention' \\(must be given with model"):
        ropekit.kernel("rope:dim=8", layer_type="sliding_attention")
    with pytest.raises(ValueError, match="must be a layer type of the model: one of sliding_attention, full_attention"):
        ropekit.kernel(model=GEMMA, layer_type="global")
    # As the command line words it.
    with pytest.raises(ValueError) as e:
        ropekit.kernel(model=GEMMA, layer_type="global")
    assert str(e.value) == cli_error("kernel", "--model", GEMMA + ":global")
    with pytest.raises(ValueError, match="ropekit.fit: encodings = \\['rope'\\] \\(must be absent with model"):
        ropekit.fit(["rope"], train_context=8, eval_contexts=[8], model=GEMMA)
    with pytest.raises(ValueError, match="ropekit.features: model = .*must be a file and a layer type"):
        ropekit.features(model=GEMMA)
    with pytest.raises(ValueError, match="ropekit.precision: encoding = None \\(must be given, or model\\)"):
        ropekit.precision()


def test_kernel_columns_messages_match_the_command_line():
    for args, kwargs in [(["rope:dim=8"], {"columns": ["expected_kernel"]}),
                         ([["rope:dim=8", "xpos:dim=8"]], {"columns": ["kernal"]})]:
        with pytest.raises(ValueError) as e:
            ropekit.kernel(*args, **kwargs)
        encodings = args[0] if isinstance(args[0], list) else [args[0]]
        assert str(e.value) == cli_error("kernel", "--encoding", *encodings, "--columns", ",".join(kwargs["columns"]))


def test_fit_of_a_sliding_layer_trains_and_scores_only_the_lags_it_sees():
    with pytest.warns(UserWarning, match="trained on lags 0..1023 and scored on lags 0..min\\(T, 1024\\)-1"):
        r = ropekit.fit(targets=["phase"], train_context=2048, eval_contexts=[4096], model=GEMMA,
                        layer_type="sliding_attention")
    seen = ropekit.fit([SLIDING], ["phase"], 1024, [1024])
    assert list(r)[0] == "layer_type"
    assert r["layer_type"] == ["sliding_attention"] * 2
    assert list(r["n_train"]) == [1024, 1024]
    assert list(r["context"]) == [2048, 4096]
    assert np.array_equal(r["mse"], seen["mse"])
    # Every layer type: the full layer as its spelling.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = ropekit.fit(targets=["phase"], train_context=64, eval_contexts=[128], model=GEMMA)
    assert both["layer_type"] == ["sliding_attention"] * 2 + ["full_attention"] * 2
    assert np.array_equal(both["mse"][2:], ropekit.fit([FULL], ["phase"], 64, [128])["mse"])


def test_fit_of_llama4_nope_layers_says_the_query_temperature_is_not_applied():
    with pytest.warns(UserWarning, match="full_attention: the query temperature s\\(p\\) = 0.1 ln\\(1 \\+ "
                                         "floor\\(\\(p \\+ 1\\)/8192\\)\\) \\+ 1 is not applied"):
        r = ropekit.fit(targets=["phase"], train_context=32, eval_contexts=[64], model=SCOUT,
                        layer_type="full_attention")
    plain = ropekit.fit(["nope:dim=128"], ["phase"], 32, [64])  # the NoPE layers' spelling (`ropekit model`)
    assert r["layer_type"] == ["full_attention"] * 2
    assert np.array_equal(r["mse"], plain["mse"])


def test_features_and_precision_of_a_layer_type():
    X, names, layer_type = ropekit.features(model=GEMMA, layer_type="sliding_attention", lags="0:4")
    Y, plain_names = ropekit.features(SLIDING, "0:4")
    assert names == plain_names and np.array_equal(X, Y)
    assert layer_type == ["sliding_attention"] * 4
    p = ropekit.precision(model=GEMMA, layer_type="full_attention", positions=[1, 4095])
    q = ropekit.precision(FULL, positions=[1, 4095])
    assert list(p)[0] == "layer_type" and p["layer_type"] == ["full_attention"] * 2
    assert np.array_equal(p["phase_error_max"], q["phase_error_max"])


def test_plot_kernel_of_a_model_labels_curves_by_file_name_and_layer_type():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import ropekit.plot
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig = ropekit.plot.kernel(model=GEMMA, lags="1000:1100:10", columns=["kernel"])
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == ["gemma-3-4b.json: sliding_attention", "gemma-3-4b.json: full_attention"]
    assert not any(ROOT in t for t in texts)  # never the absolute path
    # The sliding curve stops at its window: no x it draws past lag 1023.
    ax = fig.axes[0]
    sliding = [ln for ln in ax.get_lines() if ln.get_label() == texts[0]]
    assert all(max(ln.get_xdata()) <= 1023 for ln in sliding)
    annotations = [t.get_text() for t in ax.texts]
    assert "sliding 1024 (gemma-3-4b.json: sliding_attention)" in annotations  # the window, on the lag axis
    mpl.pyplot.close("all")
