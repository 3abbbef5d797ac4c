"""ropekit.model: a config.json's layer types as the command line prints them; bad files raise ValueError."""

import json

import numpy as np
import pytest

import ropekit


def test_model_gemma3_layer_types(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gemma3_text", "head_dim": 256, "num_hidden_layers": 12,
                                "sliding_window": 1024, "sliding_window_pattern": 6, "rope_theta": 1e6,
                                "rope_local_base_freq": 1e4, "rope_scaling": {"rope_type": "linear", "factor": 8}}))
    m = ropekit.model(str(path))
    assert m["layer_type"] == ["sliding_attention", "full_attention"]
    assert list(m["layers"]) == [10, 2]
    assert m["window"] == ["sliding 1024", ""]
    # Each encoding is a spelling every function takes: linear factor 8 divides theta by 8.
    full = ropekit.frequencies(m["encoding"][1])["theta"]
    assert abs(full[1] - 1e6 ** (-2 / 256) / 8) < 1e-15


@pytest.mark.parametrize("text, expect", [
    ('{"head_dim": 64, "rope_theta": -1}', "rope_theta = -1 (must be a number > 0)"),
    ('{"head_dim": 64,', "not JSON"),
])
def test_model_bad_files(tmp_path, text, expect):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        ropekit.model(str(path))
    assert str(err.value).startswith("ropekit.model: ")
    assert expect in str(err.value)


def test_model_encodings_work_in_every_function():
    """Each layer type's encoding of Gemma 3 4B is a spelling kernel, features and frequencies take, with the numbers
    of the command line's --model FILE:LAYER_TYPE; the kernel equals `kernel --model FILE` at the lags its window lets
    a layer see (sliding 1024: lags 0..1023), where that command masks the rest (empty cells)."""
    import os
    from conftest import ROOT, cli_csv, numbers
    path = os.path.join(ROOT, "data", "models", "gemma-3-4b.json")
    m = ropekit.model(path)
    assert m["layer_type"] == ["sliding_attention", "full_attention"]
    lags = "0,1,100,1023,1024,4096"
    cli = cli_csv("kernel", "--model", path, "--lags", lags)
    for name, encoding, window in zip(m["layer_type"], m["encoding"], m["window"]):
        rows = [i for i, t in enumerate(cli["layer_type"]) if t == name]
        assert [cli["encoding"][i] for i in rows] == [encoding] * 6
        span = int(window.split()[1]) if window else float("inf")
        k = ropekit.kernel(encoding, lags)
        for col in ("kernel", "content_variance"):
            want = numbers([cli[col][i] for i in rows])
            for lag, got, w in zip(k["lag"], k[col], want):
                if abs(lag) < span:
                    assert got == w, (name, col, lag)
                else:
                    assert np.isnan(w), (name, col, lag)  # masked by the command line, a number here
        x, names = ropekit.features(encoding, "0:8")
        f = cli_csv("features", "--model", f"{path}:{name}", "--lags", "0:8")
        assert list(f)[:2] == ["layer_type", "lag"] and f["layer_type"] == [name] * 8  # --model's rows: led by it
        assert names == list(f)[2:]
        for j, col in enumerate(names):
            np.testing.assert_array_equal(x[:, j], numbers(f[col]), err_msg=col)
        fr = ropekit.frequencies(encoding)
        want = cli_csv("frequencies", "--model", f"{path}:{name}")
        np.testing.assert_array_equal(fr["theta"], numbers(want["theta"]))
    # The window masks sliding layers only: lag 1024 is masked for them, a value for the full layers.
    assert m["window"] == ["sliding 1024", ""]


def test_llama4_query_temperature_columns():
    # models.md section 4: s(p) = 0.1 ln(1 + floor((p + 1) / 8192)) + 1 = 1.0693 at p = 8191, on NoPE layers only.
    import math
    import os
    from conftest import ROOT
    m = ropekit.model(os.path.join(ROOT, "data", "models", "llama-4-scout.json"))
    at = {name: i for i, name in enumerate(m["layer_type"])}
    nope, chunked = at["full_attention"], at["chunked_attention"]
    assert m["query_floor_scale"][nope] == 8192 and m["query_attn_scale"][nope] == 0.1
    assert math.isnan(m["query_floor_scale"][chunked])
    # transformers' Llama 4 rotates complex pairs (2i, 2i + 1) (view_as_complex in modeling_llama4.py).
    assert m["pairing"] == ["adjacent"] * len(m["layer_type"])
    s = m["query_attn_scale"][nope] * math.log1p(math.floor((8191 + 1) / m["query_floor_scale"][nope])) + 1
    assert abs(s - 1.0693) < 5e-5


def test_model_alibi_heads_and_refusals(tmp_path):
    """BLOOM's ALiBi: one layer type per head with the slope modeling_bloom.py computes (12 heads: 2^-1..2^-8, then
    2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5, worked by hand); OPT, a FIFO and a repeated key are refused with ValueError."""
    import os
    path = tmp_path / "bloom.json"
    path.write_text(json.dumps({"model_type": "bloom", "n_head": 12, "hidden_size": 768, "n_layer": 2}))
    m = ropekit.model(str(path))
    assert m["layer_type"] == [f"full_attention/head_{h}" for h in range(12)]
    want = [2.0 ** -k for k in range(1, 9)] + [2.0 ** -(k + 0.5) for k in range(4)]
    for spelling, w in zip(m["encoding"], want):
        slope = float(spelling.split("slope=")[1].split(",")[0])
        assert abs(slope / w - 1) <= 8 * 2.0 ** -24  # float32 powers of a float32 base, 7th power at most
    opt = tmp_path / "opt.json"
    opt.write_text(json.dumps({"model_type": "opt", "hidden_size": 768, "num_attention_heads": 12}))
    with pytest.raises(ValueError, match="learned absolute position embeddings"):
        ropekit.model(str(opt))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"must be a regular file, not a FIFO"):
        ropekit.model(str(fifo))
    twice = tmp_path / "twice.json"
    twice.write_text('{"head_dim": 64, "rope_theta": 10000, "rope_theta": 500000}')
    with pytest.raises(ValueError, match="rope_theta = given twice"):
        ropekit.model(str(twice))


def test_frameworks_columns_and_the_public_ratios(tmp_path):
    """ropekit.frameworks: the command line's columns; YaRN 64 with attention_factor 1 (vLLM PR 48351): transformers
    1, vLLM 0.1 ln 64 + 1 = 1.4159, logits x2.005 (worked from the formula here)."""
    import math
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16,
                                "max_position_embeddings": 262144, "rope_theta": 500000.0,
                                "rope_scaling": {"rope_type": "yarn", "factor": 64.0,
                                                 "original_max_position_embeddings": 4096,
                                                 "attention_factor": 1.0}}))
    t = ropekit.frameworks(path)
    assert list(t) == ["layer_type", "framework", "version", "encoding", "pairing", "rotary_dims", "freq_denominator",
                       "cos_sin_factor", "softmax_scale", "logit_scale", "max_rel_freq_diff", "kernel_max_diff",
                       "notes"]
    at = {f: i for i, f in enumerate(t["framework"]) if t["version"][i] != "4.45"}
    assert t["cos_sin_factor"][at["transformers"]] == 1
    assert abs(t["cos_sin_factor"][at["vllm"]] - (0.1 * math.log(64) + 1)) < 1e-15
    assert round(t["logit_scale"][at["vllm"]] / t["logit_scale"][at["transformers"]], 3) == 2.005
    with pytest.raises(ValueError, match="ropekit.frameworks: .*must be a layer type"):
        ropekit.frameworks(path, layer_type="nope")
