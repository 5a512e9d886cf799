"""gemmtune.matmul: C = alpha·A·B + beta·C on PyTorch, CuPy or JAX CUDA arrays with gemmtune's
tuned kernels, on the framework's current stream, without copies or host synchronisation."""

from __future__ import annotations

from ._frameworks import adapter_for


def matmul(a, b, *, out=None, alpha=1.0, beta=0.0, precision="strict"):
    """alpha · a @ b (+ beta · out) for float32 CUDA arrays of PyTorch, CuPy or JAX.

    a is (M, K) or (batch, M, K); b is (K, N) or (batch, K, N); a 2-D operand, or a batch of one,
    is used for every batch. Transposed views (x.T, x.mT) are read as such, without a copy: any
    matrix whose rows or columns are contiguous works. out, when given, receives the result
    ((batch,) M, N, any such layout) and is returned; beta applies to its old contents. With
    precision="faithful" the library may also run tensor-core kernels tuned and verified at FP32
    accuracy. Runs on the framework's current stream of the tensors' device; returns at once.

    JAX: an XLA custom call on JAX's stream, also inside jax.jit, jax.vmap and jax.grad. JAX
    arrays are immutable, so out= and beta are for PyTorch and CuPy; the result is a new array.
    """
    return adapter_for("a", a).matmul(a, b, out, alpha, beta, precision)
