// gemmtune kernel header: the cp.async copies (sm_80+) that the pipelined templates (thin.cu,
// warppipe.cu) feed shared memory with: no staging registers, and a copy whose source size is
// short reads only that much and fills the rest with zeros, so guarded forms need no branches.
// Self-contained (no includes) for NVRTC.
#pragma once

// 4 bytes; `on` false reads nothing and stores a zero (an element outside the operand).
__device__ __forceinline__ void cpAsync4(float* dst, const float* src, bool on) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(on ? 4 : 0));
}

// 16 bytes, both addresses 16-byte aligned.
__device__ __forceinline__ void cpAsync16(float* dst, const float* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
}

// The first `bytes` (0..16) of 16, the rest zeros; both addresses 16-byte aligned.
__device__ __forceinline__ void cpAsync16Part(float* dst, const float* src, int bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes));
}

// Closes this thread's group of copies issued since the last commit.
__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most PENDING of this thread's committed groups are still in flight.
template <int PENDING>
__device__ __forceinline__ void cpAsyncWait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING)); }

// Waits for every copy of this thread (none may outlive the block).
__device__ __forceinline__ void cpAsyncWaitAll() { asm volatile("cp.async.wait_all;\n" ::); }
