// The cuBLAS drop-in on a GPU (label gpu; skipped without a driver): a program written against
// cuBLAS (dropin_cublas_program.cpp) run as it is, then with libgemmtune_cublas.so preloaded under
// each policy. Every case must give cuBLAS's own status and a result within its FP32 bound; under
// `always` the drop-in must have served the plain FP32 host-scalar calls (the built-in default
// kernel: no database), under `off` none.
// Run: ctest -L gpu -R DropinGpu --output-on-failure
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "CliRunner.hpp"
#include "CudaDriver.hpp"
#include "scratch_dir.hpp"

using namespace gemmtune;

namespace {

// The program's `case NAME status S` parts, one per line: what must not change under the drop-in.
std::string statuses(const std::string& out) {
  std::istringstream in(out);
  std::string line, kept;
  while (std::getline(in, line))
    if (line.rfind("case ", 0) == 0) kept += line.substr(0, line.find(" err/bound")) + "\n";
  return kept;
}

long long served(const std::string& err) {
  std::smatch m;
  return std::regex_search(err, m, std::regex(R"((\d+) served by gemmtune)")) ? std::stoll(m[1]) : -1;
}

}  // namespace

TEST(DropinGpu, EveryCaseGivesCublasStatusAndAResultWithinItsBoundUnderEveryPolicy) {
  if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
  test::ScratchDir dir;
  const std::vector<std::string> store = {"GEMMTUNE_DB=" + (dir / "tune.db").string(), "GEMMTUNE_SYSTEM_DB="};
  const test::CliOutput plain = test::runCli({}, store);
  ASSERT_EQ(plain.exitCode, 0) << plain.out << plain.err;
  ASSERT_GT(statuses(plain.out).size(), 0u);
  for (const std::string policy : {"always", "measured", "off"}) {
    auto env = store;
    env.push_back("LD_PRELOAD=" GEMMTUNE_DROPIN);
    env.push_back("GEMMTUNE_CUBLAS=" + policy);
    const test::CliOutput shim = test::runCli({}, env);
    ASSERT_EQ(shim.exitCode, 0) << policy << "\n" << shim.out << shim.err;
    EXPECT_EQ(statuses(shim.out), statuses(plain.out)) << policy;
    // 6 entry points x 4 op pairs with host scalars, 4 threads x 20 calls, and beta 0 over NaN.
    if (policy == "always") {
      EXPECT_GE(served(shim.err), 105) << shim.err;
    } else {
      EXPECT_EQ(served(shim.err), 0) << shim.err;  // no database: no measured win
    }
  }
}
