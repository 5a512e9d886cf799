// PrecisionClass: the arithmetic a kernel family's inner loop runs on, which decides who may be
// served its kernels and the peak its rows are held to (serving/SpeedBound).
#pragma once

namespace gemmtune {

// strict: FP32 multiply-adds on the SIMT pipes, as cuBLAS SGEMM in its default math (every family
// but tf32x3; the default everywhere). faithful: FP32 products emulated on tensor cores (3xTF32) at
// about FP32 accuracy (every row verified as any other) — tuned with `tune --precision faithful`, served only where the caller
// allows it (Library::Options::precision, `query --precision`). Ordered: a caller allowing a class
// allows the ones before it.
enum class PrecisionClass { strict, faithful };

}  // namespace gemmtune
