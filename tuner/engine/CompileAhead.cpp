#include "engine/CompileAhead.hpp"

#include <algorithm>

#include "CandidateSpace.hpp"
#include "engine/EngineContext.hpp"
#include "engine/FamilyScreen.hpp"

namespace gemmtune {

CompileAhead::CompileAhead(EngineContext& context, const ScreenedFamily& screened, const std::vector<size_t>& plan,
                           const RankPruning& pruning)
    : context_(context), screened_(screened), plan_(plan), pruning_(pruning),
      window_(static_cast<size_t>(std::max(8, 2 * context.compiler.jobs()))),
      compiles_(screened.candidates.size()) {}

void CompileAhead::advance(size_t proposed) {
  for (; submitted_ < plan_.size() && submitted_ < proposed + window_; ++submitted_) {
    const size_t i = screened_.indexOf[plan_[submitted_]];
    if (pruning_.keptReason(plan_[submitted_])) continue;  // never proposed to the GPU: nothing to compile
    submit(i);
  }
}

std::shared_future<CompileResult> CompileAhead::compileOf(size_t i) {
  submit(i);
  return compiles_[i];
}

void CompileAhead::submit(size_t i) {
  if (!compiles_[i].valid())
    compiles_[i] = context_.compiler.submit(screened_.candidates[i].config, context_.gpu.arch());
}

void prefetchFirstSizes(EngineContext& context, const std::vector<GemmShape>& order) {
  // Every family's first size queues its compiles now, in family order, so that a slow family
  // (a CUTLASS instance takes seconds to compile) compiles while the earlier ones are timed;
  // CompileAhead's submits join these compiles (Compiler dedupes in-flight work) or, once done,
  // read them from the disk cache — without one, a finished prefetch would be compiled twice.
  // A layout is another instance of every configuration: each layout's first size is queued.
  if (context.compiler.cache().dir().empty()) return;
  for (const Family* f : context.options.families) {
    std::vector<Layout> queued;
    for (const GemmShape& shape : order) {
      if (!context.options.selected(shape, f) || std::count(queued.begin(), queued.end(), shape.layout)) continue;
      queued.push_back(shape.layout);
      std::vector<Config> configs;
      for (const Candidate& c : screenSpace(*f, context.gpu, spaceAt(shape, context.options)))
        if (c.accepted()) configs.push_back(c.config);
      context.compiler.prefetch(configs, context.gpu.arch());
    }
  }
}

}  // namespace gemmtune
