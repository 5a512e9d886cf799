// `gemmtune seen`: the shapes the library served without an exact row (a nearest size or the
// built-in default), recorded into the user's database by library/SeenRecorder, most time first,
// with the hint to tune them (`gemmtune tune --seen`); `--clear` forgets them.
#include "SeenCommand.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "CacheKey.hpp"
#include "CliContext.hpp"
#include "DbPath.hpp"
#include "ExitCodes.hpp"
#include "GemmShape.hpp"
#include "GpuSelect.hpp"

namespace gemmtune::cli {

std::vector<WorkloadShape> seenWorkload(const db::ResultStore& store, const std::vector<GpuSpec>& gpus) {
  std::vector<WorkloadShape> out;
  if (!store.hasSchema()) return out;
  std::map<std::string, std::size_t> index;  // GemmShape::str() -> position in `out`
  for (const GpuSpec& gpu : gpus) {
    auto id = store.gpuId(db::gpuFingerprint(gpu));
    if (!id) continue;
    db::SeenFilter filter;
    filter.gpuId = *id;
    for (const db::StoredSeen& s : store.seen(filter)) {
      const GemmShape shape = db::shapeOf(s.problem);
      auto [it, added] = index.emplace(shape.str(), out.size());
      if (added)
        out.push_back({shape, s.timeMs, 0});
      else
        out[it->second].weight += s.timeMs;
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const WorkloadShape& a, const WorkloadShape& b) { return a.weight > b.weight; });
  return out;
}

namespace {

struct SeenArgs {
  std::string db, gpu;
  std::optional<int> limit;
  bool json = false, clear = false;
};

// "2025-01-31T12:00:00.000000Z" -> "2025-01-31 12:00:00"
std::string shortTime(const std::string& utc) {
  std::string out = utc.substr(0, 19);
  if (out.size() > 10 && out[10] == 'T') out[10] = ' ';
  return out;
}

void printTable(const std::vector<db::StoredSeen>& rows, bool severalGpus) {
  std::size_t width = 5;
  for (const auto& s : rows) width = std::max(width, db::shapeOf(s.problem).str().size());
  fmt::print("{:<{}} {:>12} {:>14} {:>11}  {:<19}{}\n", "shape", width, "calls", "total ms", "ms/call",
             "last seen (UTC)", severalGpus ? "  gpu" : "");
  for (const auto& s : rows)
    fmt::print("{:<{}} {:>12} {:>14.3f} {:>11.4f}  {:<19}{}\n", db::shapeOf(s.problem).str(), width, s.calls,
               s.timeMs, s.calls > 0 ? s.timeMs / static_cast<double>(s.calls) : 0.0, shortTime(s.lastSeen),
               severalGpus ? "  " + s.gpuName : "");
}

void printJson(const std::vector<db::StoredSeen>& rows) {
  auto out = nlohmann::json::array();
  for (const auto& s : rows) {
    const auto& p = s.problem;
    out.push_back({{"gpu", s.gpuName}, {"gpu_fingerprint", s.gpuFingerprint}, {"shape", db::shapeOf(p).str()},
                   {"m", p.m}, {"n", p.n}, {"k", p.k}, {"layout", p.layout}, {"batch", p.batch},
                   {"beta_class", p.betaClass}, {"calls", s.calls}, {"time_ms", s.timeMs},
                   {"first_seen", s.firstSeen}, {"last_seen", s.lastSeen}});
  }
  fmt::print("{}\n", out.dump(2));
}

// The GPU --gpu names, as a filter; -1 when it has nothing stored.
std::optional<std::int64_t> gpuFilter(const db::ResultStore& store, const std::string& selector) {
  if (selector.empty()) return std::nullopt;
  serving::SelectedGpu gpu = serving::selectGpu(store, selector);
  return gpu.stored ? gpu.stored->id : -1;
}

int clear(const SeenArgs& a, const std::string& location) {
  auto store = db::openStore(location, {db::OpenMode::ReadWrite, db::OpenCheck::Quick});
  const std::size_t removed = store->clearSeen(gpuFilter(*store, a.gpu));
  fmt::print("removed {} recorded shape(s) from {}\n", removed, store->location());
  return kExitOk;
}

int run(const SeenArgs& a) {
  if (a.limit && *a.limit < 1) throw UsageError(fmt::format("--limit must be at least 1, got {}", *a.limit));
  const std::string location = db::resolveDatabasePath(a.db).string();
  const std::string nothing = "the library records the shapes sgemm() serves without a tuned row there";
  if (!db::storeMayExist(location)) {
    if (a.json) {
      printJson({});
      return kExitOk;
    }
    fmt::print(stderr, "gemmtune: no shapes recorded yet in {} (no database); {}\n", location, nothing);
    return kExitFailure;
  }
  if (a.clear) return clear(a, location);
  auto opened = db::openStore(location, {db::OpenMode::ReadOnly, db::OpenCheck::Quick});
  const db::ResultStore& store = *opened;
  std::vector<db::StoredSeen> rows;
  if (store.hasSchema()) {
    db::SeenFilter filter;
    filter.gpuId = gpuFilter(store, a.gpu);
    filter.limit = a.limit;
    rows = store.seen(filter);
  }
  if (a.json) {
    printJson(rows);
    return kExitOk;
  }
  if (rows.empty()) {
    fmt::print(stderr, "gemmtune: no shapes recorded yet in {}; {}\n", store.location(), nothing);
    return kExitFailure;
  }
  bool severalGpus = false;
  for (const auto& s : rows) severalGpus = severalGpus || s.gpuId != rows.front().gpuId;
  printTable(rows, severalGpus);
  fmt::print("tune them: gemmtune tune --seen{}\n", a.db.empty() ? "" : " --db " + a.db);
  return kExitOk;
}

}  // namespace

Action addSeenCommand(CLI::App& app, CliContext&) {
  auto a = std::make_shared<SeenArgs>();
  auto* sub = app.add_subcommand(
      "seen", "List the shapes the library served without a tuned row (recorded by sgemm()), most time first");
  addDbOption(sub, a->db);
  sub->add_option("--gpu", a->gpu, "Only this GPU: auto, an index of a GPU here, or a stored profile, name or part of it");
  sub->add_option("--limit", a->limit, "Only the first N shapes")->type_name("N");
  sub->add_flag("--json", a->json, "Machine-readable output (every field)");
  sub->add_flag("--clear", a->clear, "Forget the recorded shapes (of --gpu, else all)")->excludes("--json");
  sub->footer(
      "The library (gemmtune::Library, unless Options::recordSeen is false or GEMMTUNE_RECORD_SEEN=0) counts the\n"
      "calls it serves from a nearest size or its built-in default, with their estimated time, and adds them to\n"
      "the user's database every 10 s and when the Library is destroyed (docs/library.md, \"Recorded shapes\").\n\n"
      "Examples:\n"
      "  gemmtune seen --limit 20\n"
      "  gemmtune seen --gpu h100 --json\n"
      "  gemmtune tune --seen        (tune them all)\n"
      "  gemmtune seen --clear");
  return [a] { return run(*a); };
}

}  // namespace gemmtune::cli
