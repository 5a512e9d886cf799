#include "JsonExchange.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "CacheKey.hpp"
#include "Clock.hpp"
#include "GemmShape.hpp"
#include "OutputFile.hpp"
#include "ParamsJson.hpp"
#include "Quote.hpp"
#include "ResultStore.hpp"

#ifndef GEMMTUNE_VERSION
#define GEMMTUNE_VERSION "unknown"
#endif

namespace gemmtune::db {

using nlohmann::json;

namespace {

// --- field tables: one list per record type drives both directions ---------------------------

constexpr std::array<std::pair<const char*, int GpuSpec::*>, 20> kGpuInts = {{
    {"cc_major", &GpuSpec::ccMajor},
    {"cc_minor", &GpuSpec::ccMinor},
    {"sm_count", &GpuSpec::smCount},
    {"max_threads_per_block", &GpuSpec::maxThreadsPerBlock},
    {"max_threads_per_sm", &GpuSpec::maxThreadsPerSm},
    {"max_blocks_per_sm", &GpuSpec::maxBlocksPerSm},
    {"warp_size", &GpuSpec::warpSize},
    {"regs_per_sm", &GpuSpec::regsPerSm},
    {"regs_per_block", &GpuSpec::regsPerBlock},
    {"max_regs_per_thread", &GpuSpec::maxRegsPerThread},
    {"reg_alloc_unit", &GpuSpec::regAllocUnit},
    {"smem_per_sm", &GpuSpec::smemPerSm},
    {"smem_per_block", &GpuSpec::smemPerBlock},
    {"smem_per_block_optin", &GpuSpec::smemPerBlockOptin},
    {"smem_reserved_per_block", &GpuSpec::smemReservedPerBlock},
    {"l2_bytes", &GpuSpec::l2Bytes},
    {"mem_clock_khz", &GpuSpec::memClockKhz},
    {"mem_bus_width_bits", &GpuSpec::memBusWidthBits},
    {"clock_khz", &GpuSpec::clockKhz},
    {"device_index", &GpuSpec::deviceIndex},
}};

constexpr std::array<std::pair<const char*, std::optional<double> ResultRecord::*>, 6> kResultReals = {{
    {"median_ms", &ResultRecord::medianMs},
    {"min_ms", &ResultRecord::minMs},
    {"spread", &ResultRecord::spread},
    {"gflops", &ResultRecord::gflops},
    {"max_error", &ResultRecord::maxError},
    {"occupancy", &ResultRecord::occupancy},
}};

constexpr std::array<std::pair<const char*, std::optional<int> ResultRecord::*>, 9> kResultInts = {{
    {"reps", &ResultRecord::reps},
    {"sm_clock_mhz", &ResultRecord::smClockMHz},
    {"threads_per_block", &ResultRecord::threadsPerBlock},
    {"registers", &ResultRecord::registers},
    {"static_smem_bytes", &ResultRecord::staticSmemBytes},
    {"dynamic_smem_bytes", &ResultRecord::dynamicSmemBytes},
    {"stack_frame_bytes", &ResultRecord::stackFrameBytes},
    {"spill_store_bytes", &ResultRecord::spillStoreBytes},
    {"spill_load_bytes", &ResultRecord::spillLoadBytes},
}};

constexpr std::array<std::pair<const char*, std::string ResultRecord::*>, 6> kResultTexts = {{
    {"family", &ResultRecord::family},
    {"status", &ResultRecord::status},
    {"status_reason", &ResultRecord::statusReason},
    {"error_text", &ResultRecord::errorText},
    {"limiter", &ResultRecord::limiter},
    {"lowered_name", &ResultRecord::loweredName},
}};

constexpr std::array<std::pair<const char*, std::string CacheKey::*>, 6> kKeyTexts = {{
    {"nvrtc_version", &CacheKey::nvrtcVersion},
    {"arch", &CacheKey::arch},
    {"compile_options", &CacheKey::compileOptions},
    {"source_hash", &CacheKey::sourceHash},
    {"method_version", &CacheKey::methodVersion},
    {"instance", &CacheKey::instance},
}};

// --- base64 (cubins) -------------------------------------------------------------------------

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string toBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kBase64[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kBase64[v & 63] : '=';
  }
  return out;
}

std::optional<std::string> fromBase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t v = 0;
    int pad = 0;
    for (size_t j = 0; j < 4; ++j) {
      char c = text[i + j];
      const char* p = c == '=' ? nullptr : std::strchr(kBase64, c);
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        ++pad;
        v <<= 6;
        continue;
      }
      if (!p || c == '\0' || pad) return std::nullopt;
      v = (v << 6) | static_cast<std::uint32_t>(p - kBase64);
    }
    out += static_cast<char>((v >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(v & 0xff);
  }
  return out;
}

