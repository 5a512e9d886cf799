#include "BenchReport.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "FamilyRegistry.hpp"

namespace gemmtune::bench {

namespace {

std::string ratioText(const std::optional<double>& r) { return r ? fmt::format("{:.2f}x", *r) : "-"; }

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::string> familyNames() {
  std::vector<std::string> out;
  for (const auto& f : FamilyRegistry::builtin().all()) out.push_back(f.name);
  return out;
}

}  // namespace

double tflops(const GemmShape& s, double ms) { return ms > 0 ? s.flops() / (ms * 1e-3) / 1e12 : 0; }

std::optional<double> speedup(const Measured& row, const Measured* reference) {
  if (!reference || !(reference->medianMs > 0) || !(row.medianMs > 0)) return std::nullopt;
  return reference->medianMs / row.medianMs;
}

const Measured* findColumn(const SizeResult& r, Kind kind, const std::string& family) {
  for (const auto& m : r.rows)
    if (m.kind == kind && (family.empty() || m.family == family)) return &m;
  return nullptr;
}

std::string formatTable(const std::string& gpuName, const std::vector<SizeResult>& results) {
  const auto families = familyNames();
  std::string out = fmt::format("{}: TFLOP/s (median of interleaved rounds); ratios are speed-ups measured in this run\n",
                                gpuName);
  for (const auto& r : results) {
    const Measured* blas = findColumn(r, Kind::cublas);
    out += fmt::format("\nsize {}\n  {:<18} {:<38} {:>8} {:>9}", r.shape.str(), "column", "instance", "TFLOP/s",
                       "vs cuBLAS");
    for (const auto& f : families) out += fmt::format(" {:>21}", "vs " + f + " fixed");
    out += fmt::format("  {:<6} {}\n", "check", "match");
    for (const auto& m : r.rows) {
      out += fmt::format("  {:<18} {:<38} {:>8} {:>9}", m.column, m.instance,
                         m.medianMs > 0 ? fmt::format("{:.1f}", tflops(r.shape, m.medianMs)) : "-",
                         ratioText(speedup(m, blas)));
      for (const auto& f : families) out += fmt::format(" {:>21}", ratioText(speedup(m, findColumn(r, Kind::fixed, f))));
      out += fmt::format("  {:<6} {}\n", m.verified ? "ok" : "FAIL", m.verified ? m.match : m.verifyDetail);
    }
  }
  return out;
}

void writeCsv(const std::filesystem::path& path, const std::string& gpuName, const std::vector<SizeResult>& results) {
  std::ofstream csv(path);
  if (!csv) throw std::runtime_error("cannot write " + path.string());
  const auto families = familyNames();
  csv << "gpu,size,m,n,k,column,instance,match,verified,median_ms,spread,tflops,vs_cublas";
  for (const auto& f : families) csv << ",vs_" << f << "_fixed";
  csv << "\n";
  auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : std::string(); };
  for (const auto& r : results) {
    const Measured* blas = findColumn(r, Kind::cublas);
    for (const auto& m : r.rows) {
      csv << fmt::format("{},{},{},{},{},{},{},{},{},{:.6f},{:.4f},{:.3f},{}", csvField(gpuName), r.shape.str(),
                         r.shape.M, r.shape.N, r.shape.K, csvField(m.column), csvField(m.instance), csvField(m.match),
                         m.verified ? 1 : 0, m.medianMs, m.spread, tflops(r.shape, m.medianMs), opt(speedup(m, blas)));
      for (const auto& f : families) csv << "," << opt(speedup(m, findColumn(r, Kind::fixed, f)));
      csv << "\n";
    }
  }
  if (!csv) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace gemmtune::bench
