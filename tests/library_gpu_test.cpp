// Library::sgemm() on a real GPU (label gpu; skipped without a driver): results against cuBLAS
// for 200 shapes with M, N, K in [1, 3000] (1, 7, 17, tile edges +-1, padded leading dimensions,
// beta 0 and 2), every tuned size of a fixture database built from real NVRTC binaries (one with
// a damaged binary), 8 threads on 8 streams at once, and the dispatch overhead over a raw launch
// (printed, not asserted).
// Run: ctest -L gpu -R libraryGpu --output-on-failure
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <latch>
#include <map>
#include <random>
#include <thread>

#include "Compiler.hpp"
#include "CudaDriver.hpp"
#include "DeviceBuffer.hpp"
#include "FamilyRegistry.hpp"
#include "GpuDetect.hpp"
#include "LoadedKernel.hpp"
#include "Planner.hpp"
#include "PrimaryContext.hpp"
#include "gemmtune/Library.hpp"
#include "library_test_support.hpp"
#include "worker/Cublas.hpp"

using namespace gemmtune;
using Clock = std::chrono::steady_clock;

namespace {

const CudaDriver& drv() { return CudaDriver::get(); }

struct Shape {
  int m, n, k;
  int lda, ldb, ldc;
  float beta;
};

std::string text(const Shape& s) {
  return fmt::format("{}x{}x{} (lda {}, ldb {}, ldc {}, beta {})", s.m, s.n, s.k, s.lda, s.ldb, s.ldc, s.beta);
}

// Integers in [-8, 8]: every partial sum of a K <= 3000 product is exact in FP32, so any correct
// kernel matches cuBLAS bit for bit whatever its summation order.
const std::vector<float>& integerPool() {
  static const std::vector<float> pool = [] {
    std::vector<float> p(3000 * 3000 + 4096);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> d(-8, 8);
    for (auto& v : p) v = static_cast<float>(d(rng));
    return p;
  }();
  return pool;
}

std::vector<float> slice(size_t elems, size_t offset) {
  const auto& pool = integerPool();
  offset %= pool.size() - elems + 1;
  return {pool.begin() + static_cast<long>(offset), pool.begin() + static_cast<long>(offset + elems)};
}

// rows x cols compact -> rows x ld, padding filled with `pad`.
std::vector<float> padded(const std::vector<float>& compact, int rows, int cols, int ld, float pad) {
  std::vector<float> out(static_cast<size_t>(rows) * ld, pad);
  for (int r = 0; r < rows; ++r)
    std::copy_n(compact.begin() + static_cast<long>(r) * cols, cols, out.begin() + static_cast<long>(r) * ld);
  return out;
}

DeviceBuffer upload(const std::vector<float>& host) {
  DeviceBuffer b(std::max<size_t>(host.size(), 1) * sizeof(float));
  b.upload(host.data(), host.size() * sizeof(float));
  return b;
}

std::vector<float> download(const DeviceBuffer& b, size_t elems) {
  std::vector<float> host(elems);
  b.download(host.data(), elems * sizeof(float));
  return host;
}

const float* fp(const DeviceBuffer& b) { return reinterpret_cast<const float*>(b.ptr()); }
float* mfp(DeviceBuffer& b) { return reinterpret_cast<float*>(b.ptr()); }

// A tuned row of the fixture database.
struct Tuned {
  std::string instance;
  int m, n, k;
  double gflops;
  bool damageBinary = false;
};

const std::vector<Tuned>& tunedRows() {
  static const std::vector<Tuned> rows = {
      {"blocktile1d_bm64_bn64_bk8_tm8", 1024, 1024, 1024, 17000},
      {"blocktile1d_bm128_bn64_bk16_tm8", 2048, 2048, 2048, 20000},
      {"blocktile1d_bm64_bn128_bk8_tm8", 4096, 1024, 512, 22000},
      {"smem_bs32", 512, 512, 512, 9000},
      {"smem_bs16_guarded", 100, 100, 100, 3000},
      {"blocktile1d_bm32_bn32_bk32_tm4_guarded", 3000, 17, 129, 1000},
      {"blocktile1d_bm32_bn64_bk8_tm8", 768, 768, 768, 15000, true},
  };
  return rows;
}

// Writes the fixture database for GPU 0 with real binaries compiled for it.
void writeTunedDatabase(const std::filesystem::path& path, const std::vector<Tuned>& rows = tunedRows()) {
  GpuSpec gpu = queryGpu(0);
  CompilerOptions options;
  options.jobs = 2;
  Compiler compiler(options);
  std::vector<db::ResultRecord> records;
  std::map<std::string, CompileResult> compiledOf;  // rows of one instance at several sizes: one compile
  for (const auto& t : rows) {
    Config c = FamilyRegistry::builtin().parseName(t.instance);
    auto [it, fresh] = compiledOf.try_emplace(t.instance);
    if (fresh) it->second = compiler.compile(c, gpu.arch());
    const CompileResult& compiled = it->second;
    if (!compiled.ok) throw std::runtime_error("fixture compile failed: " + compiled.log);
    db::ResultRecord r = test::okResult(t.instance, t.m, t.n, t.k, t.gflops, gpu);
    r.key.driverVersion = drv().version();
    r.key.arch = gpu.arch();
    r.cubin = t.damageBinary ? compiled.cubin.substr(0, compiled.cubin.size() / 3) : compiled.cubin;
    r.loweredName = compiled.loweredName;
    r.registers = compiled.resources.registers > 0 ? std::optional<int>(compiled.resources.registers) : std::nullopt;
    r.staticSmemBytes = compiled.resources.staticSmemBytes;
    records.push_back(std::move(r));
  }
  test::writeDatabase(path, gpu, records);
}

class LibraryGpuFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
    context_ = std::make_unique<PrimaryContext>(0);
    // Blocking with respect to the legacy stream, which the synchronous copies use.
    drv().check(drv().cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "cuStreamCreate");
    cublas_ = std::make_unique<Cublas>(stream_);
  }
  void TearDown() override {
    cublas_.reset();
    if (stream_) drv().cuStreamDestroy(stream_);
  }

  void sync() { drv().check(drv().cuStreamSynchronize(stream_), "cuStreamSynchronize"); }

  // Runs `shape` through `lib` and through cuBLAS (pedantic FP32) on the same integer data;
  // returns an empty string when C matches exactly and the padding of C is untouched.
  std::string compare(Library& lib, const Shape& s, unsigned seed) {
    const size_t aElems = size_t(s.m) * s.k, bElems = size_t(s.k) * s.n, cElems = size_t(s.m) * s.n;
    auto a = slice(aElems, seed * 7919u), b = slice(bElems, seed * 104729u), c0 = slice(cElems, seed * 1299709u);
    const float nan = std::nanf("");
    const float pad = 4242.0f;
    DeviceBuffer dA = upload(padded(a, s.m, s.k, s.lda, pad)), dB = upload(padded(b, s.k, s.n, s.ldb, pad));
    // beta == 0 must not read C: NaN there would show.
    DeviceBuffer dC = upload(padded(s.beta == 0 ? std::vector<float>(cElems, nan) : c0, s.m, s.n, s.ldc, pad));
    DeviceBuffer rA = upload(a), rB = upload(b), rC = upload(c0);

    Status st = lib.sgemm(stream_, s.m, s.n, s.k, 1.0f, fp(dA), s.lda, fp(dB), s.ldb, s.beta, mfp(dC), s.ldc);
    if (st != Status::ok) return fmt::format("sgemm: {}: {}", toString(st), Library::lastError());
    cublas_->sgemm(Cublas::Math::Pedantic, s.m, s.n, s.k, 1.0f, rA.ptr(), rB.ptr(), s.beta, rC.ptr());
    sync();
    auto got = download(dC, size_t(s.m) * s.ldc), want = download(rC, cElems);
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.ldc; ++j) {
        float g = got[size_t(i) * s.ldc + j];
        if (j >= s.n) {
          if (g != pad) return fmt::format("padding of C changed at ({}, {}): {}", i, j, g);
        } else if (float w = want[size_t(i) * s.n + j]; !(g == w)) {
          return fmt::format("C({}, {}) = {}, cuBLAS {}", i, j, g, w);
        }
      }
    return {};
  }

  // One split-K instance, stored as tuned at 64x64x4096, through the library at every K.
  void expectSplitKExactAndDeterministic(const std::string& splitK);

  std::unique_ptr<PrimaryContext> context_;
  CUstream stream_ = nullptr;
  std::unique_ptr<Cublas> cublas_;
  test::ScratchDir dir_;
};

