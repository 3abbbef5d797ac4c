"""ropekit.model: a config.json's layer types as the command line prints them; bad files raise ValueError."""

import json

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
