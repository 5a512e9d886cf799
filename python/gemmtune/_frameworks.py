"""What gemmtune needs of a framework's CUDA float32 tensor: its data pointer, shape and strides in
elements, its device, the framework's current stream there, and a new result tensor. One small
adapter per framework, chosen by the tensor's type and made on first use (importing a framework
is slow, and none of them is required)."""

from __future__ import annotations


class _Torch:
    name = "PyTorch"

    def __init__(self):
        import torch

        from . import _gemmtune

        self.torch, self.Tensor, self.float32 = torch, torch.Tensor, torch.float32
        # Bound once: matmul's own cost per call is mostly attribute lookups (bench/python).
        self.gemm, self.result_shape = _gemmtune.gemm, _gemmtune.result_shape
        self.grad_enabled, self.compiling = torch.is_grad_enabled, torch.compiler.is_compiling
        self.current_device = torch._C._cuda_getDevice
        # The current stream's handle as an int without making a Stream object (what torch.compile's
        # generated code uses): the caller's stream order is kept without synchronising.
        self.raw_stream = torch._C._cuda_getCurrentRawStream
        from .torch import mm  # registers the custom op

        self.op = mm

    def matmul(self, a, b, out, alpha, beta, precision):
        """gemmtune.matmul for PyTorch tensors: autograd and torch.compile through the custom op,
        everything else straight to the library. run_direct's steps written out with as few
        lookups as possible: at 64 cubed a call's Python cost is comparable to the kernel's."""
        Tensor = self.Tensor
        if not isinstance(b, Tensor):
            raise TypeError("a is a PyTorch tensor and b is not: pass tensors of one framework")
        if self.compiling() or ((a.requires_grad or b.requires_grad) and self.grad_enabled()):
            if out is not None or beta != 0:
                raise RuntimeError("gemmtune.matmul with out= or beta does not support autograd or torch.compile; "
                                   "leave them out (the result is a new tensor) or run under torch.no_grad()")
            return self.op(a, b, alpha, precision)
        va, vb = self.view("a", a), self.view("b", b)
        device = a.get_device()
        if b.get_device() != device:
            raise ValueError(f"a is on cuda:{device} and b on cuda:{b.get_device()}: put both on one device")
        if out is None:
            if beta != 0:
                raise ValueError("beta is not 0 but there is no out to scale: pass out=")
            out = a.new_empty(self.result_shape(va[1], vb[1]))
        elif not isinstance(out, Tensor):
            raise TypeError("out must be a PyTorch tensor like a and b")
        vc = self.view("out", out)
        if out.get_device() != device:
            raise ValueError(f"out is on cuda:{out.get_device()} and a on cuda:{device}: put them on one device")
        if self.current_device() == device:
            todo = self.gemm(precision, self.raw_stream(device), va, vb, vc, alpha, beta)
        else:
            with self.torch.cuda.device(device):
                todo = self.gemm(precision, self.raw_stream(device), va, vb, vc, alpha, beta)
        if todo:  # K == 0: the product is empty, only beta·out remains
            out.mul_(beta) if beta != 0 else out.zero_()
        return out

    def op_matmul(self, a, b, alpha, precision):
        """The custom op's implementation: autograd and compiled graphs hand it tensors of any
        strides (an expanded gradient has strides 0), so what the library cannot read is copied."""
        a = a if readable(a) else a.contiguous()
        b = b if readable(b) else b.contiguous()
        return run_direct(self, a, b, None, alpha, 0.0, precision)

    def view(self, name, t):
        if t.dtype is not self.float32:
            raise TypeError(f"{name} is {t.dtype}; gemmtune computes in float32 (use {name}.float())")
        if not t.is_cuda:
            raise TypeError(f"{name} is on {t.device}; gemmtune runs on CUDA tensors (use {name}.cuda())")
        return (t.data_ptr(), t.shape, t.stride())

    def device(self, t):
        return t.get_device()

    def stream(self, device):
        return self.raw_stream(device)

    def on_device(self, device):
        return self.torch.cuda.device(device)

    def empty(self, shape, like):
        return like.new_empty(shape)

    def scale(self, out, beta):
        if beta == 0:
            out.zero_()
        else:
            out.mul_(beta)