std::vector<Shape> testShapes(int count) {
  const int special[] = {1, 7, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025, 3000};
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> any(1, 3000), pick(0, std::size(special) - 1), extra(1, 5), coin(0, 3);
  std::vector<Shape> shapes = {{1, 1, 1, 1, 1, 1, 0}, {7, 7, 7, 7, 7, 7, 2}, {17, 17, 17, 17, 17, 17, 0},
                               {1, 3000, 1, 1, 3000, 3000, 0}, {3000, 1, 1, 1, 1, 1, 2}, {1, 1, 3000, 3000, 1, 1, 0}};
  while (static_cast<int>(shapes.size()) < count) {
    bool edge = shapes.size() < 60;
    Shape s;
    s.m = edge ? special[pick(rng)] : any(rng);
    s.n = edge ? special[pick(rng)] : any(rng);
    s.k = edge ? special[pick(rng)] : any(rng);
    bool pad = coin(rng) == 0;
    s.lda = s.k + (pad ? extra(rng) : 0);
    s.ldb = s.n + (pad ? extra(rng) : 0);
    s.ldc = s.n + (pad ? extra(rng) : 0);
    s.beta = shapes.size() % 2 ? 2.0f : 0.0f;
    shapes.push_back(s);
  }
  return shapes;
}

}  // namespace

