#!/usr/bin/env python3
"""Where a training step's GPU time goes, kernel by kernel: runs examples/dropin/train_fp32.py (or
another script) under torch.profiler and prints the kernels by total GPU time. Run it plain and
with the cuBLAS drop-in preloaded to see, in the program itself, what each served GEMM costs
against cuBLAS's kernel (a tune times kernels alone; a program runs them among others).

Usage: [LD_PRELOAD=.../libgemmtune_cublas.so] profile_step.py [--top N] [SCRIPT [ARGS...]]"""
import os
import runpy
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def main():
    args = sys.argv[1:]
    top = 15
    if args[:1] == ["--top"]:
        top, args = int(args[1]), args[2:]
    here = os.path.dirname(os.path.abspath(__file__))
    script = args[0] if args else os.path.join(here, "..", "..", "examples", "dropin", "train_fp32.py")
    sys.argv = [script] + (args[1:] if args else ["--steps", "12"])
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        runpy.run_path(script, run_name="__main__")
    # Kernels only: the operators that launched them carry the same time again.
    events = [e for e in prof.key_averages() if e.device_time_total > 0 and not e.key.startswith(("aten::", "cuda"))]
    events.sort(key=lambda e: e.device_time_total, reverse=True)
    total = sum(e.device_time_total for e in events)
    print(f"GPU time {total / 1e3:.2f} ms over {sum(e.count for e in events)} kernels")
    print(f"{'ms':>8} {'calls':>6} {'us/call':>8}  kernel")
    for e in events[:top]:
        print(f"{e.device_time_total / 1e3:8.3f} {e.count:6d} {e.device_time_total / e.count:8.1f}  {e.key[:110]}")


if __name__ == "__main__":
    main()