def readable(t) -> bool:
    """Whether the library reads t's matrices as they are: rows or columns contiguous."""
    if t.dim() < 2:
        return False
    rows, cols = t.shape[-2], t.shape[-1]
    row_stride, col_stride = t.stride()[-2:]
    if (col_stride == 1 or cols == 1) and (rows == 1 or row_stride >= cols):
        return True
    return (row_stride == 1 or rows == 1) and (cols == 1 or col_stride >= rows)


class _CuPy:
    name = "CuPy"

    def __init__(self):
        import cupy

        from . import _gemmtune

        self.cupy = cupy
        self.gemm, self.result_shape = _gemmtune.gemm, _gemmtune.result_shape
        self.float32 = cupy.dtype("float32")

    def matmul(self, a, b, out, alpha, beta, precision):
        if adapter_for("b", b) is not self:
            raise TypeError("a is a CuPy array and b is not: pass arrays of one framework")
        return run_direct(self, a, b, out, alpha, beta, precision)

    def view(self, name, t):
        if t.dtype != self.float32:
            raise TypeError(f"{name} is {t.dtype}; gemmtune computes in float32 (use {name}.astype(cupy.float32))")
        strides = []
        for s in t.strides:
            if s % 4:
                raise ValueError(f"{name}'s strides {t.strides} (bytes) are not whole float32 elements")
            strides.append(s // 4)
        return (t.data.ptr, t.shape, strides)

    def device(self, t):
        return t.device.id

    def stream(self, device):
        return self.cupy.cuda.get_current_stream(device).ptr

    def current_device(self):
        return self.cupy.cuda.runtime.getDevice()

    def on_device(self, device):
        return self.cupy.cuda.Device(device)

    def empty(self, shape, like):
        with self.cupy.cuda.Device(like.device.id):
            return self.cupy.empty(shape, dtype=self.float32)

    def scale(self, out, beta):
        if beta == 0:
            out.fill(0)
        else:
            out *= beta


def run_direct(fw, a, b, out, alpha, beta, precision):
    """The launch for the framework adapter `fw`: the tensors checked, out made or checked, the
    library called on the framework's current stream of the tensors' device."""
    va, vb = fw.view("a", a), fw.view("b", b)
    device = fw.device(a)
    if fw.device(b) != device:
        raise ValueError(f"a is on cuda:{device} and b on cuda:{fw.device(b)}: put both on one device")
    if out is None:
        if beta != 0:
            raise ValueError("beta is not 0 but there is no out to scale: pass out=")
        out = fw.empty(fw.result_shape(va[1], vb[1]), a)
    elif adapter_for("out", out) is not fw:
        raise TypeError(f"out must be a {fw.name} tensor like a and b")
    elif fw.device(out) != device:
        raise ValueError(f"out is on cuda:{fw.device(out)} and a on cuda:{device}: put them on one device")
    vc = fw.view("out", out)
    if fw.current_device() == device:
        todo = fw.gemm(precision, fw.stream(device), va, vb, vc, alpha, beta)
    else:
        with fw.on_device(device):
            todo = fw.gemm(precision, fw.stream(device), va, vb, vc, alpha, beta)
    if todo == "scale":  # K == 0: the product is empty, only beta·out remains
        fw.scale(out, beta)
    return out


_MAKERS = {"torch": _Torch, "cupy": _CuPy}
_ADAPTERS: dict[type, object] = {}


def adapter_for(name, value):
    """The adapter for `value`'s framework, or TypeError naming the argument."""
    kind = type(value)
    adapter = _ADAPTERS.get(kind)
    if adapter is not None:
        return adapter
    root = kind.__module__.split(".")[0]
    if root in _MAKERS:
        adapter = _ADAPTERS[kind] = _MAKERS[root]()
        return adapter
    if root in ("jax", "jaxlib"):
        raise TypeError(f"{name} is a JAX array; gemmtune.matmul takes PyTorch and CuPy CUDA tensors "
                        "(convert without a copy: torch.from_dlpack(x))")
    raise TypeError(f"{name} must be a CUDA float32 tensor of PyTorch or CuPy, not {kind.__module__}.{kind.__qualname__}")
