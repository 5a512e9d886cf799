#include "DropinPolicy.hpp"

#include <fmt/format.h>

#include <cctype>

namespace gemmtune::dropin {

Policy policyFrom(const char* env, std::string& warning) {
  if (!env || !*env) return Policy::measured;
  std::string value(env);
  for (auto& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (value == "measured") return Policy::measured;
  if (value == "always") return Policy::always;
  if (value == "off") return Policy::off;
  warning = fmt::format("GEMMTUNE_CUBLAS={} is not one of measured, always, off: using measured", env);
  return Policy::measured;
}

PrecisionClass precisionFrom(const char* env, std::string& warning) {
  if (!env || !*env) return PrecisionClass::strict;
  if (auto named = precisionNamed(env)) return *named;
  warning = fmt::format("GEMMTUNE_PRECISION={} is not one of strict, faithful: using strict", env);
  return PrecisionClass::strict;
}

std::string pedanticRefusal(PrecisionClass served, cublasMath_t mathMode, bool pedanticCompute) {
  const bool pedantic = pedanticCompute || (static_cast<int>(mathMode) & 0xf) == CUBLAS_PEDANTIC_MATH;
  if (served != PrecisionClass::faithful || !pedantic) return {};
  return "pedantic math asks for FP32 multiply-adds, and GEMMTUNE_PRECISION=faithful would run tensor-core kernels";
}

const char* toString(Policy policy) {
  switch (policy) {
    case Policy::measured: return "measured";
    case Policy::always: return "always";
    case Policy::off: return "off";
  }
  return "measured";
}

bool realOp(cublasOperation_t op, bool& transposed) {
  transposed = op == CUBLAS_OP_T || op == CUBLAS_OP_C;
  return op == CUBLAS_OP_N || transposed;
}

std::string handleRefusal(cublasPointerMode_t pointerMode, cublasMath_t mathMode) {
  // Device-resident scalars would need a synchronising read, or kernels that take pointers.
  if (pointerMode != CUBLAS_POINTER_MODE_HOST) return "alpha and beta in device memory (CUBLAS_POINTER_MODE_DEVICE)";
  // The low bits name the mode; the flags above them (e.g. disallowing reduced-precision
  // reductions) ask for no less precision than FP32 FMA gives.
  const int mode = static_cast<int>(mathMode) & 0xf;
  if (mode == CUBLAS_DEFAULT_MATH || mode == CUBLAS_PEDANTIC_MATH) return {};
  return fmt::format("the handle's math mode ({}) allows tensor-core precision", static_cast<int>(mathMode));
}

std::string exRefusal(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute,
                      cublasGemmAlgo_t algo, cublasPointerMode_t pointerMode, cublasMath_t mathMode) {
  if (algo < CUBLAS_GEMM_DEFAULT || algo > CUBLAS_GEMM_ALGO23)
    return fmt::format("algo {} is not CUBLAS_GEMM_DEFAULT or ALGO0..23", static_cast<int>(algo));
  if (a != CUDA_R_32F || b != CUDA_R_32F || c != CUDA_R_32F)
    return fmt::format("data types {}/{}/{} are not all CUDA_R_32F", static_cast<int>(a), static_cast<int>(b),
                       static_cast<int>(c));
  if (compute == CUBLAS_COMPUTE_32F_PEDANTIC)
    return pointerMode == CUBLAS_POINTER_MODE_HOST ? std::string() : handleRefusal(pointerMode, mathMode);
  if (compute != CUBLAS_COMPUTE_32F) return fmt::format("compute type {} is not FP32", static_cast<int>(compute));
  return handleRefusal(pointerMode, mathMode);
}

std::string scalarRefusal(float alpha) {
  return alpha == 0.0f ? "alpha is 0 (A and B are not read)" : std::string();
}

}  // namespace gemmtune::dropin
