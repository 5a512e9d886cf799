#!/usr/bin/env python3
"""Writes a random workload for `tune --shapes` / `gemm_bench --shapes` (issue 12's benchmark):
M, N, K uniform in 1..4200, where one shape in four has M below 40 and one in four N below 40
(independently), as real workloads mix squares, ragged sizes and skinny products.

Usage: scripts/random-shapes.py SEED [COUNT] > FILE
"""
import random
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    seed = int(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 50
    rng = random.Random(seed)
    print(f"# {count} random shapes, scripts/random-shapes.py {seed} {count}: M, N, K in 1..4200;")
    print("# one in four with M < 40, one in four with N < 40")
    for _ in range(count):
        m = rng.randint(1, 39) if rng.random() < 0.25 else rng.randint(1, 4200)
        n = rng.randint(1, 39) if rng.random() < 0.25 else rng.randint(1, 4200)
        k = rng.randint(1, 4200)
        print(f"{m}x{n}x{k}")


if __name__ == "__main__":
    main()
