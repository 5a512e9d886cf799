"""What gemmtune needs of a framework's CUDA float32 tensor: its data pointer, shape and strides in
elements, its device, the framework's current stream there, and a new result tensor. One small
adapter per framework, chosen by the tensor's type and made on first use (importing a framework
is slow, and none of them is required)."""

from __future__ import annotations

import functools


class _Torch:
    name = "PyTorch"

    def __init__(self):
        import torch

        from . import _gemmtune

        self.torch, self.Tensor, self.float32 = torch, torch.Tensor, torch.float32
        # Bound once: matmul's own cost per call is mostly attribute lookups (bench/python).
        self.gemm, self.result_shape = _gemmtune.gemm, _gemmtune.result_shape
        self.grad_enabled, self.compiling = torch.is_grad_enabled, torch.compiler.is_compiling
        self.increment_version = torch.autograd.graph.increment_version
        self.current_device = torch._C._cuda_getDevice
        # The current stream's handle as an int without making a Stream object (what torch.compile's
        # generated code uses): the caller's stream order is kept without synchronising.
        self.raw_stream = torch._C._cuda_getCurrentRawStream
        from .torch import matmul_with_grad  # registers the custom op

        self.with_grad = matmul_with_grad

    def matmul(self, a, b, out, alpha, beta, precision):
        """gemmtune.matmul for PyTorch tensors: autograd and torch.compile through the custom op,
        everything else straight to the library (at 64 cubed a call's Python cost is comparable to
        the kernel's: direct() is run_direct written out with few lookups)."""
        if not isinstance(b, self.Tensor):
            raise TypeError("a is a PyTorch tensor and b is not: pass tensors of one framework")
        if self.compiling() or ((a.requires_grad or b.requires_grad) and self.grad_enabled()):
            if out is not None or beta != 0:
                raise RuntimeError("gemmtune.matmul with out= or beta does not support autograd or torch.compile; "
                                   "leave them out (the result is a new tensor) or run under torch.no_grad()")
            return self.with_grad(a, b, alpha, precision)
        return self.direct(a, b, out, alpha, beta, precision)

    def direct(self, a, b, out, alpha, beta, precision):
        """run_direct's steps for PyTorch, written out with as few lookups as possible."""
        f32 = self.float32
        if a.dtype is not f32 or not a.is_cuda or b.dtype is not f32 or not b.is_cuda:
            self.view("a", a), self.view("b", b)  # raises, naming the argument
        va, vb = (a.data_ptr(), a.shape, a.stride()), (b.data_ptr(), b.shape, b.stride())
        device = a.get_device()
        if b.get_device() != device:
            raise ValueError(f"a is on cuda:{device} and b on cuda:{b.get_device()}: put both on one device")
        if out is None:
            if beta != 0:
                raise ValueError("beta is not 0 but there is no out to scale: pass out=")
            out = a.new_empty(self.result_shape(va[1], vb[1]))
        else:
            if not isinstance(out, self.Tensor):
                raise TypeError("out must be a PyTorch tensor like a and b")
            if out.requires_grad and self.grad_enabled():
                raise RuntimeError("out requires grad: out= does not support autograd; leave out out, or run under "
                                   "torch.no_grad()")
            self.increment_version(out)  # autograd then refuses a backward that saved out's old values
        if out.dtype is not f32 or not out.is_cuda:
            self.view("out", out)
        vc = (out.data_ptr(), out.shape, out.stride())
        if out.get_device() != device:
            raise ValueError(f"out is on cuda:{out.get_device()} and a on cuda:{device}: put them on one device")
        if self.current_device() == device:
            todo = self.gemm(precision, device, self.raw_stream(device), va, vb, vc, alpha, beta)
        else:
            with self.torch.cuda.device(device):
                todo = self.gemm(precision, device, self.raw_stream(device), va, vb, vc, alpha, beta)
        if todo:
            self.finish(todo, a, b, out, alpha, beta)
        return out

    def finish(self, todo, a, b, out, alpha, beta):
        """What the library left to the caller: out = beta·out (K or alpha is 0), or the whole call
        through PyTorch's cuBLAS when the library declined it (a CUDA graph capture of a shape not
        prepared on the capturing stream; out is untouched then)."""
        if todo == "scale":
            out.mul_(beta) if beta != 0 else out.zero_()
            return
        chosen = self.torch.get_float32_matmul_precision()
        self.torch.set_float32_matmul_precision("highest")  # full FP32, whatever the program allows elsewhere
        try:
            if out.dim() == 2:
                out.addmm_(a, b, beta=beta, alpha=alpha)
            else:
                batch, rows, cols = out.shape
                out.baddbmm_(a.expand(batch, rows, a.shape[-1]), b.expand(batch, b.shape[-2], cols), beta=beta,
                             alpha=alpha)
        finally:
            self.torch.set_float32_matmul_precision(chosen)

    def op_matmul(self, a, b, alpha, precision):
        """The custom op's implementation: autograd and compiled graphs hand it tensors of any
        strides (an expanded gradient has strides 0), so what the library cannot read is copied."""
        a = a if readable(a) else a.contiguous()
        b = b if readable(b) else b.contiguous()
        return self.direct(a, b, None, alpha, 0.0, precision)

    def view(self, name, t):
        if t.dtype is not self.float32:
            raise TypeError(f"{name} is {t.dtype}; gemmtune computes in float32 (use {name}.float())")
        if not t.is_cuda:
            raise TypeError(f"{name} is on {t.device}; gemmtune runs on CUDA tensors (use {name}.cuda())")
        return (t.data_ptr(), t.shape, t.stride())


def readable(t) -> bool:
    """Whether the library reads t's matrices as they are: rows or columns contiguous."""
    if t.dim() < 2:
        return False
    *_, rows, cols = t.shape
    *_, row_stride, col_stride = t.stride()
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

    def finish(self, todo, a, b, out, alpha, beta):
        """What the library left to the caller: out = beta·out (K or alpha is 0); a declined call
        (a CUDA graph capture of a shape not prepared on the capturing stream) is an error."""
        if todo == "declined":
            raise RuntimeError("gemmtune declined the call inside a CUDA graph capture: a shape is captured only "
                               "after it ran once on the capturing stream, and never when its kernel splits K; "
                               "call it outside the capture (or cupy.matmul inside it)")
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
        todo = fw.gemm(precision, device, fw.stream(device), va, vb, vc, alpha, beta)
    else:
        with fw.on_device(device):
            todo = fw.gemm(precision, device, fw.stream(device), va, vb, vc, alpha, beta)
    if todo:
        fw.finish(todo, a, b, out, alpha, beta)
    return out


@functools.cache
def _jax_adapter():
    """One adapter for every JAX type (arrays and the tracers of jit, vmap and grad): it registers
    the FFI target once."""
    from ._jax import _Jax

    return _Jax()


_MAKERS = {"torch": _Torch, "cupy": _CuPy, "jax": _jax_adapter, "jaxlib": _jax_adapter}
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
    raise TypeError(f"{name} must be a CUDA float32 array of PyTorch, CuPy or JAX, "
                    f"not {kind.__module__}.{kind.__qualname__}")
