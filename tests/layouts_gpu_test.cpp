// Every built-in family in every layout and batch form, verified by the GPU worker (label gpu;
// skipped without a driver): each family's classic configuration (and CUTLASS's 128×256 tile, and
// a streamk configuration, and on sm_90 and later a clusterk one: families without a classic) in
// nn, nt, tn and tt, at an odd shape in the guarded form and at a shape of whole tiles in the
// unguarded form, each as one matrix and as a batch of 3 (whose checks run strided packed, strided
// padded and through pointer arrays). Every run must be ok with no layout skipped (an unguarded
// float4 form may refuse only the 4-byte aligned pointer arrays); a family that refuses a layout
// or batch fails here with its reason. The fault family's healthy mode runs alongside as the
// worker's own reference, and its mode 13 (ignores the batch index) must be a wrong result.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "Compiler.hpp"
#include "CudaDriver.hpp"
#include "FamilyRegistry.hpp"
#include "WorkerClient.hpp"
#include "fault_family.hpp"
#include "scratch_dir.hpp"
#include "worker_test_support.hpp"

using namespace gemmtune;
using gemmtune::test::requestFor;

namespace {

// 67x45x37: no tile divides it, rows end mid-float4. 256³: every classic tile divides it.
const GemmShape kOdd{67, 45, 37};
const GemmShape kWholeTiles{256, 256, 256};
constexpr long long kBatch = 3;

// One worker run: a configuration (layout and form set) on a problem.
struct Case {
  Config config;
  Problem problem;
};

// Every family's classic, and the configurations of families without one. `arch`: "sm_90" etc.
std::vector<Config> classicConfigs(const std::string& arch) {
  std::vector<Config> out;
  for (const Family& f : FamilyRegistry::builtin().all())
    if (auto c = FamilyRegistry::classic(f)) out.push_back(*c);
  // CUTLASS's widest tile (8 warps of 64×64): its loaders split rows differently from the classic's.
  out.push_back(FamilyRegistry::builtin().parseName("cutlass_bm128_bn256_bk8_wm64_wn64_st3_sw4_sk1"));
  // streamk: one wave over every batch's tiles, a tile's k steps split between blocks.
  out.push_back(FamilyRegistry::builtin().parseName("streamk_bm128_bn128_bk8_wm32_wn64_st3_sw4"));
  // clusterk (clusters: sm_90 on): its two slices of one tile in one cluster, per batch.
  if (std::stoi(arch.substr(3)) >= 90)
    out.push_back(FamilyRegistry::builtin().parseName("clusterk_bm128_bn128_bk8_wm64_wn64_st3_sw4_sk2"));
  return out;
}

// The problems: every layout, both shapes, one matrix and a batch.
std::vector<Problem> problems() {
  std::vector<Problem> out;
  for (const Layout& layout : Layout::all())
    for (const GemmShape& s : {kOdd, kWholeTiles})
      for (long long batch : {1LL, kBatch}) out.push_back(Problem{s.M, s.N, s.K, 0.0, layout, batch});
  return out;
}

// `base` in `p`'s layout: unguarded at whole tiles; at the odd shape the guarded form, unless the
// unguarded one runs it too (CUTLASS predicates every access: one form), as the tuner chooses.
Config formOf(Config base, const Problem& p) {
  base.layout = p.layout;
  base.guarded = false;
  const bool wholeTiles = p.M == kWholeTiles.M && p.N == kWholeTiles.N && p.K == kWholeTiles.K;
  if (!wholeTiles && !planLaunch(base, GemmProblem::packed(p.shape())).runnable()) base.guarded = true;
  return base;
}

// Empty when `req`'s plans verify every layout they must; otherwise what is refused, and why.
std::string refusals(const CandidateRequest& req, bool guarded) {
  std::string out;
  if (!req.plan.runnable()) out += "\n  timed problem: " + req.plan.refusal;
  for (const CheckLayout& l : req.checkLayouts) {
    // An unguarded form may need 16-byte aligned operands, which pointer arrays do not promise.
    if (l.plan.runnable() || (!guarded && l.problem.pointerArrays)) continue;
    out += "\n  check layout " + l.problem.text() + ": " + l.plan.refusal;
  }
  return out;
}

class LayoutsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaDriver::available()) GTEST_SKIP() << "no CUDA driver/GPU";
    client_ = std::make_unique<WorkerClient>(0, GEMMTUNE_CLI);
    arch_ = client_->info().arch;
  }

  // Every runnable case compiled at once (one child process per compile, as the tuner does).
  std::map<std::string, CompileResult> compileAll(const std::vector<Case>& cases) {
    std::map<std::string, Config> unique;
    for (const Case& c : cases) unique.emplace(c.config.name(), c.config);
    std::vector<Config> configs;
    for (const auto& [name, config] : unique) configs.push_back(config);
    Compiler compiler(CompilerOptions{{}, dir_ / "cache", 0, GEMMTUNE_CLI});
    std::vector<CompileResult> results = compiler.compileAll(configs, arch_);
    std::map<std::string, CompileResult> out;
    for (size_t i = 0; i < configs.size(); ++i) out.emplace(configs[i].name(), std::move(results[i]));
    return out;
  }

  CandidateRequest fault(int mode, const Problem& p) {
    static const Family family = test::faultFamily();
    const Config c{&family, {mode}, true, p.layout};
    auto it = faults_.find(c.name());
    if (it == faults_.end()) it = faults_.emplace(c.name(), test::compileFault(c, arch_)).first;
    EXPECT_TRUE(it->second.ok) << it->second.log;
    CandidateRequest req = requestFor(c, it->second, p, test::quickTiming());
    req.time = false;
    return req;
  }

  std::map<std::string, CompileResult> faults_;  // by instance name: each layout's modes compile once
  test::ScratchDir dir_;
  std::unique_ptr<WorkerClient> client_;
  std::string arch_;
};

}  // namespace

