#include "FamilyPlans.hpp"

#include <fmt/format.h>

#include <limits>

#include "Family.hpp"

namespace gemmtune {

namespace {

constexpr long long kMaxElements = std::numeric_limits<int>::max();  // 32-bit offsets in the templates

}  // namespace

LaunchPlan tiledPlan(const Config& config, const GemmProblem& p, const TiledGeometry& g) {
  const Family& f = *config.family;
  if (std::string why = malformedProblem(p); !why.empty()) return LaunchPlan::refused(std::move(why));
  // Templates form 32-bit offsets of rows and k steps up to one tile past the last (computed,
  // never dereferenced), so one tile of slack on top of every operand must fit as well.
  // Stored rows of A: M (op N) or K (op T); of B: K (op N) or N (op T).
  const long long rowTileA = p.layout.transA ? g.tileK : g.tileM, rowTileB = p.layout.transB ? g.tileN : g.tileK;
  const long long reachA = (p.rowsA() + rowTileA) * p.lda, reachB = (p.rowsB() + rowTileB) * p.ldb,
                  reachC = (p.m + g.tileM) * p.ldc;
  if (reachA > kMaxElements || reachB > kMaxElements || reachC > kMaxElements)
    return LaunchPlan::refused(fmt::format("{}: an operand with one tile of slack reaches 2^31 elements (templates use 32-bit offsets)", p.text()));
  if (!config.guarded) {
    if (p.m % g.tileM || p.n % g.tileN || p.k % g.tileK)
      return LaunchPlan::refused(fmt::format("the unguarded form needs M % {} == N % {} == K % {} == 0, got {}", g.tileM,
                                             g.tileN, g.tileK, p.text()));
    if (g.vectorWidth > 1) {
      const int bytes = 4 * g.vectorWidth;
      if (p.lda % g.vectorWidth || p.ldb % g.vectorWidth || p.ldc % g.vectorWidth)
        return LaunchPlan::refused(fmt::format("{}-float loads need lda, ldb, ldc multiples of {}, got {}", g.vectorWidth,
                                               g.vectorWidth, p.text()));
      if (p.alignA < bytes || p.alignB < bytes || p.alignC < bytes)
        return LaunchPlan::refused(fmt::format("{}-float loads need {}-byte aligned A, B and C, got {}", g.vectorWidth,
                                               bytes, p.text()));
    }
  }
  // One grid layer per batch (the templates read blockIdx.z as the batch).
  if (p.batch > kMaxGridYZ) return LaunchPlan::refused(fmt::format("{}: more than {} batches in one launch", p.text(), kMaxGridYZ));
  const long long gx = (p.n + g.tileN - 1) / g.tileN, gy = (p.m + g.tileM - 1) / g.tileM;
  KernelLaunch k;
  k.grid = Dim3{static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(p.batch)};
  k.block = Dim3{static_cast<unsigned>(f.threadsPerBlock(config)), 1, 1};
  k.dynamicSmemBytes = f.dynamicSmemBytes(config);
  k.args = sgemmKernelArgs();
  LaunchPlan plan;
  plan.launches.push_back(std::move(k));
  plan.tileM = g.tileM;
  plan.tileN = g.tileN;
  plan.tileK = g.tileK;
  return plan;
}

LaunchPlan planLaunch(const Config& config, const GemmProblem& problem) {
  if (const Constraint* bad = config.violated())
    return LaunchPlan::refused(fmt::format("{} violates {}: {}", config.name(), bad->name, bad->reason));
  // The layout is compiled in: a kernel reading A and B another way would compute another product.
  if (config.layout != problem.layout)
    return LaunchPlan::refused(fmt::format("{} reads layout {}, the problem is {}", config.name(), config.layout.text(),
                                           problem.layout.text()));
  return config.family->plan(config, problem);
}

Config formFor(Config config, const GemmProblem& problem) {
  config.layout = problem.layout;
  config.guarded = false;
  if (!planLaunch(config, problem).runnable()) config.guarded = true;
  return config;
}

}  // namespace gemmtune
