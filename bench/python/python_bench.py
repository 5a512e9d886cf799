"""Issue 31's targets for the Python package, on a GPU (scripts/gpu-check.sh python runs it):

1. overhead: host time per call at 64³ of gemmtune.matmul (with out=, and allocating its result)
   beside the C++ Library::sgemm call it makes (a loop in C++, same process, same tensors);
   median of rounds of 256 calls, each round synchronised after, so the launch queue never fills.
2. 4096³: device time per call of gemmtune.matmul beside the C++ call's, CUDA events, median.
3. MLP: a 3-layer float32 MLP (width x batch: 1024 x 1024, 1024 x 8192, 4096 x 4096; TF32 off)
   trained with SGD for 30 steps with torch.nn.Linear and with gemmtune.torch.Linear from the same
   weights: the loss of every step, and the time per step, interleaved rounds, median. Its GEMMs
   are batch x width x width in the nt (forward) and nn layouts, width x width x batch in tn:
   `scripts/gpu-check.sh python-tune` tunes them.

   With precision="faithful" (the layers may run tensor-core kernels verified at FP32 accuracy) too.

Usage: python3 bench/python/python_bench.py [--mlp-steps N] [--only-mlp] [--precision strict|faithful|both]
"""

import argparse
import statistics
import time

import torch

import gemmtune
import gemmtune.torch
from gemmtune import _gemmtune


def host_us_per_call(call, rounds=200, calls=256):
    per_call = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        call(calls)
        per_call.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(per_call)


def views(*tensors):
    return [(t.data_ptr(), t.shape, t.stride()) for t in tensors]


def overhead(rounds=200, calls=256):
    a, b, c = (torch.randn(64, 64, device="cuda") for _ in range(3))
    stream = torch.cuda.current_stream().cuda_stream
    va, vb, vc = views(a, b, c)
    gemmtune.matmul(a, b, out=c)  # prepare the shape once
    torch.cuda.synchronize()

    def loop(f):
        def run(n):
            for _ in range(n):
                f()
        return run

    paths = {
        "Library::sgemm (C++ loop)": lambda n: _gemmtune._launch_loop("strict", stream, va, vb, vc, n),
        "gemmtune.matmul(a, b, out=c)": loop(lambda: gemmtune.matmul(a, b, out=c)),
        "gemmtune.matmul(a, b)": loop(lambda: gemmtune.matmul(a, b)),
        "torch.mm(a, b, out=c)": loop(lambda: torch.mm(a, b, out=c)),
    }
    samples = {name: [] for name in paths}
    for _ in range(rounds):  # interleaved: every path sees the same host and GPU state
        for name, run in paths.items():
            t0 = time.perf_counter()
            run(calls)
            samples[name].append((time.perf_counter() - t0) / calls * 1e6)
            torch.cuda.synchronize()
    rows = {name: statistics.median(v) for name, v in samples.items()}
    base = rows["Library::sgemm (C++ loop)"]
    print(f"64x64x64 host time per call (us), {gemmtune.best(64, 64, 64).instance}; median of {rounds} "
          f"interleaved rounds of {calls} calls, each synchronised after")
    for name, us in rows.items():
        print(f"  {name:32s} {us:6.2f}  ({us - base:+5.2f} over the C++ call)")
    print(f"overhead: matmul with out= {rows['gemmtune.matmul(a, b, out=c)'] - base:.2f} us, "
          f"allocating {rows['gemmtune.matmul(a, b)'] - base:.2f} us above Library::sgemm (target <= 5 us)")


def layouts(width, batch, precision="strict"):
    """Device time per call of the MLP's GEMMs, gemmtune.matmul against torch.matmul."""
    x, w, g = (torch.randn(batch, width, device="cuda"), torch.randn(width, width, device="cuda"),
               torch.randn(batch, width, device="cuda"))
    cases = {"nt": (x, w.t()), "nn": (g, w), "tn": (g.t(), x)}
    for layout, (a, b) in cases.items():
        out = torch.empty(a.shape[0], b.shape[1], device="cuda")
        for _ in range(3):
            gemmtune.matmul(a, b, out=out, precision=precision)
            torch.matmul(a, b, out=out)
        ours = statistics.median(device_ms(lambda: gemmtune.matmul(a, b, out=out, precision=precision), reps=20)
                                 for _ in range(3))
        theirs = statistics.median(device_ms(lambda: torch.matmul(a, b, out=out), reps=20) for _ in range(3))
        m, k, n = a.shape[0], a.shape[1], b.shape[1]
        choice = gemmtune.best(m, n, k, layout, precision=precision).instance
        print(f"  {m}x{n}x{k} {layout}: gemmtune {ours:.4f} ms ({choice}), "
              f"torch {theirs:.4f} ms: {theirs / ours:.3f}x")


