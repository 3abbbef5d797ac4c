"""Figures: ropekit.envelope against a binning written here in numpy; ropekit.plot's figures against the numbers
they draw; the command line's SVG rendered to PNG by rsvg-convert (the pixels of each curve inside its panels,
none outside them)."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import ropekit
from conftest import CLI


def numpy_envelope(x, y, columns, lo, hi, log=False):
    """Per column: count, min, max, mean of the finite y whose x falls in [lo, hi] (numpy, independently)."""
    t = np.log10(x) if log else x
    a, b = (np.log10(lo), np.log10(hi)) if log else (lo, hi)
    u = (t - a) / (b - a)
    inside = (u >= 0) & (u <= 1) & np.isfinite(y)
    c = np.minimum((u[inside] * columns).astype(int), columns - 1)
    out = {}
    for col in np.unique(c):
        v = y[inside][c == col]
        out[int(col)] = (v.size, v.min(), v.max(), v.mean())
    return out


@pytest.mark.parametrize("log", [False, True])
def test_envelope_matches_a_numpy_binning(log):
    rng = np.random.default_rng(5)
    x = np.sort(rng.uniform(1, 1000, 20000))
    y = np.sin(x / 3) + rng.normal(0, 0.1, x.size)
    e = ropekit.envelope(x, y, columns=300, log=log)
    want = numpy_envelope(x, y, 300, x.min(), x.max(), log)
    assert len(e["count"]) == len(want)
    for i, col in enumerate(sorted(want)):
        n, lo, hi, mean = want[col]
        assert e["count"][i] == n
        assert e["min"][i] == lo and e["max"][i] == hi  # the same values: exact
        # numpy's pairwise sum against the column's sum in order: about 67 terms of |y| < 1.5 a column, so the
        # means differ by at most 67 * 2^-53 * 1.5 = 1.1e-14.
        assert e["mean"][i] == pytest.approx(mean, rel=0, abs=1.2e-14)
    assert e["outside"] == 0


def test_envelope_gaps_log_values_and_refusals():
    e = ropekit.envelope([0, 1, 2, 3], [1.0, np.nan, 4.0, -1.0], columns=4)
    assert list(e["count"]) == [1, 0, 1, 1]
    assert np.isnan(e["mean"][1])  # the gap's row breaks a line drawn through the rows
    assert e["geometric_mean"][2] == pytest.approx(4.0)
    assert np.isnan(e["min_positive"][3])  # -1: nothing for a log axis
    with pytest.raises(ValueError, match=r"ropekit.envelope: y = 1 values \(must be as many as x \(2\)\)"):
        ropekit.envelope([1, 2], [1])
    with pytest.raises(ValueError, match=r"columns = 0 \(must be an integer in \[1, 1000000\]\)"):
        ropekit.envelope([1, 2], [1, 2], columns=0)
    with pytest.raises(ValueError, match=r"lo = 0 with hi = 2 \(must be a range 0 < lo < hi"):
        ropekit.envelope([1, 2], [1, 2], lo=0, log=True)
    with pytest.raises(ValueError, match=r"must be a range lo < hi"):
        ropekit.envelope([1, 1], [1, 2])


mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import ropekit.plot  # noqa: E402  (after the backend)


def test_plot_kernel_draws_each_curves_extremes():
    encodings = ["rope:dim=64", "xpos:dim=64"]
    fig = ropekit.plot.kernel(encodings, "1:20000", log_y=["content_variance"])
    axes = fig.get_axes()
    assert [a.get_ylabel() for a in axes] == ["kernel Phi(Dp)", "content variance"]
    assert axes[0].get_xscale() == "log" and axes[1].get_yscale() == "log"
    want = ropekit.kernel(encodings, "1:20000")
    names = np.asarray(want["encoding"])
    for a, col in zip(axes, ["kernel", "content_variance"]):
        bands = a.collections
        assert len(bands) == 2
        for band, name in zip(bands, dict.fromkeys(want["encoding"])):
            v = np.asarray(want[col])[names == name]
            ys = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
            lo = v[v > 0].min() if col == "content_variance" else v.min()
            assert ys.min() == pytest.approx(lo, rel=1e-12)
            assert ys.max() == pytest.approx(v.max(), rel=1e-12)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == list(dict.fromkeys(want["encoding"]))
    mpl.pyplot.close(fig)


def test_panel_labels_are_the_command_lines(tmp_path):
    # ropekit.plot's labels repeat reports/kernel_plot.cpp's: every column's panel, drawn by the command line.
    svg = tmp_path / "all.svg"
    subprocess.run([CLI, "kernel", "--encoding", "rope:dim=16", "rf-rope:spectrum=gaussian(sigma=1),blocks=4",
                    "--lags", "0:20", "--plot", str(svg), "--plot-columns", ",".join(ropekit.plot.KERNEL_COLUMNS),
                    "--out", str(tmp_path / "k.csv")], check=True, capture_output=True)
    labels = re.findall(r'<g class="panel" data-ylabel="([^"]*)"', svg.read_text())
    assert labels == list(ropekit.plot.KERNEL_COLUMNS.values())


def test_plot_kernel_into_given_axes_and_refusals():
    plt = mpl.pyplot
    fig, ax = plt.subplots()
    assert ropekit.plot.kernel("rope:dim=16", "0:50", columns="kernel", ax=ax) is fig
    assert ax.get_xscale() == "linear"  # 1..49 spans under two decades
    with pytest.raises(ValueError, match="column = 'phase'"):
        ropekit.plot.kernel("rope:dim=16", "0:50", columns=["phase"])
    with pytest.raises(ValueError, match="ax = 1 axes"):
        ropekit.plot.kernel("rope:dim=16", "0:50", ax=ax)
    plt.close("all")


def test_plot_variance_fit_and_precision():
    v = ropekit.plot.variance("rope:dim=16", "1:1000", log_y=True)
    assert [a.get_ylabel() for a in v.get_axes()] == ["content variance"]
    r = ropekit.fit(["rope:dim=16", "jordan_m3"], train_context=64, eval_contexts=[64, 128, 256])
    f = ropekit.plot.fit(r)
    targets = list(dict.fromkeys(r["target"]))
    assert [a.get_title() for a in f.get_axes()] == [f"target {t}" for t in targets]
    line = f.get_axes()[0].get_lines()[0]  # rope:dim=16 on the first target: the eval rows' mse per context
    rows = [(c, m) for c, m, t, s, me in zip(r["context"], r["mse"], r["target"], r["split"], r["method"])
            if t == targets[0] and s == "eval" and me == "rope:dim=16"]
    np.testing.assert_allclose(line.get_ydata(), [m for _, m in sorted(rows)])
    p = ropekit.precision("rope:dim=64", positions="1:1000")
    g = ropekit.plot.precision(p, columns=["phase_error_max"])
    assert g.get_axes()[0].get_xscale() == "log"
    with pytest.raises(ValueError, match="column = 'nope'"):
        ropekit.plot.precision(p, columns=["nope"])
    mpl.pyplot.close("all")


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="rsvg-convert (Debian librsvg2-bin) not installed")
def test_cli_svg_renders_every_curve_inside_its_panels(tmp_path):
    svg, png = tmp_path / "k.svg", tmp_path / "k.png"
    encodings = ["rope:dim=128,base=10000", "rope:dim=128,base=500000", "xpos:dim=128"]
    subprocess.run([CLI, "kernel", "--encoding", *encodings, "--lags", "1:131073", "--plot", str(svg),
                    "--out", str(tmp_path / "k.csv")], check=True, capture_output=True)
    subprocess.run(["rsvg-convert", str(svg), "-o", str(png)], check=True)
    text = svg.read_text()
    width, height = (int(float(v)) for v in re.search(r'<svg [^>]*width="([\d.]+)" height="([\d.]+)"', text).groups())
    img = mpl.image.imread(str(png))[:, :, :3]
    assert img.shape[:2] == (height, width)
    frames = [tuple(float(v) for v in m) for m in
              re.findall(r'<rect class="frame" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"', text)]
    assert len(frames) == 2
    inside = np.zeros(img.shape[:2], bool)
    for x, y, w, h in frames:
        inside[int(y) + 1:int(y + h), int(x) + 1:int(x + w)] = True
    legend_top = int(max(y + h for x, y, w, h in frames)) + 30  # below the x tick labels
    for color in ("#1f77b4", "#ff7f0e", "#2ca02c"):  # the palette's first three: one per curve
        rgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
        near = np.abs(img - rgb).max(axis=2) < 0.02
        for x, y, w, h in frames:  # every curve in both panels
            assert near[int(y):int(y + h), int(x):int(x + w)].sum() > 200, (color, y)
        swatch = np.abs(img - (0.22 * rgb + 0.78)).max(axis=2) < 0.02  # the band's 22% over white
        assert swatch[legend_top:].sum() > 100  # its legend swatch (28 x 10 px), below the panels
        assert near[:legend_top][~inside[:legend_top]].sum() == 0  # nothing drawn outside the frames


def test_envelope_median_is_each_columns_lower_median():
    # Issue 32: a median line needs each column's median; numpy's sorted values give it (the ceil(n/2)-th value).
    x = np.arange(1000.0)
    y = np.cos(x / 3.7) + 0.01 * x
    e = ropekit.envelope(x, y, columns=10, median=True)
    for c in range(10):
        v = np.sort(y[(x >= 100 * c) & (x < 100 * (c + 1))])  # 100 values a column: exact (under 128)
        assert e["median"][c] == v[int(np.ceil(len(v) / 2)) - 1]
        assert e["median_rank_error"][c] == 0
    big = ropekit.envelope(np.zeros(5000), np.arange(5000.0)[::-1], columns=1, lo=-1, hi=1, median=True)
    # 5000 values in one column: the value returned is within the stated rank error of rank 2500.
    assert abs((big["median"][0] + 1) - 2500) <= big["median_rank_error"][0] <= 6 * 5000 / 128
    assert "median" not in ropekit.envelope(x, y, columns=10)


def test_plot_kernel_labels_line_and_markers():
    yarn = "rope:dim=64,base=10000,scaling=yarn(factor=4,orig=512)"
    fig = ropekit.plot.kernel(["rope:dim=64", yarn], "1:4096", labels=["plain", "YaRN"], line="median")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["plain", "YaRN"]
    a = fig.get_axes()[0]
    # The median line of the plain curve: each plotted y is one of the kernel's values (a median is a value).
    k = ropekit.kernel("rope:dim=64", "1:4096")["kernel"]
    assert np.isin(a.get_lines()[0].get_ydata(), k).all()
    # The original context of the yarn curve, marked and labelled in the first panel.
    assert [t.get_text() for t in a.texts] == ["original context 512"]
    assert any(list(l.get_xdata()) == [512, 512] for l in a.get_lines())
    mpl.pyplot.close(fig)
    none = ropekit.plot.kernel("rope:dim=64", "1:4096", columns="kernel", line="none")
    assert none.get_axes()[0].get_lines() == []  # the band only
    mpl.pyplot.close(none)
    with pytest.raises(ValueError, match=r"labels = 1 label\(s\) \(must be 2, one per curve\)"):
        ropekit.plot.kernel(["rope:dim=64", yarn], "1:100", labels=["one"])
    with pytest.raises(ValueError, match="line = 'spline'"):
        ropekit.plot.kernel("rope:dim=64", "1:100", line="spline")