// --- reading untrusted JSON with a path in every message ------------------------------------

class Reader {
 public:
  Reader(const json& obj, std::string path, const std::string& source) : obj_(obj), path_(std::move(path)), source_(source) {
    if (!obj_.is_object()) fail("", "expected an object");
  }

  [[noreturn]] void fail(std::string_view field, std::string_view what) const {
    throw DataError(fmt::format("{}: {}{}{}: {}; nothing was imported", source_, path_,
                                field.empty() ? "" : ".", field, what));
  }

  const json& at(const char* field) const {
    auto it = obj_.find(field);
    if (it == obj_.end()) fail(field, "missing");
    return *it;
  }
  bool absent(const char* field) const {
    auto it = obj_.find(field);
    return it == obj_.end() || it->is_null();
  }

  std::string text(const char* field) const {
    const json& v = at(field);
    if (!v.is_string()) fail(field, "expected a string");
    return v.get<std::string>();
  }
  std::string timestamp(const char* field) const {
    std::string t = text(field);
    if (!isUtcTimestamp(t)) fail(field, fmt::format("'{}' is not a time stamp like 2025-01-31T12:00:00.000000Z", t));
    return t;
  }
  std::int64_t integer(const char* field, std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t hi = std::numeric_limits<std::int64_t>::max()) const {
    const json& v = at(field);
    if (!v.is_number_integer()) fail(field, "expected an integer");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(field, fmt::format("{} is out of range [{}, {}]", v.get<std::uint64_t>(), lo, hi));
    std::int64_t x = v.get<std::int64_t>();
    if (x < lo || x > hi) fail(field, fmt::format("{} is out of range [{}, {}]", x, lo, hi));
    return x;
  }
  int int32(const char* field, int lo = std::numeric_limits<int>::min()) const {
    return static_cast<int>(integer(field, lo, std::numeric_limits<int>::max()));
  }
  std::optional<int> optionalInt(const char* field) const {
    if (absent(field)) return std::nullopt;
    return int32(field, 0);
  }
  std::optional<double> optionalReal(const char* field) const {
    if (absent(field)) return std::nullopt;
    const json& v = at(field);
    if (!v.is_number()) fail(field, "expected a number or null");
    double x = v.get<double>();
    if (!std::isfinite(x) || x < 0) fail(field, "expected a finite number, not negative");
    return x;
  }
  bool boolean(const char* field) const {
    const json& v = at(field);
    if (!v.is_boolean()) fail(field, "expected true or false");
    return v.get<bool>();
  }

 private:
  const json& obj_;
  std::string path_;
  const std::string& source_;
};

const json& arrayField(const json& doc, const char* field, const std::string& source) {
  auto it = doc.find(field);
  if (it == doc.end() || !it->is_array())
    throw DataError(fmt::format("{}: '{}' must be an array; nothing was imported", source, field));
  return *it;
}

json problemJson(const ProblemKey& p) {
  return {{"m", p.m}, {"n", p.n}, {"k", p.k}, {"layout", p.layout}, {"batch", p.batch}, {"beta_class", p.betaClass}};
}