TEST_F(LayoutsGpu, EveryFamilyVerifiesInEveryLayoutAndBatchForm) {
  // Plan first: a refused layout is reported with the family's reason, never compiled or run.
  std::vector<Case> cases;
  for (const Problem& p : problems()) {
    for (const Config& base : classicConfigs(arch_)) {
      const Config c = formOf(base, p);
      const std::string why = refusals(requestFor(c, CompileResult{}, p, test::quickTiming()), c.guarded);
      if (why.empty())
        cases.push_back({c, p});
      else
        ADD_FAILURE() << c.name() << " at " << p.shape().str() << " is refused:" << why;
    }
  }
  const std::map<std::string, CompileResult> compiled = compileAll(cases);

  int runs = 0;
  for (const Problem& p : problems()) {
    client_->setProblem(p);
    const std::string at = " at " + p.shape().str();
    // The worker's own reference first: a naive kernel that reads every layout and batch form.
    const auto reference = client_->run(fault(0, p), 30);
    EXPECT_EQ(reference.status, "ok") << "fault mode 0" << at << ": " << reference.detail;
    if (p.batch > 1) {
      const auto ignoresBatch = client_->run(fault(13, p), 30);
      EXPECT_EQ(ignoresBatch.status, "wrong_result") << "fault mode 13" << at << ": " << ignoresBatch.detail;
      EXPECT_NE(ignoresBatch.detail.find("(batch "), std::string::npos) << ignoresBatch.detail;
    }
    for (const Case& c : cases) {
      if (c.problem.shape() != p.shape()) continue;
      const CompileResult& r = compiled.at(c.config.name());
      if (!r.ok) {
        ADD_FAILURE() << c.config.name() << " does not compile:\n" << r.log;
        continue;
      }
      CandidateRequest req = requestFor(c.config, r, p, test::quickTiming());
      req.time = false;
      const auto result = client_->run(req, 60);
      ++runs;
      EXPECT_EQ(result.status, "ok") << c.config.name() << at << ": " << result.detail;
      EXPECT_LE(result.maxError, 1.0) << c.config.name() << at;
      // Skipped layouts are named in the detail; only pointer arrays may be, and only unguarded.
      if (c.config.guarded) {
        EXPECT_EQ(result.detail, "") << c.config.name() << at;
      }
    }
  }
  RecordProperty("verified_runs", runs);
  EXPECT_EQ(client_->restarts(), 0);
}
