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
    assert f["quantity"] == ["phase_error_max", "table_phase_error_max", "table_error_max"]
    assert f["search"] == ["exact"] * 3 and f["note"] == [""] * 3
    assert f["first_position"][0] == first == 17582
    assert f["first_position_low"][0] == f["first_position_high"][0] == 17582
    assert f["positions_evaluated"][0] < 1000
    # A range as text is never expanded; not exceeded in it: NaN.
    none = ropekit.precision("rope:dim=128,base=1e4", positions="0:1000", tolerance=1e-3)
    assert np.isnan(none["first_position"]).all()
    # The score error per lag: a Monte Carlo answer inside its 95% interval, rounded to the digits the interval
    # leaves (the unit of its half-width's leading digit).
    s = ropekit.precision("rope:dim=128,base=1e4", tolerance=1e-3, lags=[1], seed=7)
    p, lo, hi = s["first_position"][0], s["first_position_low"][0], s["first_position_high"][0]
    assert lo < p < hi
    unit = 10.0 ** np.floor(np.log10((hi - lo) / 2))
    assert unit >= 1000 and p % unit == 0 and lo % unit == 0 and hi % unit == 0
    # Ten seeds' answers mostly fall in one seed's interval (each about as uncertain: ~83% for a 95% interval).
    others = [ropekit.precision("rope:dim=128,base=1e4", tolerance=1e-3, lags=[1], seed=k)["first_position"][0]
              for k in range(10)]
    assert sum(lo <= x <= hi for x in others) >= 6


def test_tolerance_on_the_tables_in_their_dtype():
    # Issue 32: bf16, fp16 and fp32 gave one answer (the angle's). Pair 0 of bf16 tables at position 1 holds cos 1
    # and sin 1 as 138/256 and 215/256 (8 significant bits, by hand): 1.64e-4 rad of phase, which fp32 tables
    # reach only thousands of positions later.
    tol = 0.99 * abs(np.arctan2(215, 138) - 1)
    bf16 = ropekit.precision("rope:dim=128,base=1e4", tolerance=tol, dtype="bf16")
    fp32 = ropekit.precision("rope:dim=128,base=1e4", tolerance=tol, dtype="fp32")
    assert bf16["first_position"][0] == fp32["first_position"][0]  # the angle: no dtype in it
    assert bf16["first_position"][1] <= 1 < 1000 < fp32["first_position"][1]
    # gpt-oss: the attention factor 1.3465736 is held as 172 x 2^-7 = 1.34375 in bf16 (by hand): 2.8e-3 at position 0.
    g = ropekit.precision("rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096)", tolerance=1e-3, dtype="bf16")
    assert g["first_position"][2] == 0
    assert abs(g["value"][2] - (1 + 0.1 * np.log(32) - 1.34375)) < 1e-12
    assert "attention factor" in g["note"][2] and "1.34657" in g["note"][2] and "1.34375" in g["note"][2]


def test_plot_of_a_tolerance_result():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import ropekit.plot
    s = ropekit.precision("rope:dim=128,base=1e4", tolerance=1e-3, lags=[1, 64], positions="0:2147483000")
    fig = ropekit.plot.precision(s)
    a = fig.get_axes()[0]
    assert a.get_xscale() == "log"
    # One marker per lag at its first position, the bar over its interval.
    xs = sorted(float(c.lines[0].get_xdata()[0]) for c in a.containers)
    assert xs == sorted(float(x) for x in s["first_position"])
    with pytest.raises(ValueError, match="columns = given with a tolerance result"):
        ropekit.plot.precision(s, columns=["value"])
    with pytest.raises(ValueError, match=r"result = a dict of \['x'\]"):
        ropekit.plot.precision({"x": [1.0]})
    mpl.pyplot.close("all")


