#include "Contenders.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "CudaDriver.hpp"
#include "FamilyRegistry.hpp"
#include "LibraryColumn.hpp"
#include "Workspace.hpp"
#include "worker/Cublas.hpp"

namespace gemmtune::bench {

ContenderFactory::ContenderFactory(CUstream stream, int device, const GpuSpec& gpu, const Cublas& blas,
                                   Compiler& compiler, serving::Lookup* lookup, LibraryColumn* library,
                                   LibraryColumn* ours, ColumnSet columns)
    : stream_(stream), device_(device), gpu_(gpu), blas_(blas), compiler_(compiler), lookup_(lookup),
      library_(library), ours_(ours), columns_(columns) {}

ColumnSet parseColumns(const std::string& list) {
  ColumnSet set{false, false, false, false};
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, end - start);
    if (item == "fixed") set.fixed = true;
    else if (item == "tuned") set.tuned = true;
    else if (item == "library") set.library = true;
    else if (item == "ours") set.ours = true;
    else if (item != "cublas")
      throw std::invalid_argument(fmt::format("--columns: unknown column '{}' (cublas, fixed, tuned, library, ours)", item));
    start = end + 1;
  }
  return set;
}

Contender ContenderFactory::kernel(Kind kind, const std::string& column, const Config& config, std::string cubin,
                                   std::vector<std::string> loweredNames, std::string match, const GemmShape& s) {
  if (cubin.empty() || loweredNames.empty()) {
    CompileResult r = compiler_.compile(config, gpu_.arch());
    if (!r.ok) throw std::runtime_error(fmt::format("{} does not compile: {}", config.name(), r.log));
    cubin = std::move(r.cubin);
    loweredNames = std::move(r.loweredNames);
  }
  // The bench's buffers are packed and aligned, like the worker's.
  LaunchPlan plan = planLaunch(config, GemmProblem::packed(s));
  if (!plan.runnable()) throw std::runtime_error(plan.refusal);
  auto loaded = std::make_shared<LoadedKernel>(cubin, loweredNames);
  auto workspace = std::make_shared<Workspace>(CudaDriver::get());  // split-K locks, when the plan has them
  CUstream stream = stream_;
  auto launch = [loaded, workspace, plan, stream](const SgemmArgs& a) {
    CudaDriver::get().check(loaded->run(plan, a, stream, workspace.get()), "cuLaunchKernel");
  };
  return {kind, column, config.family->name, config.name(), std::move(match), launch, config.family->precision};
}

std::vector<Contender> ContenderFactory::forSize(const GemmShape& s) {
  std::vector<Contender> out;
  const Cublas& blas = blas_;
  // The same layout and batches (cublasSgemmStridedBatched when batched).
  out.push_back({Kind::cublas, "cuBLAS", "", "cublas (default math)", "",
                 [&blas](const SgemmArgs& a) { blas.gemm(Cublas::Math::Default, a); }});
  auto tryAdd = [&](const std::string& column, auto&& make) {
    try {
      out.push_back(make());
    } catch (const std::exception& e) {
      fmt::print(stderr, "{} at {}: left out: {}\n", column, s.str(), e.what());
    }
  };
  const auto& families = FamilyRegistry::builtin().all();
  for (const auto& f : families) {
    if (!columns_.fixed) break;
    if (f.precision > columns_.precision) continue;
    auto classic = FamilyRegistry::classic(f);
    if (!classic) continue;
    Config form = formFor(*classic, GemmProblem::packed(s));
    tryAdd(f.name + " fixed", [&] { return kernel(Kind::fixed, f.name + " fixed", form, {}, {}, "", s); });
  }
  for (const auto& f : families) {
    const std::string column = f.name + " tuned";
    if (!lookup_ || !columns_.tuned) break;
    if (f.precision > columns_.precision) continue;
    tryAdd(column, [&] {
      serving::LookupResult r = lookup_->best(gpu_, db::problemKeyOf(s), f.name);
      if (r.quality == serving::MatchQuality::none || !r.config)
        throw std::runtime_error(f.precision > PrecisionClass::strict
                                     ? "not tuned at this exact problem (a tensor-core row serves its own problem only)"
                                     : "nothing tuned for this GPU in the database");
      std::string match(serving::toString(r.quality));
      if (r.quality != serving::MatchQuality::exact)
        match += fmt::format(" ({})", db::shapeOf(r.measuredProblem).str());
      return kernel(Kind::tuned, column, *r.config, r.cubin, r.loweredNames, match, s);
    });
  }
  if (columns_.library) addLibrary(out, Kind::library, library_, s);
  if (columns_.ours) addLibrary(out, Kind::library_ours, ours_, s);
  return out;
}

void ContenderFactory::addLibrary(std::vector<Contender>& out, Kind kind, LibraryColumn* library, const GemmShape& s) {
  if (!library) return;
  const std::string column = kind == Kind::library ? "sgemm()" : "sgemm() ours";
  try {
    LibraryColumn::Pick pick = library->best(device_, s);
    CUstream stream = stream_;
    out.push_back(Contender{kind, column, "", pick.instance, pick.match,
                            [library, stream](const SgemmArgs& a) { library->sgemm(stream, a); }, pick.precision});
  } catch (const std::exception& e) {
    fmt::print(stderr, "{} at {}: left out: {}\n", column, s.str(), e.what());
  }
}

}  // namespace gemmtune::bench