using libraryGpu = LibraryGpuFixture;

TEST_F(libraryGpu, RandomShapesMatchCublasWithTunedRows) {
  writeTunedDatabase(dir_ / "tune.db");
  Library lib(dir_ / "tune.db");
  auto shapes = testShapes(200);
  int failures = 0;
  for (size_t i = 0; i < shapes.size() && failures < 10; ++i) {
    std::string why = compare(lib, shapes[i], static_cast<unsigned>(i));
    if (!why.empty()) {
      ++failures;
      ADD_FAILURE() << text(shapes[i]) << " [" << lib.best(0, shapes[i].m, shapes[i].n, shapes[i].k).instance
                    << "]: " << why;
    }
  }
}

TEST_F(libraryGpu, DefaultKernelMatchesCublasWithoutADatabase) {
  Library lib(dir_ / "missing.db");
  auto shapes = testShapes(60);
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_EQ(lib.best(0, shapes[i].m, shapes[i].n, shapes[i].k).match, Match::default_config);
    std::string why = compare(lib, shapes[i], static_cast<unsigned>(i + 1000));
    ASSERT_TRUE(why.empty()) << text(shapes[i]) << ": " << why;
  }
}

TEST_F(libraryGpu, EveryTunedSizeIsExactAndCorrect) {
  writeTunedDatabase(dir_ / "tune.db");
  test::WarningCapture capture;
  Library lib(dir_ / "tune.db");
  for (const auto& t : tunedRows()) {
    Choice c = lib.best(0, t.m, t.n, t.k);
    EXPECT_EQ(c.match, Match::exact) << t.instance << ": " << c.note;
    EXPECT_EQ(c.instance, t.instance);
    for (float beta : {0.0f, 2.0f}) {
      Shape s{t.m, t.n, t.k, t.k, t.n, t.n, beta};
      std::string why = compare(lib, s, static_cast<unsigned>(t.m + t.n));
      EXPECT_TRUE(why.empty()) << t.instance << " at " << text(s) << ": " << why;
    }
  }
  // The damaged binary was refused (once), and its configuration compiled instead.
  auto warnings = capture.warnings();
  auto damaged = std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.find("stored binary of blocktile1d_bm32_bn64_bk8_tm8") != std::string::npos;
  });
  EXPECT_EQ(damaged, 1) << capture.joined();
}