def device_ms(run, reps=30):
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def large(n=4096):
    a, b, c = (torch.randn(n, n, device="cuda") for _ in range(3))
    stream = torch.cuda.current_stream().cuda_stream
    va, vb, vc = views(a, b, c)
    for _ in range(3):
        gemmtune.matmul(a, b, out=c)
        _gemmtune._launch_loop("strict", stream, va, vb, vc, 1)
        torch.mm(a, b, out=c)
    flops = 2.0 * n ** 3
    rows = {}
    for _ in range(3):  # interleaved
        for name, run in (("Library::sgemm (C++)", lambda: _gemmtune._launch_loop("strict", stream, va, vb, vc, 1)),
                          ("gemmtune.matmul", lambda: gemmtune.matmul(a, b, out=c)),
                          ("torch.mm (cuBLAS)", lambda: torch.mm(a, b, out=c))):
            rows.setdefault(name, []).append(device_ms(run))
    print(f"{n}^3 device time per call, median of 30 (ms, TFLOP/s), {gemmtune.best(n, n, n).instance}")
    med = {name: statistics.median(v) for name, v in rows.items()}
    for name, ms in med.items():
        print(f"  {name:24s} {ms:7.3f} ms  {flops / ms / 1e9:6.1f} TFLOP/s")
    print(f"4096: gemmtune.matmul / Library::sgemm time = {med['gemmtune.matmul'] / med['Library::sgemm (C++)']:.4f} "
          "(target within 1 %)")


def mlp(linear, width, depth, seed, **options):
    torch.manual_seed(seed)
    layers = []
    for i in range(depth):
        layers.append(linear(width, width, **options))
        if i < depth - 1:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).cuda()


def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


def mlp_bench(steps, width, batch, depth=3, precision="strict"):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    theirs = mlp(torch.nn.Linear, width, depth, 0)
    ours = mlp(gemmtune.torch.Linear, width, depth, 0, precision=precision)
    ours.load_state_dict(theirs.state_dict())
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(batch, width, device="cuda", generator=g)
    y = torch.randn(batch, width, device="cuda", generator=g)
    opts = {m: torch.optim.SGD(m.parameters(), lr=1e-3) for m in (theirs, ours)}
    losses = {theirs: [], ours: []}
    for _ in range(steps):  # the same trajectory: losses compared step by step
        for m in (theirs, ours):
            losses[m].append(float(train_step(m, opts[m], x, y).detach()))
    worst = max(abs(p - q) / abs(q) for p, q in zip(losses[ours], losses[theirs]))
    print(f"MLP {depth}x{width}, batch {batch}, precision {precision}: "
          f"loss nn.Linear {losses[theirs][0]:.6f} -> {losses[theirs][-1]:.6f}, "
          f"gemmtune.torch.Linear {losses[ours][0]:.6f} -> {losses[ours][-1]:.6f}; worst relative difference over "
          f"{steps} steps {worst:.2e}")
    times = {theirs: [], ours: []}
    for _ in range(10):  # interleaved rounds of 5 steps
        for m in (theirs, ours):
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(5):
                train_step(m, opts[m], x, y)
            end.record()
            end.synchronize()
            times[m].append(start.elapsed_time(end) / 5)
    t_theirs, t_ours = statistics.median(times[theirs]), statistics.median(times[ours])
    host = {theirs: [], ours: []}
    for _ in range(7):  # the host's time to issue a step, the GPU left to run behind it; interleaved
        for m in (theirs, ours):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(5):
                train_step(m, opts[m], x, y)
            host[m].append((time.perf_counter() - t0) / 5 * 1e3)
            torch.cuda.synchronize()
    host = {m: statistics.median(v) for m, v in host.items()}
    print(f"MLP {width}x{batch} host time to issue a step: nn.Linear {host[theirs]:.3f} ms, gemmtune.torch.Linear "
          f"{host[ours]:.3f} ms; forward choice "
          f"{gemmtune.best(batch, width, width, 'nt', precision=precision).instance}")
    layouts(width, batch, precision)
    print(f"MLP {width}x{batch} {precision} step: nn.Linear {t_theirs:.3f} ms, gemmtune.torch.Linear {t_ours:.3f} ms: "
          f"speed {t_theirs / t_ours:.3f}x (target >= 1.0x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mlp-steps", type=int, default=30)
    parser.add_argument("--only-mlp", action="store_true", help="skip the overhead and 4096-cubed parts")
    parser.add_argument("--precision", choices=("strict", "faithful", "both"), default="both",
                        help="gemmtune.torch.Linear's precision in the MLP runs (default: both)")
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    if not args.only_mlp:
        overhead()
        large()
    for precision in ("strict", "faithful") if args.precision == "both" else (args.precision,):
        for width, batch in ((1024, 1024), (1024, 8192), (4096, 4096)):
            mlp_bench(args.mlp_steps, width, batch, precision=precision)