// `version`: the file's format version; before 2 every problem was one product (batch 1).
ProblemKey readProblem(const Reader& r, int version) {
  ProblemKey p;
  p.m = r.integer("m", 1);
  p.n = r.integer("n", 1);
  p.k = r.integer("k", 1);
  p.layout = r.text("layout");
  if (version >= 2) p.batch = r.integer("batch", 1);
  p.betaClass = r.text("beta_class");
  if (!Layout::parse(p.layout)) r.fail("layout", fmt::format("{} is not one of nn, nt, tn, tt", quoteInput(p.layout)));
  if (p.betaClass.empty()) r.fail("beta_class", "must not be empty");
  return p;
}

// The document, its format and version checked.
json parseDocument(const std::string& text, const std::string& source) {
  json doc;
  std::string lastKey;
  try {
    // The format nests four levels (document, array, record, params): anything deeper is refused
    // before it is built, so no later recursion (dump, compare) can exhaust the stack.
    doc = parseJsonMaxDepth(text, 3, &lastKey);
  } catch (const TooDeepJson&) {
    throw DataError(fmt::format("{}: nested deeper than a gemmtune export (after field {}); nothing was imported",
                                source, quoteInput(lastKey)));
  } catch (const json::out_of_range& e) {
    throw DataError(fmt::format("{}: field {}: number out of range ({}); nothing was imported", source,
                                quoteInput(lastKey), e.what()));
  } catch (const json::exception& e) {
    throw DataError(fmt::format("{}: not valid JSON ({}); nothing was imported", source, e.what()));
  }
  if (!doc.is_object()) throw DataError(fmt::format("{}: not a gemmtune export (expected a JSON object)", source));
  Reader top(doc, "", source);
  if (!doc.contains("format") || !doc["format"].is_string() || doc["format"] != kExchangeFormat)
    throw DataError(fmt::format("{}: not a gemmtune export (\"format\" must be \"{}\"); nothing was imported", source,
                                kExchangeFormat));
  int version = top.int32("version", 1);
  if (version > kExchangeVersion)
    throw DataError(fmt::format("{}: format version {} is newer than this gemmtune reads ({}); upgrade gemmtune",
                                source, version, kExchangeVersion));
  return doc;
}

void readGpus(const json& doc, const std::string& source, ExchangeFile& out) {
  const json& gpus = arrayField(doc, "gpus", source);
  for (size_t i = 0; i < gpus.size(); ++i) {
    Reader r(gpus[i], fmt::format("gpus[{}]", i), source);
    ExchangeFile::Gpu g;
    g.spec.name = r.text("name");
    g.spec.profile = r.text("profile");
    for (const auto& [field, member] : kGpuInts) g.spec.*member = r.int32(field, field == std::string_view("device_index") ? -1 : 0);
    g.spec.totalMemBytes = r.integer("total_mem_bytes", 0);
    g.firstSeen = r.timestamp("first_seen");
    std::string stated = r.text("fingerprint");
    if (stated != gpuFingerprint(g.spec))
      r.fail("fingerprint", "does not match the GPU's fields (edited or damaged file)");
    out.gpus.emplace(stated, std::move(g));
  }
}

// After readGpus(): each run names one of the file's GPUs.
void readRuns(const json& doc, const std::string& source, ExchangeFile& out) {
  const json& runs = arrayField(doc, "runs", source);
  for (size_t i = 0; i < runs.size(); ++i) {
    Reader r(runs[i], fmt::format("runs[{}]", i), source);
    RunInfo run;
    run.uid = r.text("uid");
    if (run.uid.empty()) r.fail("uid", "must not be empty");
    std::string gpu = r.text("gpu");
    auto g = out.gpus.find(gpu);
    if (g == out.gpus.end()) r.fail("gpu", "names no GPU listed under \"gpus\"");
    run.gpu = g->second.spec;
    run.gpu.uuid = r.text("gpu_uuid");
    run.startedAt = r.timestamp("started_at");
    if (!r.absent("ended_at")) run.endedAt = r.timestamp("ended_at");
    run.toolVersion = r.text("tool_version");
    run.driverVersion = r.int32("driver_version", 0);
    run.nvrtcVersion = r.text("nvrtc_version");
    run.commandLine = r.text("command_line");
    run.host = r.text("host");
    if (!out.runGpu.emplace(run.uid, gpu).second) r.fail("uid", "appears twice");
    out.runs.push_back(std::move(run));
  }
}