// Serial split-K through the library: the workspace of locks comes from the library (one per
// stream), every K is exact against cuBLAS (K = 1, K below the slice count, K not divisible by
// it, beta 0 and 2), and real-valued data gives the same bits on every run (the slices add in a
// fixed order).
TEST_F(libraryGpu, SplitKIsExactAtEveryKAndBitIdenticalRunToRun) {
  // CUTLASS's serial split-K (slices add into C in turn) and thin's (the last block of a tile adds
  // the partial tiles in slice order).
  for (const std::string splitK : {"cutlass_bm64_bn64_bk8_wm32_wn32_st3_sw4_sk8", "thin_bm32_bn32_bk32_tm4_tn2_st4_sk8_guarded"})
    expectSplitKExactAndDeterministic(splitK);
}

void LibraryGpuFixture::expectSplitKExactAndDeterministic(const std::string& splitK) {
  SCOPED_TRACE(splitK);
  const std::string db = splitK.substr(0, splitK.find('_')) + "-splitk.db";
  // A row at every shape asked: an unmeasured shape would be served at the split the model
  // predicts best there, and this test is about the 8-slice split at every K.
  const std::vector<int> ks = {1, 5, 8, 9, 63, 1001, 4096};
  const std::vector<std::pair<int, int>> mns = {{64, 64}, {27, 130}, {300, 300}};
  std::vector<Tuned> rows = {{splitK, 100, 70, 3000, 900}};
  for (int k : ks)
    for (auto [m, n] : mns) rows.push_back({splitK, m, n, k, 900});
  writeTunedDatabase(dir_ / db, rows);
  test::WarningCapture capture;  // a refused binary would fall back to the default kernel, exact too
  Library lib(dir_ / db);
  unsigned seed = 1;
  for (int k : ks)
    // 300x300 after the others: its tile counters lie where their partial sums were (thin), so
    // a plan that leaves its workspace dirty breaks the next one (found on an H100).
    for (auto [m, n] : mns) {
      ASSERT_EQ(lib.best(0, m, n, k).instance, splitK);
      for (float beta : {0.0f, 2.0f}) {
        Shape s{m, n, k, k, n, n + 3, beta};
        std::string why = compare(lib, s, ++seed);
        EXPECT_TRUE(why.empty()) << splitK << " at " << text(s) << ": " << why;
      }
    }
  const int m = 100, n = 70, k = 3000;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c0(size_t(m) * n);
  for (auto* v : {&a, &b, &c0})
    for (float& x : *v) x = u(rng);
  DeviceBuffer dA = upload(a), dB = upload(b), dC = upload(c0);
  std::vector<float> first;
  for (int run = 0; run < 5; ++run) {
    dC.upload(c0.data(), c0.size() * sizeof(float));
    ASSERT_EQ(lib.sgemm(stream_, m, n, k, 0.5f, fp(dA), k, fp(dB), n, 2.0f, mfp(dC), n), Status::ok) << Library::lastError();
    sync();
    std::vector<float> got = download(dC, c0.size());
    if (run == 0) first = got;
    ASSERT_EQ(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)), 0) << "run " << run << " differs from run 0";
  }
  EXPECT_TRUE(capture.warnings().empty()) << "the split-K kernel must run itself: " << capture.joined();
}

