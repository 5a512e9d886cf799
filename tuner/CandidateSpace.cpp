#include "CandidateSpace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "FamilyRegistry.hpp"
#include "gemmtune/Errors.hpp"
#include "Quote.hpp"

namespace gemmtune {

namespace {

bool parsePositive(std::string_view s, long long& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size() && out >= 1;
}

std::string paramNames(const Family& f) {
  std::string out;
  for (const auto& p : f.params) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace

std::vector<Config> spaceConfigs(const Family& family, const SpaceOptions& options) {
  const Family narrowed = withDomains(family, options.domains);
  // Configs must point at the caller's family (it outlives them), not at the local copy.
  std::vector<Config> points = FamilyRegistry::enumerate(narrowed, true);
  std::vector<Config> out;
  for (auto& p : points) {
    p.family = &family;
    p.layout = options.size ? options.size->layout : options.layout;
    if (options.bothForms) {
      Config unguarded = p;
      unguarded.guarded = false;
      out.push_back(std::move(unguarded));
      out.push_back(std::move(p));
    } else {
      // The form that runs the size; a violated constraint is reported later.
      if (options.size && !p.violated())
        p = formFor(p, GemmProblem::packed(*options.size));
      else
        p.guarded = true;
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<Candidate> screenSpace(const Family& family, const GpuSpec& gpu, const SpaceOptions& options) {
  std::vector<Candidate> out;
  for (const auto& config : spaceConfigs(family, options)) out.push_back(checkBeforeCompile(config, gpu, options.size));
  return out;
}

void compileSpace(std::vector<Candidate>& candidates, const GpuSpec& gpu, Compiler& compiler, const SpaceOptions& options) {
  std::vector<Config> configs;
  std::vector<Candidate*> targets;
  for (auto& c : candidates)
    if (c.accepted()) {
      configs.push_back(c.config);
      targets.push_back(&c);
    }
  std::vector<CompileResult> results = compiler.compileAll(configs, gpu.arch());
  for (size_t i = 0; i < targets.size(); ++i)
    checkAfterCompile(*targets[i], gpu, std::make_shared<const CompileResult>(std::move(results[i])), options.size, options.filter);
}

std::vector<Candidate> buildSpace(const Family& family, const GpuSpec& gpu, Compiler& compiler, const SpaceOptions& options) {
  std::vector<Candidate> candidates = screenSpace(family, gpu, options);
  compileSpace(candidates, gpu, compiler, options);
  return candidates;
}

SpaceSummary SpaceSummary::of(const std::vector<Candidate>& candidates) {
  SpaceSummary s;
  for (const auto& c : candidates) {
    ++s.enumerated;
    if (c.compiled) ++s.compiled;
    switch (c.stage) {
      case CandidateStage::Static:
      case CandidateStage::BeforeCompile: ++s.staticallyRejected; break;
      case CandidateStage::Compile: ++s.compileErrors; break;
      case CandidateStage::AfterCompile: ++s.rejectedAfterCompile; break;
      case CandidateStage::Pruned: ++s.pruned; break;
      case CandidateStage::Accepted: ++s.accepted; break;
    }
  }
  return s;
}

std::string SpaceSummary::line() const {
  return fmt::format("{} enumerated, {} statically rejected, {} compiled, {} compile errors, {} rejected after compile, "
                     "{} pruned, {} left to time",
                     enumerated, staticallyRejected, compiled, compileErrors, rejectedAfterCompile, pruned, accepted);
}

GemmShape parseOneSize(std::string_view text) {
  std::vector<GemmShape> sizes = parseSizes(text);
  if (sizes.size() != 1)
    throw UsageError(fmt::format("bad size {}: give one problem (e.g. 4096 or 4096x1024x512), not {}", quoteInput(text), sizes.size()));
  return sizes.front();
}

ParamDomains parseParamDomains(const Family& family, std::string_view text) {
  ParamDomains out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string name(item.substr(0, eq));
    for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (eq == std::string_view::npos || family.paramIndex(name) < 0)
      throw UsageError(fmt::format("{} is not NAME=VALUE with NAME one of {} ({})", quoteInput(item), paramNames(family), family.name));
    // The family's bound, as for instance names: beyond it the specs' int arithmetic overflows.
    const int bound = family.params[static_cast<size_t>(family.paramIndex(name))].maxValue();
    std::vector<int> values;
    std::string_view rest = item.substr(eq + 1);
    while (true) {
      const size_t slash = rest.find('/');
      const std::string_view one = rest.substr(0, slash);
      long long v = 0;
      if (!parsePositive(one, v) || v > 1 << 20)
        throw UsageError(fmt::format("parameter {} takes positive integers (several as 1/2/4), got {}", quoteInput(name),
                                     quoteInput(one)));
      if (v > bound)
        throw UsageError(fmt::format("{} {}={} is above the largest accepted value {} (16 times its largest default)",
                                     family.name, name, v, bound));
      values.push_back(static_cast<int>(v));
      if (slash == std::string_view::npos) break;
      rest = rest.substr(slash + 1);
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    if (!out.emplace(name, std::move(values)).second) throw UsageError(fmt::format("parameter {} given twice", name));
  }
  return out;
}

Family withDomains(const Family& family, const ParamDomains& domains) {
  Family out = family;
  for (auto& p : out.params)
    if (auto it = domains.find(p.name); it != domains.end()) p.domain = it->second;
  return out;
}

}  // namespace gemmtune
