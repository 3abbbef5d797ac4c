"""ropekit.precision: the spec's public numbers (precision.md section 3), a bf16 table against transformers' own
(tests/data/transformers/cos-sin-tables.csv), and bad input raising ValueError."""

import os

import numpy as np
import pytest

import ropekit


def test_fp32_phase_error_public_numbers():
    e = ropekit.precision("rope:dim=128,base=1e4", positions=[4095, 32767, 262143, 1048575, 9999999])
    assert list(e["position"]) == [4095, 32767, 262143, 1048575, 9999999]
    printed = np.array([1.37e-4, 1.70e-3, 1.44e-2, 3.07e-2, 0.632])  # three significant digits
    assert np.all(np.abs(e["phase_error_max"] - printed) <= 0.005 * printed * 1.01)


def test_bf16_inverse_frequencies_and_tf32_angles():
    # Modalities PR #462: inverse frequencies held in bf16 put the phase 0.626 rad off at p = 512 (unwrapped).
    e = ropekit.precision("rope:dim=128,base=1e4", positions=[512], inv_freq_dtype="bf16")
    assert abs(e["inv_freq_part_max"][0] - 0.626) < 5e-4
    # transformers issue #48428: a TF32 matmul holds position 2049 as 2048 (theta_0 = 1).
    t = ropekit.precision("rope:dim=8,base=1e4", positions=[2049], dtype="tf32", table=True)
    assert t["angle"][0] == 2048.0
    assert list(t["i"]) == [0, 1, 2, 3]


def test_bf16_table_is_transformers_bit_for_bit():
    from conftest import ROOT
    row = next(line for line in open(os.path.join(ROOT, "tests", "data", "transformers", "cos-sin-tables.csv"))
               if line.startswith("default_128_1e4,cpu,bfloat16,1857,"))
    cos_bits = np.array([int(h, 16) for h in row.split(",")[4].split()], dtype=np.uint32) << 16
    want = cos_bits.view(np.float32).astype(np.float64)
    t = ropekit.precision("rope:dim=128,base=1e4", positions=[1857], dtype="bf16", table=True)
    assert np.array_equal(t["cos"], want)
    # The same table as bf16 bit patterns (uint16) and float32 values.
    assert t["cos_bits"].dtype == np.uint16 and t["cos"].dtype == np.float32
    assert np.array_equal(t["cos_bits"].astype(np.uint32), cos_bits >> 16)
    fp32 = ropekit.precision("rope:dim=8,base=1e4", positions=[3], table=True)
    assert fp32["cos_bits"].dtype == np.uint32
    assert np.array_equal(fp32["cos_bits"].view(np.float32), fp32["cos"])


def test_tolerance_first_position():
    # Llama 2's fp32 head: the phase error first passes 1e-3 at 17582; every position of 17500..17599 evaluated by
    # the row mode agrees (the independent route), while the search over all 2^31 positions evaluates a few hundred.
    rows = ropekit.precision("rope:dim=128,base=1e4", positions=np.arange(17500, 17600))
    first = int(rows["position"][np.argmax(rows["phase_error_max"] > 1e-3)])
    f = ropekit.precision("rope:dim=128,base=1e4", tolerance=1e-3)
    assert f["quantity"] == ["phase_error_max"] and f["search"] == ["exact"]
    assert f["first_position"][0] == first == 17582
    assert f["positions_evaluated"][0] < 1000
    # A range as text is never expanded; not exceeded in it: NaN.
    none = ropekit.precision("rope:dim=128,base=1e4", positions="0:1000", tolerance=1e-3)
    assert np.isnan(none["first_position"][0])
    # The score error per lag: a crossing between adjacent positions.
    s = ropekit.precision("rope:dim=128,base=1e4", tolerance=1e-3, lags=[1], seed=7)
    p = s["first_position"][0]
    around = ropekit.precision("rope:dim=128,base=1e4", positions=[p - 1, p], lags=[1], seed=7)
    assert around["score_rms_rel_error"][0] <= 1e-3 < around["score_rms_rel_error"][1]


@pytest.mark.parametrize("kwargs, message", [
    ({"dtype": "fp8"}, "dtype = 'fp8' (must be one of fp32, tf32, bf16, fp16)"),
    ({"positions": [-1]}, "positions = -1 (must be an integer in [0, 2^31 - 1])"),
    ({"positions": [2.5]}, "positions = 2.5"),
    ({"pipeline": "onnx"}, "pipeline = 'onnx' (must be huggingface, ggml, vllm, flash or llama4)"),
    ({"tolerance": 0.0}, "tolerance = 0 (must be finite and > 0)"),
    ({"tolerance": float("nan")}, "tolerance = nan (must be finite and > 0)"),
    ({"tolerance": 1e-3, "positions": "0:10.5:0.5"}, "positions = a step of 0.5 (must be an integer step)"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=r"^ropekit\.precision: ") as info:
        ropekit.precision("rope:dim=8,base=1e4", **kwargs)
    assert message in str(info.value)


def test_score_errors_per_lag_and_position():
    # transformers' CPU measurement (score-error.csv): RMS 7.7e-3 at p = 2^24 - 1 (64 trials); Monte Carlo noise 1.5x.
    e = ropekit.precision("rope:dim=128,base=1e4", positions=[16777215], lags=[1, 2], dtype="fp16", seed=5)
    assert list(e["lag"]) == [1, 2] and list(e["position"]) == [16777215, 16777215]
    assert 7.7e-3 / 1.5 < e["score_rms_rel_error"][0] < 7.7e-3 * 1.5
    again = ropekit.precision("rope:dim=128,base=1e4", positions=[16777215], lags=[1, 2], dtype="fp16", seed=5)
    assert np.array_equal(e["score_rms_rel_error"], again["score_rms_rel_error"])