TEST_F(libraryGpu, EightThreadsOnEightStreams) {
  writeTunedDatabase(dir_ / "tune.db");
  Library lib(dir_ / "tune.db");
  const std::vector<Shape> shapes = {{1024, 1024, 1024, 1024, 1024, 1024, 0}, {1000, 999, 998, 998, 999, 999, 0},
                                     {512, 512, 512, 512, 512, 512, 0},       {17, 3000, 129, 129, 3000, 3000, 0},
                                     {300, 200, 100, 100, 200, 200, 0},       {1, 1, 1, 1, 1, 1, 0}};
  // Shared inputs, references from cuBLAS.
  std::vector<DeviceBuffer> as, bs;
  std::vector<std::vector<float>> refs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    as.push_back(upload(slice(size_t(s.m) * s.k, i * 31)));
    bs.push_back(upload(slice(size_t(s.k) * s.n, i * 57)));
    DeviceBuffer c(size_t(s.m) * s.n * sizeof(float));
    cublas_->sgemm(Cublas::Math::Pedantic, s.m, s.n, s.k, 1.0f, as[i].ptr(), bs[i].ptr(), 0.0f, c.ptr());
    sync();
    refs.push_back(download(c, size_t(s.m) * s.n));
  }
  constexpr int kThreads = 8, kRounds = 20;
  std::latch start(kThreads);
  std::vector<std::string> errors(kThreads);
  CUcontext ctx = context_->context();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        drv().check(drv().cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
        CUstream stream = nullptr;
        drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        std::vector<DeviceBuffer> cs;
        for (const auto& s : shapes) cs.emplace_back(size_t(s.m) * s.n * sizeof(float));
        start.arrive_and_wait();  // every thread meets the first call of every shape at once
        for (int round = 0; round < kRounds && errors[t].empty(); ++round)
          for (size_t i = 0; i < shapes.size(); ++i) {
            const Shape& s = shapes[(i + t) % shapes.size()];
            size_t j = (i + t) % shapes.size();
            Status st = lib.sgemm(stream, s.m, s.n, s.k, 1.0f, fp(as[j]), s.k, fp(bs[j]), s.n, 0.0f, mfp(cs[j]), s.n);
            if (st != Status::ok) errors[t] = fmt::format("{}: {}", toString(st), Library::lastError());
          }
        drv().check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize");
        for (size_t j = 0; j < shapes.size() && errors[t].empty(); ++j)
          if (download(cs[j], refs[j].size()) != refs[j]) errors[t] = "wrong result for " + text(shapes[j]);
        drv().cuStreamDestroy(stream);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

TEST_F(libraryGpu, DispatchOverheadOverARawLaunch) {
  Library lib(dir_ / "missing.db");  // the default kernel, so the raw launch runs the same one
  const int n = 64;
  DeviceBuffer a = upload(slice(n * n, 1)), b = upload(slice(n * n, 2)), c(n * n * sizeof(float));
  Config config = library::defaultConfig();
  CompilerOptions options;
  options.jobs = 1;
  Compiler compiler(options);
  CompileResult compiled = compiler.compile(config, queryGpu(0).arch());
  ASSERT_TRUE(compiled.ok) << compiled.log;
  LoadedKernel raw(compiled.cubin, compiled.loweredNames);
  const SgemmArgs args{n, n, n, 1.0f, a.ptr(), n, b.ptr(), n, 0.0f, c.ptr(), n};
  const LaunchPlan plan = planLaunch(config, problemOf(args));
  ASSERT_TRUE(plan.runnable()) << plan.refusal;
  const KernelLaunch& l = plan.launches.at(0);
  ArgumentPack pack(l, args);

  auto t0 = Clock::now();
  ASSERT_EQ(lib.sgemm(stream_, n, n, n, 1, fp(a), n, fp(b), n, 0, mfp(c), n), Status::ok) << Library::lastError();
  double firstMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  sync();

  // Enqueue cost per launch: batches short enough not to fill the launch queue.
  constexpr int kBatch = 100, kRounds = 60;
  auto measure = [&](auto&& launch) {
    std::vector<double> perLaunchUs;
    for (int r = 0; r < kRounds; ++r) {
      sync();
      auto start = Clock::now();
      for (int i = 0; i < kBatch; ++i) launch();
      perLaunchUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kBatch);
    }
    sync();
    std::sort(perLaunchUs.begin(), perLaunchUs.end());
    return perLaunchUs[perLaunchUs.size() / 2];
  };
  int bad = 0;
  double rawUs = measure([&] {
    bad += drv().cuLaunchKernel(raw.function(), l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z,
                                static_cast<unsigned>(l.dynamicSmemBytes), stream_, pack.pointers(), nullptr) != CUDA_SUCCESS;
  });
  double libUs = measure([&] { bad += lib.sgemm(stream_, n, n, n, 1, fp(a), n, fp(b), n, 0, mfp(c), n) != Status::ok; });
  EXPECT_EQ(bad, 0);
  std::printf("[ dispatch ] %dx%dx%d %s: first call %.1f ms; raw cuLaunchKernel %.2f us, sgemm() %.2f us, "
              "overhead %.2f us per call (target <= 2 us)\n",
              n, n, n, config.name().c_str(), firstMs, rawUs, libUs, libUs - rawUs);
  RecordProperty("dispatch_overhead_us", fmt::format("{:.3f}", libUs - rawUs));
}
