"""PyTorch integration: gemmtune's GEMM as a torch.library custom op (torch.ops.gemmtune.mm), so
that it works with autograd (the backward runs the transposed GEMMs through gemmtune too) and
inside torch.compile graphs, and Linear, a drop-in for torch.nn.Linear in float32.

gemmtune.matmul uses the op by itself when a tensor needs gradients or torch.compile traces it.
"""

from __future__ import annotations

import torch

from ._frameworks import adapter_for

__all__ = ["Linear", "mm"]


@torch.library.custom_op("gemmtune::mm", mutates_args=())
def mm(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0, precision: str = "strict") -> torch.Tensor:
    """alpha · a @ b with gemmtune's kernels: 2-D or batched 3-D float32 CUDA tensors, any
    row- or column-contiguous views (a 2-D operand or a batch of one serves every batch)."""
    return adapter_for("a", a).op_matmul(a, b, alpha, precision)


def _result_shape(a, b):
    if a.dim() == 2 and b.dim() == 2:
        return (a.shape[0], b.shape[1])
    batch_a = a.shape[0] if a.dim() == 3 else 1
    batch_b = b.shape[0] if b.dim() == 3 else 1
    return (batch_a if batch_b == 1 else batch_b, a.shape[-2], b.shape[-1])


@mm.register_fake
def _(a, b, alpha=1.0, precision="strict"):
    torch._check(a.shape[-1] == b.shape[-2], lambda: f"a is {tuple(a.shape)} and b {tuple(b.shape)}: inner dimensions differ")
    return a.new_empty(_result_shape(a, b))


def _setup_context(ctx, inputs, output):
    a, b, alpha, precision = inputs
    ctx.save_for_backward(a, b)
    ctx.alpha, ctx.precision = alpha, precision


def _reduce_to(grad, like):
    """Sums a batched gradient over the batches an operand was broadcast across."""
    if like.dim() == 2 and grad.dim() == 3:
        return grad.sum(0)
    if like.dim() == 3 and like.shape[0] == 1 and grad.shape[0] != 1:
        return grad.sum(0, keepdim=True)
    return grad


def _stored_transposed(t):
    """Whether t's matrices have their columns contiguous (t is a view like W.t())."""
    return t.stride(-2) == 1 and t.stride(-1) != 1


def _backward(ctx, grad):
    """Each gradient in its input's own layout, as PyTorch's mm does: the gradient of W.t() is
    computed as the transpose of a row-major product, so W's gradient is contiguous (an optimizer
    step over a transposed gradient reads it with a stride)."""
    a, b = ctx.saved_tensors
    alpha, precision = ctx.alpha, ctx.precision
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:  # alpha·grad·bᵀ, or its transpose alpha·b·gradᵀ
        grad_a = mm(b, grad.mT, alpha, precision).mT if _stored_transposed(a) else mm(grad, b.mT, alpha, precision)
        grad_a = _reduce_to(grad_a, a)
    if ctx.needs_input_grad[1]:  # alpha·aᵀ·grad, or its transpose alpha·gradᵀ·a
        grad_b = mm(grad.mT, a, alpha, precision).mT if _stored_transposed(b) else mm(a.mT, grad, alpha, precision)
        grad_b = _reduce_to(grad_b, b)
    return grad_a, grad_b, None, None


mm.register_autograd(_backward, setup_context=_setup_context)


class Linear(torch.nn.Linear):
    """torch.nn.Linear whose float32 CUDA forward and backward run gemmtune's kernels:
    y = x·Wᵀ + bias (the "nt" layout: W is read transposed, not copied). Other dtypes and
    devices run torch.nn.Linear's own forward. Same parameters and state dict as nn.Linear."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype is not torch.float32 or not x.is_cuda or self.weight.dtype is not torch.float32:
            return super().forward(x)
        flat = x.reshape(-1, self.in_features)
        y = mm(flat, self.weight.t())
        if self.bias is not None:
            y = y.add_(self.bias)
        return y.reshape(*x.shape[:-1], self.out_features)
