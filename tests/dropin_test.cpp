// The cuBLAS drop-in without a GPU: its policy and handle checks, record mode's file, and a program
// written against cuBLAS (dropin_client.cpp) linked to libgemmtune_cublas.so ahead of a stand-in
// cuBLAS (dropin_fake_cublas.cpp): every call reaches the stand-in unchanged, with its status,
// whatever the policy; record mode writes what `tune --shapes` reads; the exit line says what
// happened. The GPU side (served calls against the real cuBLAS) is dropin_gpu_test.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "CallRecorder.hpp"
#include "CliRunner.hpp"
#include "DropinPolicy.hpp"
#include "ShapeFile.hpp"
#include "scratch_dir.hpp"

using namespace gemmtune;
using namespace gemmtune::dropin;

namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// What the stand-in logs for every call dropin_client.cpp makes, in order: all of them, since
// without a GPU the drop-in computes none.
const char* kForwarded =
    "cublasSgemm_v2 m=4 n=5 k=6 ops=00 ld=4,6,4\n"
    "cublasSgemm_v2 m=4 n=5 k=6 ops=00 ld=4,6,4\n"
    "cublasSgemm_v2 m=4 n=5 k=6 ops=00 ld=4,6,4\n"
    "cublasSgemm_v2 m=-1 n=5 k=6 ops=00 ld=4,6,4\n"
    "cublasSgemmStridedBatched m=8 n=9 k=10 ops=10 ld=10,10,8 strides=80,90,72 batch=3\n"
    "cublasSgemmBatched m=8 n=9 k=10 ops=01 ld=8,9,8 batch=2\n"
    "cublasGemmEx m=4 n=5 k=6 ops=00 ld=4,6,4 type=0 compute=68 algo=-1\n"
    "cublasGemmEx m=4 n=5 k=6 ops=00 ld=4,6,4 type=2 compute=68 algo=-1\n"
    "cublasGemmStridedBatchedEx m=7 n=3 k=2 ops=01 ld=7,3,7 type=0 compute=69 batch=4\n"
    "cublasGemmBatchedEx m=7 n=3 k=2 ops=11 ld=2,3,7 type=0 compute=77 batch=5\n"
    "cublasSgemm_v2 m=4 n=5 k=6 ops=00 ld=4,6,4\n"
    "cublasSgemm_v2 m=4 n=5 k=6 ops=00 ld=4,6,4\n"
    "cublasSgemm_v2 m=4 n=5 k=6 ops=00 ld=4,6,4\n"
    "cublasSgemm_v2 m=4 n=5 k=6 ops=00 ld=3,6,4\n";

struct ClientRun {
  test::ScratchDir dir;
  test::CliOutput out;
  explicit ClientRun(std::vector<std::string> env) {
    env.push_back("GEMMTUNE_DB=" + (dir / "tune.db").string());
    env.push_back("GEMMTUNE_SYSTEM_DB=");
    env.push_back("XDG_DATA_HOME=" + dir.path().string());
    out = test::runCli({}, env);
  }
};

}  // namespace

TEST(DropinPolicy, ReadsTheEnvironmentAndWarnsOfAnUnknownValue) {
  std::string warning;
  EXPECT_EQ(policyFrom(nullptr, warning), Policy::measured);
  EXPECT_EQ(policyFrom("", warning), Policy::measured);
  EXPECT_EQ(policyFrom("ALWAYS", warning), Policy::always);
  EXPECT_EQ(policyFrom("off", warning), Policy::off);
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(policyFrom("sometimes", warning), Policy::measured);
  EXPECT_NE(warning.find("GEMMTUNE_CUBLAS=sometimes"), std::string::npos) << warning;
}

