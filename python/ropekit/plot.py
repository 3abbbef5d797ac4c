"""Figures on matplotlib (optional: Debian's python3-matplotlib, or pip's matplotlib): kernels and content
variances, fits and precision curves, drawn as ``ropekit kernel --plot`` draws its SVG. Long curves are summarised
per pixel column by ``ropekit.envelope``: a band from the column's min to its max where it holds several points and
a line through the column means, so a curve of any length hides no extreme and stays light. Legends go below the
axes, outside the data; each function returns the matplotlib Figure.

    >>> import ropekit.plot
    >>> fig = ropekit.plot.kernel(["rope:dim=128", "xpos:dim=128"], "1:100000")
    >>> [a.get_ylabel() for a in fig.get_axes()]
    ['kernel Phi(Dp)', 'content variance']

and ``fig.savefig("kernels.pdf")`` writes it.
"""

import numpy as np

import ropekit

__all__ = ["KERNEL_COLUMNS", "kernel", "variance", "fit", "precision"]

# The command line's panel labels (reports/kernel_plot.cpp).
KERNEL_COLUMNS = {
    "kernel": "kernel Phi(Dp)",
    "content_variance": "content variance",
    "expected_kernel": "expected kernel E[Phi(Dp)]",
    "frequency_variance": "frequency variance",
    "sine_residual": "sine residual",
    "continuum": "continuum kernel",
    "continuum_sine": "continuum sine",
}


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # matplotlib is optional: say how to get it
        raise ImportError("ropekit.plot draws with matplotlib, which is not installed "
                          "(Debian: apt install python3-matplotlib; pip: pip install matplotlib)") from e
    return plt


def _axes(ax, count, plt, height=3.0):
    """`count` axes sharing x: the given ones (an Axes, or a sequence of `count`), else a new figure's; and whether
    the figure is new."""
    if ax is None:
        fig, axes = plt.subplots(count, 1, sharex=True, figsize=(9, height * count + 0.6), squeeze=False)
        return fig, list(axes[:, 0]), True
    axes = [ax] if hasattr(ax, "plot") else list(ax)
    if len(axes) != count:
        raise ValueError(f"ropekit.plot: ax = {len(axes)} axes (must be {count}, one per panel)")
    return axes[0].figure, axes, False


def _pixels(ax):
    """The axes' width in pixels: the envelope's column count."""
    fig = ax.figure
    return max(1, int(round(ax.get_position().width * fig.get_figwidth() * fig.dpi)))


