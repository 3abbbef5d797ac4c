"""Sweeps of fits over an (encoding, target) grid, serially or on a Dask cluster."""

import math
import numbers

from . import _ropekit

#: The columns of ``ropekit fit`` (and of ``sweep``'s DataFrame), in the CSV's order.
FIT_COLUMNS = ["seed", "target", "method", "context", "split", "n_features", "n_train", "mse", "r2", "cond", "rank"]


def _fit_block(encodings, targets, train_context, eval_contexts, ridge, options):
    """One task: every encoding of a block against every target (the fit solves all targets at once)."""
    return _ropekit.fit(encodings, targets, train_context, eval_contexts, ridge, **options)


def _blocks(n, size):
    return [(i, min(n, i + size)) for i in range(0, n, size)]


def _as_sweep(e):
    """fit's ValueError as sweep's: "ropekit.fit: ..." -> "ropekit.sweep: ..." (messages name the function called)."""
    text = str(e)
    return ValueError("ropekit.sweep: " + (text[len("ropekit.fit: "):] if text.startswith("ropekit.fit: ") else text))


def sweep(encodings, targets, train_context, eval_contexts, ridge=1e-4, client=None, *, block_size=None,
          threads=None, **options):
    """Fit every encoding to every target and return the rows of ``ropekit fit`` as a pandas DataFrame.

    For each (seed, target, encoding): the ridge fit w = argmin |X_L w - y_L|^2 + ridge |w|^2 on the lags 0..L-1
    (L = train_context) and the same w scored on lags 0..T-1 of each T in eval_contexts (``fit``'s docstring has
    the formulas). Rows and columns are those of ``ropekit fit --encoding ... --target ...`` with the same options:
    seed, target, method (the encoding's spelling), context, split, n_features, n_train, mse, r2, cond, rank; in its
    order (seed, then target, then encoding, then the train row and one eval row per context).

    Args:
        encodings, targets: spellings (``list_encodings()``, ``list_targets()``).
        train_context, eval_contexts, ridge: as for ``fit``.
        client: None (run here, on every core) or a ``distributed.Client``: the grid is cut into blocks of
            encodings (every block fits all targets: one factorisation serves them), one task per block, run on
            the cluster's workers and gathered. Each encoding's fit does not depend on the others in its call, so
            the DataFrame equals the serial one row for row, bit for bit.
        block_size: encodings per task (default: about four tasks per worker thread, at most 64 encodings).
        threads: threads per fit (default: all cores serially, 1 per task on a cluster, whose workers are the
            parallelism). Never changes a number.
        **options: ``fit``'s keyword-only options (seeds, num_freqs, head_dim, theta, gamma, tau,
            target_freq_index, second_freq_index; not methods).

    Example (serially; ``client=distributed.Client(...)`` runs the same on a cluster)::

        >>> df = ropekit.sweep(["rope", "jordan_m3"], ["phase", "mixed"], 1024, [8192])
        >>> df.shape
        (8, 11)
    """
    import pandas as pd

    encodings = [encodings] if isinstance(encodings, str) else list(encodings)
    targets = [targets] if isinstance(targets, str) else list(targets)
    eval_contexts = [int(t) for t in eval_contexts]
    if "methods" in options:
        raise ValueError("ropekit.sweep: methods = given (must be absent: sweep fits encodings; use ropekit.fit)")
    if not encodings:
        raise ValueError("ropekit.sweep: encodings = [] (must be at least one encoding)")
    # block_size=0 made range() fail inside the grid and a negative one dropped every encoding (issue 20 item 14).
    if block_size is not None and (isinstance(block_size, bool) or not isinstance(block_size, numbers.Integral)
                                   or block_size < 1):
        raise ValueError(f"ropekit.sweep: block_size = {block_size!r:.60} (must be an integer >= 1 or None)")
    if client is None:
        opts = dict(options, threads=0 if threads is None else threads)
        try:
            rows = _ropekit.fit(encodings, targets, train_context, eval_contexts, ridge, **opts)
        except ValueError as e:
            raise _as_sweep(e) from None
        return pd.DataFrame(rows, columns=FIT_COLUMNS)

    # A bad spelling fails in its task and gather re-raises its ValueError here.
    opts = dict(options, threads=1 if threads is None else threads)
    if block_size is None:
        workers = sum(client.nthreads().values()) or 1
        block_size = max(1, min(64, math.ceil(len(encodings) / (4 * workers))))
    blocks = _blocks(len(encodings), int(block_size))
    futures = [client.submit(_fit_block, encodings[a:b], targets, train_context, eval_contexts, ridge, opts,
                             pure=False) for a, b in blocks]
    try:
        results = client.gather(futures)
    except ValueError as e:
        raise _as_sweep(e) from None

    # Each block's rows are (seed, target, encoding, context) in order; interleave them into the serial order.
    seeds = list(opts.get("seeds", [0]))
    per_pair = 1 + len(eval_contexts)
    frames = []
    for (a, b), rows in zip(blocks, results):
        df = pd.DataFrame(rows, columns=FIT_COLUMNS)
        n_e = b - a
        df["_s"] = [s for s in range(len(seeds)) for _ in range(len(targets) * n_e * per_pair)]
        df["_t"] = [t for _ in seeds for t in range(len(targets)) for _ in range(n_e * per_pair)]
        df["_e"] = [a + e for _ in seeds for _ in targets for e in range(n_e) for _ in range(per_pair)]
        df["_r"] = [r for _ in seeds for _ in targets for _ in range(n_e) for r in range(per_pair)]
        frames.append(df)
    out = pd.concat(frames, ignore_index=True).sort_values(["_s", "_t", "_e", "_r"], kind="stable")
    return out.drop(columns=["_s", "_t", "_e", "_r"]).reset_index(drop=True)