def test_positions_past_finite_angles_and_sizes_refused_before_allocating():
    # fp16 angles: 65519 rounds to 65504 (fp16's largest), 65520 to inf.
    with pytest.raises(ValueError, match=r"positions = 65520 \(must be at most 65519: the largest position whose "
                                         r"fp16 angles of this encoding are finite\)"):
        ropekit.precision("rope:dim=64,base=1e4", positions=[65520], angle_dtype="fp16")
    assert np.isfinite(ropekit.precision("rope:dim=64,base=1e4", positions=[65519], angle_dtype="fp16")["phase_error_max"]).all()
    # Refused for time from the spelling's sizes before the plan's arrays (2^23 pairs: ~1 GB of frequencies and held
    # tables) are allocated: the child uses no more memory than one refused right after the spelling is parsed
    # (parsing a rope of dim 2^24 builds its frequencies once: ~300 MB, the same in both).
    import resource
    import subprocess
    import sys

    def child(call):
        code = f"import ropekit\ntry:\n    {call}\nexcept ValueError as e:\n    print(e)\n"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, timeout=120)
        return out.stdout, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest child so far

    parsed, parse_rss = child('ropekit.precision("rope:dim=16777216", table=True, tolerance=1e-3)')
    assert "table = given with tolerance" in parsed
    refused, rss = child('ropekit.precision("rope:dim=16777216", positions="0:100000000")')
    assert "positions = 100000000 positions (must be at most 21457 positions" in refused
    assert rss <= parse_rss * 1.1 + 20 * 1024


@pytest.mark.parametrize("kwargs, message", [
    ({"dtype": "fp8"}, "dtype = 'fp8' (must be one of fp32, tf32, bf16, fp16)"),
    ({"positions": [-1]}, "positions = -1 (must be an integer in [0, 2^31 - 1])"),
    ({"positions": [2.5]}, "positions = 2.5"),
    ({"pipeline": "onnx"}, "pipeline = 'onnx' (must be huggingface, ggml, vllm, flash, llama4 or ggml-fma)"),
    ({"pipeline": "ggml", "dtype": "bf16"}, "dtype = bf16 (must be fp32 or fp16 with pipeline ggml: ggml's CPU "
                                            "rope takes f32 and f16 tensors"),
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


def test_list_pipelines_names_every_pipeline_precision_takes():
    p = ropekit.list_pipelines()
    assert p["pipeline"] == ["huggingface", "ggml", "vllm", "flash", "llama4", "ggml-fma"]
    assert set(p) >= {"aliases", "convention", "tables", "rotation", "stored", "source"}
    for name in p["pipeline"]:
        ropekit.precision("rope:dim=8,base=1e4", positions=[7], pipeline=name)  # each listed name is accepted
    # transformers' tables are cast to the model dtype; Llama 4's complex64 ones are not (its source says so).
    row = dict(zip(p["pipeline"], p["tables"]))
    assert row["huggingface"] == "model dtype" and row["llama4"] == "fp32"


def _model(name):
    from conftest import ROOT
    return os.path.join(ROOT, "data", "models", name)


def test_model_picks_the_pipeline_its_file_implies_with_a_note():
    # Any config.json but Llama 4's: transformers' Llama-family code; Llama 4: its own; pipeline= overrides (no note).
    with pytest.warns(UserWarning, match=r"^ropekit\.precision: note: pipeline huggingface \(the model file is a "
                                         r"config\.json"):
        hf = ropekit.precision(model=_model("llama-3.1-8b.json"), positions=[4095])
    with pytest.warns(UserWarning, match=r"note: pipeline llama4 \(the config's model_type is llama4"):
        ropekit.precision(model=_model("llama-4-scout.json"), layer_type="chunked_attention", positions=[4095])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named = ropekit.precision(model=_model("llama-3.1-8b.json"), positions=[4095], pipeline="huggingface")
    # The same pipeline chosen or named: the same numbers.
    assert np.array_equal(hf["phase_error_max"], named["phase_error_max"])


def test_model_deepseek_v3_runs_on_its_rope_part():
    with pytest.warns(UserWarning, match="its 128 nope dims carry no rotation and are held exactly"):
        d = ropekit.precision(model=_model("deepseek-v3.json"), positions=[1, 4095], table=True)
    assert list(d["i"][:3]) == [0, 1, 2] and len(d["i"]) == 2 * 32  # 32 rotated pairs per position
    with pytest.raises(ValueError, match=r"^ropekit\.precision: model = 'bloom-560m\.json: full_attention/head_0' \(must be a model "
                                         r"whose encoding is a rope"):
        ropekit.precision(model=_model("bloom-560m.json"), layer_type="full_attention/head_0", positions=[1])