def _curve(ax, x, y, label, color, log_x, log_y, columns, line="mean"):
    """One curve through its per-column envelope: band (where a column holds several points) and a line through
    the columns' means or medians; line="none": the band only (a curve without a band keeps its line)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    keep = np.isfinite(x) & (x > 0) if log_x else np.isfinite(x)
    if not keep.any():
        return None
    e = ropekit.envelope(x[keep], y[keep], columns=columns or _pixels(ax), log=log_x, median=line == "median")
    lo = e["min_positive"] if log_y else e["min"]
    if line == "median":
        centre = e["median_positive"] if log_y else e["median"]
    else:
        centre = e["geometric_mean"] if log_y else e["mean"]
    banded = (e["count"] > 1).any()
    if line == "none" and banded:  # the band only, which the legend then shows
        return ax.fill_between(e["x"], lo, e["max"], color=color, alpha=0.22, lw=0, label=label)
    (drawn,) = ax.plot(e["x"], centre, color=color, lw=1.4, label=label)
    if banded:
        ax.fill_between(e["x"], lo, e["max"], color=drawn.get_color(), alpha=0.22, lw=0)
    return drawn


def _finish(fig, axes, xlabel, title, log_x, own):
    axes[-1].set_xlabel(xlabel + (" (log scale)" if log_x else ""))
    if title:
        fig.suptitle(title)
    handles, labels = axes[0].get_legend_handles_labels()
    for a in axes[1:]:
        for h, lab in zip(*a.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if not handles:
        return fig
    if own:  # a figure made here grows by the legend's rows, which sit below the axes, inside the figure
        h = fig.get_figheight()
        extra = 0.22 * len(labels) + 0.25
        fig.set_figheight(h + extra)
        fig.subplots_adjust(bottom=(extra + 0.55) / (h + extra), top=1 - (0.6 if title else 0.3) / (h + extra))
        fig.legend(handles, labels, loc="lower left", bbox_to_anchor=(axes[-1].get_position().x0, 0.01),
                   frameon=False, fontsize="small")
    else:  # the caller's axes: below them (save with bbox_inches="tight" to keep it)
        fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(axes[-1].get_position().x0, 0.0),
                   frameon=False, fontsize="small")
    return fig


def kernel(encodings=None, lags=None, *, columns=("kernel", "content_variance"), rho=1.0, seq_len=None, log_x=None,
           log_y=(), title=None, ax=None, envelope_columns=None, labels=None, line="mean", markers=None, model=None,
           layer_type=None, position=None):
    """The kernels (and the other columns of ``ropekit.kernel``) of one or several encodings over the lags.

    Args:
        encodings: a spelling or a list of them (one curve each).
        model, layer_type, position: a model file instead of encodings, as ``ropekit.kernel`` takes them: one curve
            per layer type, labelled "<file name>: <layer type>" (the file's base name, never its directory), drawn
            on the lags its window shows; each window marked, as ``ropekit kernel --model --plot`` marks it.
        lags: as ``ropekit.kernel`` takes them ("1:100000", an array); default 0,1,10,100,1000.
        columns: one panel per column, top to bottom (``KERNEL_COLUMNS``; the encodings must have it).
        rho, seq_len: as ``ropekit.kernel``.
        log_x: a log lag axis; default when the positive lags span more than two decades (lags <= 0 are then not
            drawn).
        log_y: the columns drawn on a log y axis (values <= 0 are not drawn there).
        title: the figure's title (default: none).
        ax: an Axes or a sequence of one Axes per column to draw into (default: a new figure).
        envelope_columns: columns of the per-pixel summary (default: the axes' width in pixels).
        labels: the legend's labels, one per encoding, distinct (default: the canonical spellings).
        line: what each curve's line follows through its pixel columns: "mean", "median" (``ropekit.envelope``'s
            bounded median) or "none" (the min-max band only), as ``ropekit kernel --plot-line``.
        markers: labelled dotted vertical lines, {lag: label} (e.g. {8192: "original context 8192"}); default: each
            scaling scheme's original context length, as ``ropekit kernel --plot`` marks it.

    Returns:
        matplotlib.figure.Figure
    """
    plt = _pyplot()
    columns = [columns] if isinstance(columns, str) else list(columns)
    log_y = [log_y] if isinstance(log_y, str) else list(log_y)
    for c in columns + log_y:
        if c not in KERNEL_COLUMNS:
            raise ValueError(f"ropekit.plot.kernel: column = {c!r} (must be one of {', '.join(KERNEL_COLUMNS)})")
    if line not in ("mean", "median", "none"):
        raise ValueError(f"ropekit.plot.kernel: line = {line!r} (must be mean, median or none)")
    if model is None and layer_type is None and position is None:
        names = [encodings] if isinstance(encodings, str) else list(encodings)
        data = ropekit.kernel(names, lags, rho=rho, seq_len=seq_len, columns=["encoding", "lag"] + columns)
        key = "encoding"
    else:
        data = ropekit.kernel(encodings, lags, rho=rho, seq_len=seq_len, columns=["encoding", "lag"] + columns,
                              model=model, layer_type=layer_type, position=position)
        key = "layer_type"
    lag = np.asarray(data["lag"], dtype=float)
    if lag.ndim != 1:
        raise ValueError("ropekit.plot.kernel: lags = k-D lags (must be 1-D: the figure's x axis)")
    positive = lag[lag > 0]
    if log_x is None:
        log_x = positive.size > 0 and positive.max() > 100 * positive.min()
    fig, axes, own = _axes(ax, len(columns), plt)
    encoding = np.asarray(data[key])
    order = list(dict.fromkeys(data[key]))  # canonical spellings (or layer types) in the order given
    if labels is None and key == "layer_type":
        brief = _model_file_name(model)
        labels = [", ".join(f"{brief}: {name}" for name in label.split(", ")) for label in order]
    elif labels is None:
        labels = order
    else:
        labels = [labels] if isinstance(labels, str) else [str(x) for x in labels]
        if len(labels) != len(order):
            raise ValueError(f"ropekit.plot.kernel: labels = {len(labels)} label(s) (must be {len(order)}, one per "
                             "curve)")
        if len(set(labels)) != len(labels):
            raise ValueError("ropekit.plot.kernel: labels = a label given twice (must be distinct labels)")
    if markers is None:
        markers = {}
        spellings = list(dict.fromkeys(data["encoding"]))
        for name in spellings:
            for L0 in _original_contexts(name):
                markers.setdefault(L0, f"original context {L0:g}")
        if key == "layer_type":  # each layer type's window, as the command line marks it
            m = ropekit.model(model)
            windows = dict(zip(m["layer_type"], m["window"]))
            for k, label in enumerate(order):
                for name in label.split(", "):
                    w = windows.get(name, "")
                    if w:
                        at = float(w.split()[1])
                        text = f"{w} ({labels[k]})"
                        markers[at] = text if at not in markers or text in markers[at] else f"{markers[at]}; {text}"
    for a, c in zip(axes, columns):
        for k, name in enumerate(order):
            rows = encoding == name
            y = np.asarray(data[c])[rows]
            seen = ~np.isnan(y) if key == "layer_type" else np.ones(len(y), dtype=bool)  # a window's masked lags
            _curve(a, lag[rows][seen], y[seen], labels[k], f"C{k}", log_x, c in log_y, envelope_columns, line)
        for at, text in markers.items():
            if not (lag.min() <= at <= lag.max()):  # as the command line: only markers on the lag axis
                continue
            a.axvline(at, color="#555", ls=":", lw=1)
            if a is axes[0]:
                a.annotate(text, (at, 1), xycoords=("data", "axes fraction"), xytext=(4, -12),
                           textcoords="offset points", color="#555", fontsize="small")
        a.set_ylabel(KERNEL_COLUMNS[c])
        a.set_yscale("log" if c in log_y else "linear")
        a.set_xscale("log" if log_x else "linear")
        a.grid(True, color="#e8e8e8")
    return _finish(fig, axes, "lag Dp", title, log_x, own)


def _model_file_name(path):
    """A model file as a legend names it (as the command line): its base name, with its directory's for a
    config.json ("Llama-3.1-8B/config.json"), never the whole path."""
    import os
    path = os.fspath(path)
    name, parent = os.path.basename(path), os.path.basename(os.path.dirname(path))
    return f"{parent}/{name}" if name == "config.json" and parent else name


def _original_contexts(spelling):
    """The original context lengths (orig=) a canonical spelling's scaling schemes name."""
    import re
    return sorted({float(m) for m in re.findall(r"\borig=([0-9.eE+]+)", spelling)})


def variance(encodings, lags=None, *, rho=1.0, seq_len=None, log_y=False, **kwargs):
    """The content variance Var[q^T G k] over the lags (``kernel`` with one content-variance panel)."""
    return kernel(encodings, lags, columns=["content_variance"], rho=rho, seq_len=seq_len,
                  log_y=["content_variance"] if log_y else [], **kwargs)


def fit(result, *, metric="mse", title=None, ax=None):
    """A fit's error against the evaluation length, one panel per target and one curve per method (the mean over
    seeds, with the seeds' min-max band), a dotted line at the training length.

    Args:
        result: what ``ropekit.fit`` returns (a dict of columns, or its pandas DataFrame).
        metric: "mse" (log y axis) or "r2".
    """
    plt = _pyplot()
    cols = {k: np.asarray(v) for k, v in dict(result).items()}
    if metric not in ("mse", "r2"):
        raise ValueError(f"ropekit.plot.fit: metric = {metric!r} (must be mse or r2)")
    targets = list(dict.fromkeys(cols["target"].tolist()))
    methods = list(dict.fromkeys(cols["method"].tolist()))
    fig, axes, own = _axes(ax, len(targets), plt)
    train = np.unique(cols["context"][cols["split"] == "train"])
    for a, t in zip(axes, targets):
        for k, m in enumerate(methods):
            rows = (cols["target"] == t) & (cols["method"] == m) & (cols["split"] == "eval")
            ctx = np.unique(cols["context"][rows])
            vals = [cols[metric][rows & (cols["context"] == c)] for c in ctx]
            a.plot(ctx, [v.mean() for v in vals], "o-", color=f"C{k}", label=m, ms=3)
            a.fill_between(ctx, [v.min() for v in vals], [v.max() for v in vals], color=f"C{k}", alpha=0.22, lw=0)
        for L in train:
            a.axvline(L, color="#555", ls=":", lw=1)
        a.set_title(f"target {t}", fontsize="medium")
        a.set_ylabel(metric)
        a.set_xscale("log")
        if metric == "mse":
            a.set_yscale("log")
        a.grid(True, color="#e8e8e8")
    return _finish(fig, axes, "evaluation length", title, False, own)


def precision(result, *, columns=None, title=None, ax=None):
    """A precision result (``ropekit.precision``): rows per position drawn against the position, one curve per error
    column, log-log; a tolerance result (``tolerance=...``) as its first positions, one line per quantity (and lag),
    a marker at ``first_position`` and a bar over ``first_position_low`` .. ``first_position_high`` (the score's
    95% interval), log x; a quantity not exceeded is named in its label.

    Args:
        result: what ``ropekit.precision`` returns (a "position" column, or a tolerance result's "first_position").
        columns: the columns to draw (default: every column but "position"; not for a tolerance result).
    """
    plt = _pyplot()
    cols = dict(result)
    if "first_position" in cols and "position" not in cols:
        if columns is not None:
            raise ValueError("ropekit.plot.precision: columns = given with a tolerance result (must be None: it draws "
                             "first_position per quantity)")
        return _first_positions(plt, cols, title, ax)
    cols = {k: np.asarray(v) for k, v in cols.items()}
    if "position" not in cols:
        raise ValueError(f"ropekit.plot.precision: result = a dict of {sorted(cols)} (must be what ropekit.precision "
                         "returns: rows with a 'position' column, or a tolerance result with 'first_position')")
    names = [c for c in cols if c not in ("position", "lag", "i")] if columns is None else list(columns)
    for c in names:
        if c not in cols or cols[c].dtype.kind not in "fi":
            raise ValueError(f"ropekit.plot.precision: column = {c!r} (must be a numeric column of the result)")
    fig, axes, own = _axes(ax, 1, plt, height=4.0)
    a = axes[0]
    x = cols["position"].astype(float)
    for k, c in enumerate(names):
        _curve(a, x, cols[c].astype(float), c, f"C{k}", True, True, None)
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_ylabel("error")
    a.grid(True, color="#e8e8e8")
    return _finish(fig, axes, "position", title, True, own)


def _first_positions(plt, cols, title, ax):
    """A tolerance result: per row, first_position with its interval on a log axis (position 0 drawn at 1)."""
    n = len(cols["quantity"])
    first = np.asarray(cols["first_position"], dtype=float)
    low = np.asarray(cols.get("first_position_low", first), dtype=float)
    high = np.asarray(cols.get("first_position_high", first), dtype=float)
    lag = np.asarray(cols.get("lag", np.full(n, np.nan)), dtype=float)
    tol = np.asarray(cols.get("tolerance", np.full(n, np.nan)), dtype=float)
    fig, axes, own = _axes(ax, 1, plt, height=0.45 * n + 1.4)
    a = axes[0]
    for k in range(n):
        label = str(cols["quantity"][k]) + ("" if np.isnan(lag[k]) else f" (lag {lag[k]:g})")
        label += f" > {tol[k]:g}"
        if np.isnan(first[k]):
            a.plot([], [], "o", color=f"C{k}", label=label + ": not exceeded")
            continue
        x = max(first[k], 1.0)
        lo = max(low[k], 1.0) if np.isfinite(low[k]) else x
        hi = max(high[k], 1.0) if np.isfinite(high[k]) else x
        a.errorbar([x], [k], xerr=[[x - lo], [hi - x]], fmt="o", color=f"C{k}", capsize=4,
                   label=label + f": {first[k]:.0f}")
        if not np.isfinite(high[k]):  # the interval runs past the positions given
            a.annotate("", xy=(x * 4, k), xytext=(x, k), arrowprops={"arrowstyle": "->", "color": f"C{k}"})
    a.set_yticks(range(n))
    a.set_yticklabels([str(q) for q in cols["quantity"]])
    a.set_ylim(-0.6, n - 0.4)
    a.invert_yaxis()
    a.set_xscale("log")
    a.grid(True, axis="x", color="#e8e8e8")
    return _finish(fig, axes, "first position past the tolerance", title, True, own)
