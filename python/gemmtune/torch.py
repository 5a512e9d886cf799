"""PyTorch integration: gemmtune's GEMM as a torch.library custom op (torch.ops.gemmtune.mm), so
that it works with autograd (the backward runs the transposed GEMMs through gemmtune too) and
inside torch.compile graphs, and Linear, a drop-in for torch.nn.Linear in float32.

gemmtune.matmul takes this path by itself when a tensor needs gradients or torch.compile traces it:
the op while compiling, a torch.autograd.Function in eager mode (a custom op's eager dispatch
costs tens of microseconds per call).
"""

from __future__ import annotations

import torch

from ._frameworks import adapter_for
from ._query import best

__all__ = ["Linear", "matmul_with_grad", "mm"]


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


def _stored_transposed(t):
    """Whether t's matrices have their columns contiguous (t is a view like W.t())."""
    return t.stride(-2) == 1 and t.stride(-1) != 1


def _reduce_to(grad, like):
    """Sums a batched gradient over the batches an operand was broadcast across."""
    if like.dim() == 2 and grad.dim() == 3:
        return grad.sum(0)
    if like.dim() == 3 and like.shape[0] == 1 and grad.shape[0] != 1:
        return grad.sum(0, keepdim=True)
    return grad


def _gradients(a, b, grad, alpha, precision, need_a, need_b, product):
    """The gradients of alpha·a@b, each in its input's own layout as PyTorch's mm does: the
    gradient of W.t() is computed as the transpose of a row-major product, so W's gradient is
    contiguous (an optimizer step over a transposed gradient reads it with a stride). `product`
    runs one GEMM: the op (differentiable again) or the direct call."""
    grad_a = grad_b = None
    if need_a:  # alpha·grad·bᵀ, or its transpose alpha·b·gradᵀ
        grad_a = (product(b, grad.mT, alpha, precision).mT if _stored_transposed(a)
                  else product(grad, b.mT, alpha, precision))
        grad_a = _reduce_to(grad_a, a)
    if need_b:  # alpha·aᵀ·grad, or its transpose alpha·gradᵀ·a
        grad_b = (product(grad.mT, a, alpha, precision).mT if _stored_transposed(b)
                  else product(a.mT, grad, alpha, precision))
        grad_b = _reduce_to(grad_b, b)
    return grad_a, grad_b


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad_a, grad_b = _gradients(a, b, grad, ctx.alpha, ctx.precision, ctx.needs_input_grad[0],
                                ctx.needs_input_grad[1], mm)
    return grad_a, grad_b, None, None


mm.register_autograd(_backward, setup_context=_setup_context)


def _direct(a, b, alpha, precision):
    return adapter_for("a", a).op_matmul(a, b, alpha, precision)


def _backward_product():
    """The GEMM a backward runs: differentiable again under create_graph=True (a gradient
    penalty differentiates the gradients), else the direct call."""
    return matmul_with_grad if torch.is_grad_enabled() else _direct


class _EagerMatmul(torch.autograd.Function):
    """The op's autograd outside torch.compile. A custom op's dispatch costs tens of microseconds
    per call in eager mode: measured on an H100, an FP32 MLP of width 1024 trained at 0.58× the
    speed of nn.Linear through the op, its step bound by the host. An autograd.Function costs a
    fraction of that; torch.compile traces the op instead."""

    @staticmethod
    def forward(ctx, a, b, alpha, precision):
        ctx.save_for_backward(a, b)
        ctx.alpha, ctx.precision = alpha, precision
        return _direct(a, b, alpha, precision)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a, grad_b = _gradients(a, b, grad, ctx.alpha, ctx.precision, ctx.needs_input_grad[0],
                                    ctx.needs_input_grad[1], _backward_product())
        return grad_a, grad_b, None, None


