// JAX's way in: an XLA FFI handler (the C ABI XLA calls custom operations through) that runs
// gemmtune.matmul on JAX arrays on JAX's own stream, inside jit and outside it. The Python half
// (gemmtune/_jax.py) registers it with jax.ffi.register_ffi_target as "gemmtune_matmul".
#pragma once

namespace gemmtune::python {

// The handler (an XLA_FFI_Handler*), or null when this build had no XLA FFI headers
// (python/CMakeLists.txt: the pinned jaxlib wheel's, or GEMMTUNE_XLA_FFI_INCLUDE).
void* jaxMatmulHandler();

}  // namespace gemmtune::python
