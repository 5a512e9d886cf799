"""gemmtune: tuned SGEMM kernels for your GPU and shapes.

    import torch, gemmtune
    c = gemmtune.matmul(a, b)                 # float32 CUDA arrays of PyTorch, CuPy or JAX
    gemmtune.best(4096, 4096, 4096)           # what runs there, and how it was measured
    gemmtune.tune(sizes=[1024, 4096])         # tune this GPU (the gemmtune program's engine)

gemmtune.torch holds the PyTorch integration (an autograd- and torch.compile-aware op, Linear).
"""

from ._deps import prepare_environment

prepare_environment()  # before the core loads NVRTC: the package's pinned copy, unless set

from ._cli import results, tune  # noqa: E402
from ._gemmtune import NoGpuError  # noqa: E402
from ._matmul import matmul  # noqa: E402
from ._query import Choice, best  # noqa: E402

__all__ = ["Choice", "NoGpuError", "best", "matmul", "results", "tune"]
__version__ = "0.1.0"
