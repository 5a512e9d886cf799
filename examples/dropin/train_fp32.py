#!/usr/bin/env python3
"""An ordinary FP32 PyTorch training loop that knows nothing of gemmtune: an MLP and an attention
block, forward and backward, TF32 off. The cuBLAS drop-in serves its GEMMs when preloaded
(LD_PRELOAD=libgemmtune_cublas.so); see docs/dropin.md and scripts/dropin-demo.sh.

Prints one line per step, `step I loss HEX` (the loss as float.hex: bit-exact comparisons), then
`step_ms MEDIAN` over the steps after the first few (CUDA events around each step)."""
import argparse
import statistics

import torch
import torch.nn as nn


class Attention(nn.Module):
    """Attention written with matmuls (batched GEMMs), not a fused kernel."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        y = scores.softmax(-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Model(nn.Module):
    def __init__(self, dim=1024, hidden=4096, heads=8):
        super().__init__()
        self.attention = Attention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        x = x + self.attention(x)
        x = x + self.mlp(x)
        return self.head(x).mean()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=512)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # FP32 GEMMs: what the drop-in serves
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    model = Model().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.tokens, 1024, device="cuda")
    times = []
    for step in range(args.steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        opt.zero_grad(set_to_none=True)
        loss = model(x)
        loss.backward()
        opt.step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
        print(f"step {step} loss {loss.item().hex()}", flush=True)
    print(f"step_ms {statistics.median(times[3:] or times):.4f}")


if __name__ == "__main__":
    main()
