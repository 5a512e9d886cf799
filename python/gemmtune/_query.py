"""gemmtune.best: which configuration gemmtune would run for a problem, and how good the match is."""

from __future__ import annotations

from dataclasses import dataclass

from . import _gemmtune


@dataclass(frozen=True)
class Choice:
    instance: str          # the configuration run; "cublas_<layout>": cuBLAS itself
    match: str             # "exact", "nearest_size" or "default_config"
    measured_size: str     # the problem it was measured at ("4096", "512 nt batch 64"); "" for default_config
    measured_gflops: float
    cublas_gflops: float   # cuBLAS at measured_size on this GPU; 0 when not measured
    note: str              # why the match is not exact, when it is not


def best(m, n, k, layout="nn", *, batch=1, device=0, precision="strict") -> Choice:
    """The configuration gemmtune.matmul would run for row-major op(A)·op(B) of M x N x K on CUDA
    device `device` (layout: op(A) then op(B), "t" for a transposed view). Raises NoGpuError
    without a GPU and ValueError for dimensions < 1."""
    return Choice(*_gemmtune.best(device, layout, m, n, k, batch, precision))
