#include "CompileCache.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "NvrtcCompiler.hpp"
#include "Sha256.hpp"

namespace gemmtune {

namespace {
constexpr int kFormat = 1;  // bump when the entry layout changes

nlohmann::json::binary_t bytes(const std::string& s) { return nlohmann::json::binary_t(std::vector<std::uint8_t>(s.begin(), s.end())); }
}  // namespace

std::filesystem::path CompileCache::defaultDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "gemmtune";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "gemmtune";
  return {};
}

std::string CompileCache::key(const CompileUnit& unit, const std::string& arch) {
  Sha256 h;
  h.update(fmt::format("gemmtune-compile-cache-v{}\n", kFormat));
  h.update("nvrtc " + NvrtcCompiler::version() + "\n");
  h.update("arch " + arch + "\n");
  for (const auto& o : NvrtcCompiler::baseOptions()) h.update("opt " + o + "\n");
  for (const auto& o : unit.options) h.update("family-opt " + o + "\n");
  for (const auto& e : unit.expressions) h.update("name " + e + "\n");
  h.update("source " + unit.sourceHash() + "\n");
  return h.hex();
}

std::filesystem::path CompileCache::pathFor(const std::string& key, const std::string& arch) const {
  return dir_ / ("nvrtc-" + NvrtcCompiler::version()) / arch / (key + ".cbor");
}

std::optional<CompileResult> CompileCache::load(const std::string& key, const std::string& arch) const {
  if (dir_.empty()) return std::nullopt;
  std::ifstream in(pathFor(key, arch), std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A truncated or foreign file is a miss, never an error: it is rewritten on the next store.
  auto j = nlohmann::json::from_cbor(data, true, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", 0) != kFormat) return std::nullopt;
  try {
    CompileResult r;
    r.ok = j.at("ok");
    r.log = j.at("log");
    r.ptx = j.at("ptx");
    const auto& cubin = j.at("cubin").get_binary();
    r.cubin.assign(cubin.begin(), cubin.end());
    r.loweredName = j.at("lowered");
    r.loweredNames = j.value("lowered_all", std::vector<std::string>{r.loweredName});
    r.arch = j.at("arch");
    r.sourceHash = j.at("source_hash");
    const auto& res = j.at("resources");
    r.resources = {res.at("registers"), res.at("static_smem"), res.at("stack_frame"),
                   res.at("spill_stores"), res.at("spill_loads"), res.at("cmem")};
    r.fromCache = true;
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void CompileCache::store(const std::string& key, const CompileResult& r) const {
  if (dir_.empty()) return;
  nlohmann::json j = {
      {"format", kFormat}, {"ok", r.ok}, {"log", r.log}, {"ptx", r.ptx}, {"cubin", bytes(r.cubin)},
      {"lowered", r.loweredName}, {"lowered_all", r.loweredNames}, {"arch", r.arch}, {"source_hash", r.sourceHash},
      {"resources", {{"registers", r.resources.registers}, {"static_smem", r.resources.staticSmemBytes},
                     {"stack_frame", r.resources.stackFrameBytes}, {"spill_stores", r.resources.spillStoreBytes},
                     {"spill_loads", r.resources.spillLoadBytes}, {"cmem", r.resources.constBytes}}}};
  auto path = pathFor(key, r.arch);
  static std::atomic<unsigned> counter{0};
  auto tmp = path;
  tmp += fmt::format(".tmp.{}.{}", ::getpid(), counter++);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    auto data = nlohmann::json::to_cbor(j);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) {
      spdlog::debug("compile cache: cannot write {}", tmp.string());
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    spdlog::debug("compile cache: cannot rename into {}: {}", path.string(), ec.message());
    std::filesystem::remove(tmp, ec);
  }
}

}  // namespace gemmtune
