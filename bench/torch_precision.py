"""make bench: ropekit's precision emulation against PyTorch computing the same bf16 tables (issue 22's speed goal).

PyTorch (Debian's python3-torch, CPU, one thread) computes the cos/sin tables of a 128-dim head over 2^20 positions
the way transformers' LlamaRotaryEmbedding.forward does: fp32 inv_freq, the angle matmul inv_freq @ positions, the
halves concatenated, cos and sin (times the attention factor, 1 here) cast to bf16. ropekit computes the same tables
by software rounding and, from them, the phase errors against the exact encoding (ropekit.precision). Both on one
core; best of 3 process-CPU times. Usage: python3 bench/torch_precision.py [--positions N] [--block B]
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import best_cpu  # noqa: E402




def torch_tables(torch, positions, dim, base, block):
    # transformers' LlamaRotaryEmbedding: inv_freq = 1 / base^(arange(0, dim, 2) / dim) in fp32, then per forward
    # freqs = (inv_freq[None, :, None] @ position_ids[:, None, :].float()).transpose(1, 2), emb = cat(freqs, freqs),
    # cos = emb.cos() * attention_scaling, cast to the model dtype.
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    inv = inv_freq[None, :, None].float()
    for start in range(0, positions, block):
        ids = torch.arange(start, min(start + block, positions))[None, :]
        freqs = (inv @ ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = (emb.cos() * 1.0).to(torch.bfloat16)
        sin = (emb.sin() * 1.0).to(torch.bfloat16)
    return cos, sin


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--positions", type=int, default=1 << 20)
    ap.add_argument("--block", type=int, default=1 << 16, help="positions per forward call (PyTorch)")
    args = ap.parse_args()
    import ropekit

    n = args.positions
    spelling = "rope:dim=128,base=1e4"
    pos = np.arange(n, dtype=np.float64)
    ours = best_cpu(lambda: ropekit.precision(spelling, positions=pos, dtype="bf16"))
    line = f"ropekit.precision({spelling}, dtype=bf16, {n} positions): {ours:.3f} s (tables and phase errors)"
    try:
        import torch
    except ImportError:
        print(line + "; PyTorch not installed (python3-torch), no comparison")
        return 0
    torch.set_num_threads(1)
    # Bit-for-bit check of a slice first: PyTorch's bf16 tables against ropekit's (same fp32 inv_freq on the CPU).
    cos, sin = torch_tables(torch, 4096, 128, 10000.0, 4096)
    table = ropekit.precision(spelling, positions=np.arange(4096.0), dtype="bf16", table=True)
    got = table["cos"].reshape(4096, 64)
    same = np.mean(got == cos[0, :, :64].float().numpy())
    theirs = best_cpu(lambda: torch_tables(torch, n, 128, 10000.0, args.block))
    print(f"{line}; PyTorch {torch.__version__} (CPU, 1 thread, LlamaRotaryEmbedding.forward's ops, blocks of "
          f"{args.block}): {theirs:.3f} s (tables only); ropekit / PyTorch time {ours / theirs:.2f}; "
          f"bf16 cos entries equal to PyTorch's: {100 * same:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