// One result, which must name a run of the file (`runGpu`) and that run's GPU.
ExchangeFile::Result readResult(const Reader& r, const std::map<std::string, std::string>& runGpu, int version) {
  ExchangeFile::Result res;
  res.runUid = r.text("run");
  auto run = runGpu.find(res.runUid);
  if (run == runGpu.end()) r.fail("run", "names no run listed under \"runs\"");
  ResultRecord& rec = res.record;
  rec.key.gpuFingerprint = r.text("gpu");
  if (rec.key.gpuFingerprint != run->second) r.fail("gpu", "differs from the GPU of its run");
  for (const auto& [field, member] : kKeyTexts) rec.key.*member = r.text(field);
  rec.key.driverVersion = r.int32("driver_version", 0);
  rec.key.problem = readProblem(r, version);
  for (const auto& [field, member] : kResultTexts) rec.*member = r.text(field);
  for (const auto& [field, member] : kResultReals) rec.*member = r.optionalReal(field);
  for (const auto& [field, member] : kResultInts) rec.*member = r.optionalInt(field);
  rec.partial = r.boolean("partial");
  const json& params = r.at("params");
  if (std::string why = paramsProblem(params); !why.empty()) r.fail("params", why);
  rec.params = params.dump();
  rec.measuredAt = r.timestamp("measured_at");
  if (!r.absent("cubin_base64")) {
    auto cubin = fromBase64(r.text("cubin_base64"));
    if (!cubin) r.fail("cubin_base64", "is not base64");
    rec.cubin = std::move(*cubin);
  }
  if (r.text("cache_key") != rec.key.hash()) r.fail("cache_key", "does not match the result's fields (edited or damaged file)");
  try {
    validateResult(rec);
  } catch (const DataError& e) {
    r.fail("", e.what());
  }
  return res;
}

// After readRuns(): each baseline names one of the file's runs.
void readBaselines(const json& doc, const std::string& source, int version, ExchangeFile& out) {
  const json& baselines = arrayField(doc, "baselines", source);
  for (size_t i = 0; i < baselines.size(); ++i) {
    Reader r(baselines[i], fmt::format("baselines[{}]", i), source);
    ExchangeFile::Baseline b;
    b.runUid = r.text("run");
    auto run = out.runGpu.find(b.runUid);
    if (run == out.runGpu.end()) r.fail("run", "names no run listed under \"runs\"");
    b.gpuFingerprint = run->second;
    b.record.library = r.text("library");
    b.record.libraryVersion = r.text("library_version");
    b.record.problem = readProblem(r, version);
    auto median = r.optionalReal("median_ms");
    if (!median || *median <= 0) r.fail("median_ms", "expected a positive number");
    b.record.medianMs = *median;
    b.record.gflops = r.optionalReal("gflops").value_or(0);
    b.record.measuredAt = r.timestamp("measured_at");
    out.baselines.push_back(std::move(b));
  }
}

}  // namespace

ExchangeFile parseExchange(const std::string& text, const std::string& source) {
  const json doc = parseDocument(text, source);
  const int version = doc.at("version").get<int>();
  ExchangeFile out;
  readGpus(doc, source, out);
  readRuns(doc, source, out);
  const json& results = arrayField(doc, "results", source);
  for (size_t i = 0; i < results.size(); ++i)
    out.results.push_back(
        readResult(Reader(results[i], fmt::format("results[{}]", i), source), out.runGpu, version));
  readBaselines(doc, source, version, out);
  return out;
}

