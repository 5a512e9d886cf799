// A cuBLAS row as the tuner writes it (tuner/engine/RowRecorder::cublasRow): family "cublas",
// instance "cublas_<layout>", no parameters, no cubin, keyed for the present build.
#pragma once

#include <string>

#include "PresentEnvironment.hpp"
#include "db_test_support.hpp"

namespace gemmtune::test {

inline db::ResultRecord cublasResult(const std::string& layout, long long m, long long n, long long k, double gflops,
                                     const GpuSpec& gpu = testGpu(), long long batch = 1) {
  db::ResultRecord r;
  r.family = "cublas";
  r.key.instance = "cublas_" + layout;
  r.params = "{}";
  r.key.gpuFingerprint = db::gpuFingerprint(gpu);
  r.key.driverVersion = kDriver;
  r.key.nvrtcVersion = *serving::presentEnvironment().nvrtcVersion;
  r.key.arch = gpu.arch();
  r.key.compileOptions = "CUBLAS_DEFAULT_MATH";
  r.key.sourceHash = "cublas 130100";
  r.key.problem = {m, n, k, layout, "any", batch};
  r.gflops = gflops;
  r.medianMs = batch * 2.0 * m * n * k / (gflops * 1e6);
  r.minMs = *r.medianMs * 0.98;
  r.spread = 0.01;
  r.reps = 20;
  r.smClockMHz = 1980;
  return r;
}

}  // namespace gemmtune::test
