#include "GpuSelect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "CacheKey.hpp"
#include "Log.hpp"
#include "Quote.hpp"

namespace gemmtune::serving {

namespace {

GpuDetector& autoDetector() {
  static GpuDetector detector;
  return detector;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool isHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

std::string storedNames(const std::vector<StoredGpu>& gpus) {
  std::string out;
  for (const auto& g : gpus)
    out += fmt::format("{}{}{} [{}]", out.empty() ? "" : ", ", g.spec.name,
                       g.spec.profile.empty() ? "" : fmt::format(" (profile {})", g.spec.profile),
                       g.fingerprint.substr(0, 8));
  return out.empty() ? "none" : out;
}

SelectedGpu fromStored(const StoredGpu& g) {
  return {g.spec, g.fingerprint, g, false};
}

}  // namespace

void setAutoGpuDetector(GpuDetector detector) { autoDetector() = std::move(detector); }

GpuSpec detectGpu(std::string_view selector) {
  if (!autoDetector())
    throw NoGpuError(fmt::format("--gpu {} needs GPU detection, which this build does not provide", selector));
  return autoDetector()(selector);
}

SelectedGpu selectGpu(const ResultStore& store, std::string_view selector) {
  auto gpus = store.gpus();
  const bool index = !selector.empty() && selector.size() <= 2 &&
                     std::all_of(selector.begin(), selector.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  if (index) {  // a GPU of this machine by its index: no fallback, the user named a device
    GpuSpec spec = detectGpu(selector);
    SelectedGpu out{spec, gpuFingerprint(spec), std::nullopt, true};
    for (const auto& g : gpus)
      if (g.fingerprint == out.fingerprint) out.stored = g;
    return out;
  }
  if (selector == "auto") {
    try {
      GpuSpec spec = detectGpu("auto");
      SelectedGpu out{spec, gpuFingerprint(spec), std::nullopt, true};
      for (const auto& g : gpus)
        if (g.fingerprint == out.fingerprint) out.stored = g;
      return out;
    } catch (const NoGpuError& e) {
      if (gpus.size() == 1) {
        logger()->info("{}; using the only GPU in the database: {}", e.what(), gpus[0].spec.name);
        return fromStored(gpus[0]);
      }
      throw NoGpuError(fmt::format("{}; name one with --gpu NAME (stored: {})", e.what(), storedNames(gpus)));
    }
  }
  std::string want = lower(selector);
  // Most specific first: the first rule with any match decides.
  std::vector<std::function<bool(const StoredGpu&)>> rules = {
      [&](const StoredGpu& g) { return want.size() >= 8 && isHex(want) && g.fingerprint.rfind(want, 0) == 0; },
      [&](const StoredGpu& g) { return !g.spec.profile.empty() && lower(g.spec.profile) == want; },
      [&](const StoredGpu& g) { return lower(g.spec.name) == want; },
      [&](const StoredGpu& g) { return !want.empty() && lower(g.spec.name).find(want) != std::string::npos; },
  };
  for (const auto& rule : rules) {
    std::vector<StoredGpu> hits;
    std::copy_if(gpus.begin(), gpus.end(), std::back_inserter(hits), rule);
    if (hits.empty()) continue;
    bool oneName = std::all_of(hits.begin(), hits.end(), [&](const StoredGpu& g) { return g.spec.name == hits[0].spec.name; });
    if (!oneName)
      throw UsageError(fmt::format("--gpu {} matches several GPUs: {}; be more specific", quoteInput(selector), storedNames(hits)));
    // Same model seen with different limits (driver or MIG change): the one tuned last is current.
    auto latest = std::max_element(hits.begin(), hits.end(), [](const StoredGpu& a, const StoredGpu& b) {
      return std::tie(a.lastRunAt, a.id) < std::tie(b.lastRunAt, b.id);
    });
    if (hits.size() > 1)
      logger()->info("{} was tuned with {} different fingerprints; using the latest ({})", latest->spec.name,
                     hits.size(), latest->fingerprint.substr(0, 8));
    return fromStored(*latest);
  }
  throw UsageError(fmt::format("no GPU {} in the database (stored: {})", quoteInput(selector), storedNames(gpus)));
}

ProblemKey parseProblemSize(std::string_view text) {
  std::vector<long long> dims;
  std::string_view rest = text;
  while (true) {
    auto x = rest.find_first_of("xX");
    std::string_view part = rest.substr(0, x);
    long long v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || v <= 0 || v > (1LL << 31))
      throw UsageError(fmt::format("size {} is not N or MxNxK with positive integers (e.g. 4096 or 4096x2048x1024)", quoteInput(text)));
    dims.push_back(v);
    if (x == std::string_view::npos) break;
    rest = rest.substr(x + 1);
  }
  if (dims.size() == 1) return {dims[0], dims[0], dims[0]};
  if (dims.size() == 3) return {dims[0], dims[1], dims[2]};
  throw UsageError(fmt::format("size {} must be N or MxNxK (e.g. 4096 or 4096x2048x1024)", quoteInput(text)));
}

}  // namespace gemmtune::serving