ExportSummary exportJson(const ResultStore& store, std::ostream& out, const ExportOptions& options) {
  // One state of the store: a run committed between two reads would otherwise leave results
  // naming a run the file does not list, which import refuses.
  auto view = store.consistentReads();
  ExportSummary summary;
  json doc = {{"format", kExchangeFormat},
              {"version", kExchangeVersion},
              {"exported_at", utcTimestamp()},
              {"tool_version", GEMMTUNE_VERSION}};
  json& gpus = doc["gpus"] = json::array();
  for (const auto& g : store.gpus()) {
    json j = {{"fingerprint", g.fingerprint}, {"first_seen", g.firstSeen}, {"name", g.spec.name},
              {"profile", g.spec.profile}, {"total_mem_bytes", g.spec.totalMemBytes}};
    for (const auto& [field, member] : kGpuInts) j[field] = g.spec.*member;
    j["device_index"] = -1;  // a board ordinal means nothing on another machine
    gpus.push_back(std::move(j));
  }
  json& runs = doc["runs"] = json::array();
  for (const auto& r : store.runs()) {
    runs.push_back({{"uid", r.uid}, {"gpu", r.gpuFingerprint}, {"gpu_uuid", r.gpu.uuid},
                    {"started_at", r.startedAt}, {"ended_at", r.endedAt.empty() ? json() : json(r.endedAt)},
                    {"tool_version", r.toolVersion}, {"driver_version", r.driverVersion},
                    {"nvrtc_version", r.nvrtcVersion}, {"command_line", r.commandLine}, {"host", r.host}});
  }
  json& results = doc["results"] = json::array();
  ResultFilter all;
  all.withCubin = options.withCubins;
  for (const auto& r : store.results(all)) {
    json j = problemJson(r.key.problem);
    j["run"] = r.runUid;
    j["gpu"] = r.key.gpuFingerprint;
    j["cache_key"] = r.cacheKeyHash;
    j["driver_version"] = r.key.driverVersion;
    for (const auto& [field, member] : kKeyTexts) j[field] = r.key.*member;
    for (const auto& [field, member] : kResultTexts) j[field] = r.*member;
    for (const auto& [field, member] : kResultReals) j[field] = (r.*member) ? json(*(r.*member)) : json();
    for (const auto& [field, member] : kResultInts) j[field] = (r.*member) ? json(*(r.*member)) : json();
    j["partial"] = r.partial;
    j["params"] = paramsForOutput(r.params);
    j["measured_at"] = r.measuredAt;
    if (!r.cubin.empty()) j["cubin_base64"] = toBase64(r.cubin);
    results.push_back(std::move(j));
  }
  json& baselines = doc["baselines"] = json::array();
  for (const auto& b : store.baselines()) {
    json j = problemJson(b.problem);
    j.update({{"run", b.runUid}, {"library", b.library}, {"library_version", b.libraryVersion},
              {"median_ms", b.medianMs}, {"gflops", b.gflops}, {"measured_at", b.measuredAt}});
    baselines.push_back(std::move(j));
  }
  summary = {gpus.size(), runs.size(), results.size(), baselines.size()};
  // Names and logs may hold any bytes: replace invalid UTF-8 instead of failing the export.
  out << doc.dump(1, ' ', false, json::error_handler_t::replace) << '\n';
  return summary;
}

ExportSummary exportJsonFile(const ResultStore& store, const std::filesystem::path& file,
                             const ExportOptions& options) {
  std::ostringstream text;
  ExportSummary summary = exportJson(store, text, options);
  writeOutputFile(file, text.str(), "the export");
  return summary;
}

ImportSummary importExchange(ResultStore& store, const ExchangeFile& file) { return store.mergeBatch(file); }

ExchangeFile readExchangeFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw IoError(fmt::format("cannot read {}", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw IoError(fmt::format("cannot read {}", file.string()));
  return parseExchange(text.str(), file.string());
}

}  // namespace gemmtune::db
