#!/usr/bin/env python3
"""Writes a random workload for `tune --shapes` / `gemm_bench --shapes`.

Recipes (M, N, K uniform in 1..4200 unless drawn small):
  mixed    (default; issue 12's benchmark) one shape in four has M below 40, one in four N below 40
  untuned  (issue 28's benchmark: shapes the main job never tuned) one in five has M <= 40, one in
           seven N <= 40, one in twelve K <= 64 — real programs mix squares, ragged sizes,
           skinny products and shallow ones

Usage: scripts/random-shapes.py SEED [COUNT] [--recipe mixed|untuned] > FILE
"""
import argparse
import random

RECIPES = {
    # name: (P(M small), M bound, P(N small), N bound, P(K small), K bound)
    "mixed": (0.25, 39, 0.25, 39, 0.0, 0),
    "untuned": (1 / 5, 40, 1 / 7, 40, 1 / 12, 64),
}
HEADERS = {
    "mixed": "one in four with M < 40, one in four with N < 40",
    "untuned": "one in five with M <= 40, one in seven with N <= 40, one in twelve with K <= 64",
}


def main():
    parser = argparse.ArgumentParser(usage=__doc__.strip().splitlines()[-1])
    parser.add_argument("seed", type=int)
    parser.add_argument("count", type=int, nargs="?", default=50)
    parser.add_argument("--recipe", choices=sorted(RECIPES), default="mixed")
    args = parser.parse_args()
    pm, bm, pn, bn, pk, bk = RECIPES[args.recipe]
    rng = random.Random(args.seed)
    tail = f" --recipe {args.recipe}" if args.recipe != "mixed" else ""
    print(f"# {args.count} random shapes, scripts/random-shapes.py {args.seed} {args.count}{tail}: M, N, K in 1..4200;")
    print(f"# {HEADERS[args.recipe]}")
    for _ in range(args.count):
        m = rng.randint(1, bm) if rng.random() < pm else rng.randint(1, 4200)
        n = rng.randint(1, bn) if rng.random() < pn else rng.randint(1, 4200)
        k = rng.randint(1, bk) if pk and rng.random() < pk else rng.randint(1, 4200)
        print(f"{m}x{n}x{k}")


if __name__ == "__main__":
    main()