TEST(DropinPolicy, ServesPlainFp32WithHostScalarsOnly) {
  bool t = false;
  EXPECT_TRUE(realOp(CUBLAS_OP_N, t) && !t);
  EXPECT_TRUE(realOp(CUBLAS_OP_T, t) && t);
  EXPECT_TRUE(realOp(CUBLAS_OP_C, t) && t);  // the conjugate of real data is its transpose
  EXPECT_FALSE(realOp(static_cast<cublasOperation_t>(7), t));
  EXPECT_EQ(handleRefusal(CUBLAS_POINTER_MODE_HOST, CUBLAS_DEFAULT_MATH), "");
  EXPECT_EQ(handleRefusal(CUBLAS_POINTER_MODE_HOST, CUBLAS_PEDANTIC_MATH), "");
  EXPECT_EQ(handleRefusal(CUBLAS_POINTER_MODE_HOST,
                          static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
            "");
  EXPECT_NE(handleRefusal(CUBLAS_POINTER_MODE_HOST, CUBLAS_TF32_TENSOR_OP_MATH), "");
  // GEMMTUNE_PRECISION=faithful (tensor-core kernels allowed) leaves pedantic calls to cuBLAS.
  std::string warning;
  EXPECT_EQ(precisionFrom(nullptr, warning), PrecisionClass::strict);
  EXPECT_EQ(precisionFrom("Faithful", warning), PrecisionClass::faithful);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(precisionFrom("fast", warning), PrecisionClass::strict);
  EXPECT_EQ(warning, "GEMMTUNE_PRECISION=fast is not one of strict, faithful: using strict");
  EXPECT_EQ(pedanticRefusal(PrecisionClass::strict, CUBLAS_PEDANTIC_MATH, false), "");
  EXPECT_EQ(pedanticRefusal(PrecisionClass::faithful, CUBLAS_DEFAULT_MATH, false), "");
  EXPECT_NE(pedanticRefusal(PrecisionClass::faithful, CUBLAS_PEDANTIC_MATH, false), "");
  EXPECT_NE(pedanticRefusal(PrecisionClass::faithful, CUBLAS_DEFAULT_MATH, true), "");
  EXPECT_NE(handleRefusal(CUBLAS_POINTER_MODE_HOST, CUBLAS_TENSOR_OP_MATH), "");
  EXPECT_NE(handleRefusal(CUBLAS_POINTER_MODE_DEVICE, CUBLAS_DEFAULT_MATH), "");
  const auto f = CUDA_R_32F;
  const auto host = CUBLAS_POINTER_MODE_HOST;
  const auto algo = CUBLAS_GEMM_DEFAULT;
  EXPECT_EQ(exRefusal(f, f, f, CUBLAS_COMPUTE_32F, algo, host, CUBLAS_DEFAULT_MATH), "");
  EXPECT_EQ(exRefusal(f, f, f, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_ALGO23, host, CUBLAS_DEFAULT_MATH), "");
  EXPECT_NE(exRefusal(f, f, f, CUBLAS_COMPUTE_32F, algo, host, CUBLAS_TF32_TENSOR_OP_MATH), "");
  // Pedantic compute is FP32 whatever the math mode.
  EXPECT_EQ(exRefusal(f, f, f, CUBLAS_COMPUTE_32F_PEDANTIC, algo, host, CUBLAS_TF32_TENSOR_OP_MATH), "");
  EXPECT_NE(exRefusal(f, f, f, CUBLAS_COMPUTE_32F_PEDANTIC, algo, CUBLAS_POINTER_MODE_DEVICE, CUBLAS_DEFAULT_MATH), "");
  EXPECT_NE(exRefusal(f, f, f, CUBLAS_COMPUTE_32F_FAST_TF32, algo, host, CUBLAS_DEFAULT_MATH), "");
  EXPECT_NE(exRefusal(CUDA_R_16F, f, f, CUBLAS_COMPUTE_32F, algo, host, CUBLAS_DEFAULT_MATH), "");
  // Tensor-op algos and values cuBLAS does not define are cuBLAS's to judge.
  EXPECT_NE(exRefusal(f, f, f, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP, host, CUBLAS_DEFAULT_MATH), "");
  EXPECT_NE(exRefusal(f, f, f, CUBLAS_COMPUTE_32F, static_cast<cublasGemmAlgo_t>(-7), host, CUBLAS_DEFAULT_MATH), "");
  // alpha 0: BLAS reads neither A nor B.
  EXPECT_NE(scalarRefusal(0.0f), "");
  EXPECT_NE(scalarRefusal(-0.0f), "");
  EXPECT_EQ(scalarRefusal(1e-30f), "");
}

TEST(DropinRecorder, AppendsWhatWasCountedSinceTheLastFlushAsShapeFileLines) {
  test::ScratchDir dir;
  library::Warnings warnings;
  const auto file = dir / "calls.txt";
  CallRecorder recorder(file.string(), [](const GemmShape& s) { return s.M * 1e-3; }, warnings, std::chrono::hours(1));
  const GemmShape a{5, 4, 6, {}, 1}, b{9, 8, 10, {false, true}, 3};
  recorder.count(a), recorder.count(a), recorder.count(b);
  recorder.flush();
  recorder.flush();  // nothing new: nothing written
  recorder.count(a);
  recorder.flush();
  const std::string text = readFile(file);
  EXPECT_EQ(occurrences(text, "# FP32 GEMMs recorded"), 1) << text;
  EXPECT_NE(text.find("5x4x6 nn batch=1 0.01  # calls=2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("9x8x10 nt batch=3 0.009  # calls=1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("5x4x6 nn batch=1 0.005  # calls=1\n"), std::string::npos) << text;
  // tune --shapes reads it, adding the weights of one problem's lines.
  const auto problems = readShapeFile(file);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_DOUBLE_EQ(problems[0].weight, 0.015);
}

TEST(DropinRecorder, FlushesOnACallOnceThePeriodHasPassed) {
  test::ScratchDir dir;
  library::Warnings warnings;
  const auto file = dir / "calls.txt";
  CallRecorder recorder(file.string(), [](const GemmShape&) { return 1.0; }, warnings, std::chrono::milliseconds(50));
  recorder.count({4, 4, 4, {}, 1});
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  recorder.count({4, 4, 4, {}, 1});
  // Both calls are in the file, in one line or (on a loaded machine, where the first call came
  // after the period too: with a 1 ms period this test failed under a parallel build) in two.
  const std::string text = readFile(file);
  const bool together = text.find("4x4x4 nn batch=1 2  # calls=2") != std::string::npos;
  const bool apart = text.find("4x4x4 nn batch=1 1  # calls=1\n4x4x4 nn batch=1 1  # calls=1") != std::string::npos;
  EXPECT_TRUE(together || apart) << text;
}

TEST(DropinRecorder, AnUnwritableFileIsWarnedAboutOnceAndItsCountsKept) {
  test::ScratchDir dir;
  library::Warnings warnings;
  CallRecorder recorder((dir / "missing-dir" / "calls.txt").string(), [](const GemmShape&) { return 1.0; }, warnings,
                        std::chrono::hours(1));
  recorder.count({4, 4, 4, {}, 1});
  recorder.flush();
  recorder.flush();  // kept, tried again, not said again
  std::filesystem::create_directory(dir / "missing-dir");
  recorder.flush();
  EXPECT_NE(readFile(dir / "missing-dir" / "calls.txt").find("# calls=1"), std::string::npos);
}

// A child forked while counts are pending writes none of them (the parent does), and its own
// calls are not recorded: the file holds each call once (found in review: a child exiting
// normally appended the parent's counts again).
TEST(DropinRecorder, AForkedChildWritesNothing) {
  test::ScratchDir dir;
  library::Warnings warnings;
  const auto file = dir / "calls.txt";
  CallRecorder recorder(file.string(), [](const GemmShape&) { return 1.0; }, warnings, std::chrono::hours(1));
  recorder.count({4, 4, 4, {}, 1});
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    recorder.count({4, 4, 4, {}, 1});
    recorder.flush();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(std::filesystem::exists(file));
  recorder.flush();
  EXPECT_EQ(occurrences(readFile(file), "# calls="), 1) << readFile(file);
  EXPECT_NE(readFile(file).find("# calls=1\n"), std::string::npos) << readFile(file);
}

TEST(DropinClient, WithoutAGpuEveryCallReachesCublasUnchangedWithItsStatus) {
  ClientRun run({});
  ASSERT_EQ(run.out.exitCode, 0) << run.out.err;
  EXPECT_NE(run.out.out.find(kForwarded), std::string::npos) << run.out.out;
  EXPECT_NE(run.out.out.find("status sgemm-negative-m 7\n"), std::string::npos) << run.out.out;
  EXPECT_EQ(occurrences(run.out.out, " 0\n"), 13) << run.out.out;  // every other call succeeded (the stand-in)
  EXPECT_EQ(occurrences(run.out.err, "such calls go to cuBLAS"), 1) << run.out.err;  // said once
  // The half-precision call, the malformed ones (m < 0, lda too small) are not counted.
  EXPECT_NE(run.out.err.find("gemmtune drop-in (GEMMTUNE_CUBLAS=measured): 11 FP32 GEMM calls, 0 served by gemmtune, "
                             "11 forwarded to cuBLAS (4 left to cuBLAS by their settings"),
            std::string::npos)
      << run.out.err;
}

TEST(DropinClient, OffPassesEverythingThroughAndAnUnknownPolicyIsNamed) {
  ClientRun off({"GEMMTUNE_CUBLAS=off"});
  ASSERT_EQ(off.out.exitCode, 0) << off.out.err;
  EXPECT_NE(off.out.out.find(kForwarded), std::string::npos) << off.out.out;
  EXPECT_EQ(off.out.err.find("such calls go to cuBLAS"), std::string::npos) << off.out.err;
  EXPECT_NE(off.out.err.find("(GEMMTUNE_CUBLAS=off): 11 FP32 GEMM calls, 0 served"), std::string::npos) << off.out.err;

  ClientRun odd({"GEMMTUNE_CUBLAS=sometimes", "GEMMTUNE_CUBLAS_REPORT=0"});
  ASSERT_EQ(odd.out.exitCode, 0) << odd.out.err;
  EXPECT_EQ(occurrences(odd.out.err, "GEMMTUNE_CUBLAS=sometimes is not one of"), 1) << odd.out.err;
  EXPECT_EQ(odd.out.err.find("FP32 GEMM calls"), std::string::npos) << odd.out.err;  // report silenced
}

TEST(DropinClient, RecordModeWritesEveryFp32CallInTheTunersView) {
  test::ScratchDir dir;
  const auto file = dir / "recorded.txt";
  ClientRun run({"GEMMTUNE_CUBLAS=off", "GEMMTUNE_RECORD=" + file.string()});
  ASSERT_EQ(run.out.exitCode, 0) << run.out.err;
  const std::string text = readFile(file);
  // Column-major (opA, opB, m, n, k) is the row-major (opB, opA, n, m, k); the half-precision
  // call and the malformed ones are not recorded, TF32, device-scalar and alpha-0 calls are.
  EXPECT_NE(text.find("5x4x6 nn batch=1 "), std::string::npos) << text;
  EXPECT_NE(text.find("# calls=7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("9x8x10 nt batch=3 "), std::string::npos) << text;
  EXPECT_NE(text.find("9x8x10 tn batch=2 "), std::string::npos) << text;
  EXPECT_NE(text.find("3x7x2 tn batch=4 "), std::string::npos) << text;
  EXPECT_NE(text.find("3x7x2 tt batch=5 "), std::string::npos) << text;
  EXPECT_EQ(readShapeFile(file).size(), 5u);
  EXPECT_NE(run.out.err.find("recorded in " + file.string()), std::string::npos) << run.out.err;
}

TEST(DropinClient, SeveralProcessesRecordIntoOneFile) {
  test::ScratchDir dir;
  const auto file = dir / "recorded.txt";
  std::vector<std::thread> runs;
  for (int i = 0; i < 4; ++i)
    runs.emplace_back([&] { ClientRun run({"GEMMTUNE_CUBLAS=off", "GEMMTUNE_RECORD=" + file.string()}); });
  for (auto& t : runs) t.join();
  const std::string text = readFile(file);
  EXPECT_EQ(occurrences(text, "# FP32 GEMMs recorded"), 1) << text;  // one header, whoever was first
  EXPECT_EQ(occurrences(text, "5x4x6 nn batch=1 "), 4) << text;       // one whole line per process
  const auto problems = readShapeFile(file);
  ASSERT_EQ(problems.size(), 5u);
  for (const auto& p : problems)
    if (p.shape == GemmShape{5, 4, 6, {}, 1}) {
      EXPECT_NEAR(p.weight, 4 * 7 * 2.0 * 5 * 4 * 6 / 1e9, 1e-12);
    }
}

TEST(DropinClient, ANamedCublasThatCannotLoadFailsEachEntryPointWithOneWarning) {
  ClientRun run({"GEMMTUNE_CUBLAS=off", "GEMMTUNE_REAL_CUBLAS=/nonexistent/libcublas.so.13"});
  ASSERT_EQ(run.out.exitCode, 0) << run.out.err;
  EXPECT_NE(run.out.out.find("status sgemm 1\n"), std::string::npos) << run.out.out;  // CUBLAS_STATUS_NOT_INITIALIZED
  EXPECT_EQ(occurrences(run.out.err, "cublasSgemm_v2 cannot be forwarded: GEMMTUNE_REAL_CUBLAS=/nonexistent"), 1)
      << run.out.err;
  ClientRun named({"GEMMTUNE_REAL_CUBLAS=" GEMMTUNE_FAKE_CUBLAS});
  EXPECT_NE(named.out.out.find(kForwarded), std::string::npos) << named.out.out << named.out.err;
}
