"""JAX arrays: gemmtune.matmul as an XLA FFI custom call ("gemmtune_matmul", python/src/JaxFfi.cpp).
XLA runs it on JAX's own stream in the order of the program, eagerly and inside jax.jit, and
jax.vmap batches it. Its gradient (a custom VJP) runs the transposed products through gemmtune too.
JAX arrays are immutable and dense, so there is no out= and no transposed view to read: the result
is a new array (x.T under jit is XLA's own transpose)."""

from __future__ import annotations

import functools

_TARGET = "gemmtune_matmul"


class _Jax:
    name = "JAX"

    def __init__(self):
        import jax
        import jax.numpy as jnp
        import numpy as np

        from . import _gemmtune

        handler = _gemmtune.jax_handler()
        if handler is None:
            raise RuntimeError("this gemmtune was built without JAX support (XLA's FFI headers were not found at build "
                               "time): reinstall it where PyPI is reachable, or with "
                               "-Ccmake.define.GEMMTUNE_XLA_FFI_INCLUDE=$(python -c 'import jax.ffi; "
                               "print(jax.ffi.include_dir())')")
        jax.ffi.register_ffi_target(_TARGET, handler, platform="CUDA")
        self.jax, self.jnp, self.np = jax, jnp, np
        self.result_shape = _gemmtune.result_shape
        self.mm = _differentiable(self._call)

    def matmul(self, a, b, out, alpha, beta, precision):
        if out is not None:
            raise TypeError("out= takes PyTorch and CuPy tensors: JAX arrays are immutable, and gemmtune.matmul "
                            "returns a new one")
        if beta != 0:
            raise ValueError("beta scales out=, which JAX arrays do not have: add beta·c to the result instead")
        if not isinstance(b, self.jax.Array):
            raise TypeError("a is a JAX array and b is not: pass arrays of one framework")
        for name, x in (("a", a), ("b", b)):
            if x.dtype != self.jnp.float32:
                raise TypeError(f"{name} is {x.dtype}; gemmtune computes in float32 (use {name}.astype(jnp.float32))")
        self.result_shape(tuple(a.shape), tuple(b.shape))  # ValueError naming the argument
        if precision not in ("strict", "faithful"):
            raise ValueError(f'precision must be "strict" or "faithful", not "{precision}"')
        for name, x in (("a", a), ("b", b)):
            self.check_device(name, x)
        return self.mm(a, b, float(alpha), precision)

    def check_device(self, name, x):
        devices = _devices(x)
        if devices is not None and any(d.platform != "gpu" for d in devices):
            platform = next(d.platform for d in devices if d.platform != "gpu")
            raise TypeError(f"{name} is on {platform}; gemmtune runs on CUDA arrays "
                            f"(use jax.device_put({name}, jax.devices('gpu')[0]))")

    def _call(self, a, b, alpha, precision):
        shape = tuple(self.result_shape(tuple(a.shape), tuple(b.shape)))
        if len(shape) == 3:  # a 2-D operand as a batch of one: under vmap its batch axis then stays apart
            a, b = (x[None] if x.ndim == 2 else x for x in (a, b))
        call = self.jax.ffi.ffi_call(_TARGET, self.jax.ShapeDtypeStruct(shape, self.jnp.float32),
                                     vmap_method="broadcast_all")
        return call(a, b, alpha=self.np.float32(alpha), precision=precision)


def _devices(x):
    """The devices a concrete array lives on; None for a tracer (inside jit, vmap or grad)."""
    try:
        return x.devices()
    except Exception:  # a tracer has no devices: where it runs is decided when compiled
        return None


def _differentiable(call):
    """call(a, b, alpha, precision) with a custom VJP: the gradients alpha·g·bᵀ and alpha·aᵀ·g
    through it again (so a gradient of a gradient works), summed over the batches a 2-D operand (or
    a batch of one) was used for. Forward-mode (jax.jvp, jax.hessian) is not defined."""
    import jax
    import jax.numpy as jnp

    @functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
    def mm(a, b, alpha, precision):
        return call(a, b, alpha, precision)

    def forward(a, b, alpha, precision):  # through mm too: differentiating a gradient traces it
        return mm(a, b, alpha, precision), (a, b)

    def backward(alpha, precision, saved, g):  # through mm: the gradients are differentiable again
        a, b = saved
        grad_a = mm(g, jnp.swapaxes(b, -1, -2), alpha, precision)
        grad_b = mm(jnp.swapaxes(a, -1, -2), g, alpha, precision)
        return _reduce_to(grad_a, a), _reduce_to(grad_b, b)

    mm.defvjp(forward, backward)
    return mm


def _reduce_to(grad, like):
    if like.ndim == 2 and grad.ndim == 3:
        return grad.sum(0)
    if like.ndim == 3 and like.shape[0] == 1 and grad.shape[0] != 1:
        return grad.sum(0, keepdims=True)
    return grad