def matmul_with_grad(a, b, alpha=1.0, precision="strict"):
    """alpha·a@b for autograd: the op under torch.compile, else the eager Function; without
    gradients to compute, the direct call. Views the library cannot read are copied."""
    if torch.compiler.is_compiling():
        return mm(a, b, alpha, precision)
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        return _EagerMatmul.apply(a, b, alpha, precision)
    return _direct(a, b, alpha, precision)


class _LinearFunction(torch.autograd.Function):
    """y = x·Wᵀ + bias with its three gradients in one autograd node (the host's cost per layer is
    what bounds a small MLP's step): x's and Wᵀ's as the op's (_gradients: grad·W, nn, and gradᵀ·x,
    tn, contiguous like W), the bias's the column sums of grad."""

    @staticmethod
    def forward(ctx, x, weight, bias, precision):
        ctx.save_for_backward(x, weight)
        ctx.has_bias, ctx.precision = bias is not None, precision
        y = _direct(x, weight.t(), 1.0, precision)
        return y.add_(bias) if bias is not None else y

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        grad_x, grad_wt = _gradients(x, weight.t(), grad, 1.0, ctx.precision, ctx.needs_input_grad[0],
                                     ctx.needs_input_grad[1], _backward_product())
        grad_b = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_wt.t() if grad_wt is not None else None, grad_b, None


_CUBLAS_FORWARD: dict = {}


def _cublas_runs_forward(rows, layer) -> bool:
    """Whether gemmtune's choice for this layer's forward GEMM (rows x out x in, "nt") is cuBLAS
    itself: then the layer is nn.Linear's own, forward and backward (its cuBLAS call also adds
    the bias: one pass over y fewer). Only while PyTorch computes float32 matmuls in full FP32
    (no TF32, no autocast), so that the layer's arithmetic never depends on what was tuned. One
    lookup per shape and device, kept for the process."""
    if torch.get_float32_matmul_precision() != "highest" or torch.is_autocast_enabled("cuda"):
        return False
    device = layer.weight.get_device()
    key = (device, rows, layer.out_features, layer.in_features, layer.precision)
    runs = _CUBLAS_FORWARD.get(key)
    if runs is None:
        choice = best(rows, layer.out_features, layer.in_features, "nt", device=device, precision=layer.precision)
        runs = _CUBLAS_FORWARD[key] = choice.instance.startswith("cublas")
    return runs


class Linear(torch.nn.Linear):
    """torch.nn.Linear whose float32 CUDA forward and backward run gemmtune's choice: y = x·Wᵀ +
    bias (the "nt" layout: W is read transposed, not copied). Where gemmtune's choice for the
    forward GEMM is cuBLAS itself (and PyTorch computes float32 matmuls in full FP32), for an
    empty input, and for other dtypes and devices, the layer is nn.Linear's own. Same parameters
    and state dict. precision="faithful" lets it run tensor-core kernels that were verified at
    FP32 accuracy (gemmtune.matmul's precision)."""

    precision = "strict"  # for layers pickled whole before the argument existed

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, *, precision="strict"):
        super().__init__(in_features, out_features, bias, device, dtype)
        if precision not in ("strict", "faithful"):
            raise ValueError(f'precision must be "strict" or "faithful", not "{precision}"')
        self.precision = precision

    def extra_repr(self) -> str:
        return super().extra_repr() + (f", precision={self.precision}" if self.precision != "strict" else "")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (x.dtype is not torch.float32 or not x.is_cuda or self.weight.dtype is not torch.float32
                or x.numel() == 0 or self.weight.numel() == 0):
            return super().forward(x)
        flat = x.reshape(-1, self.in_features)
        if torch.compiler.is_compiling():
            y = mm(flat, self.weight.t(), 1.0, self.precision)
            y = y + self.bias if self.bias is not None else y
        elif _cublas_runs_forward(flat.shape[0], self):
            return super().forward(x)
        else:
            y = _LinearFunction.apply(flat, self.weight, self.bias, self.precision)
        return y.reshape(*x.shape[:-1], self.out_features)
