#include "BenchReport.hpp"

#include <fmt/format.h>

#include <algorithm>
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

// Every family, or those a run of class `upTo` gives columns (Contenders.hpp, ColumnSet::precision).
std::vector<std::string> familyNames(std::optional<PrecisionClass> upTo = std::nullopt) {
  std::vector<std::string> out;
  for (const auto& f : FamilyRegistry::builtin().all())
    if (!upTo || f.precision <= *upTo) out.push_back(f.name);
  return out;
}

const SetFigures* figuresOf(const Measured& m, const std::string& set) {
  if (!m.faithful) return nullptr;
  for (const auto& f : m.faithful->sets)
    if (f.set == set) return &f;
  return nullptr;
}

std::string checkText(const Measured& m) {
  if (!m.verified) return "FAIL";
  return failsFaithful(m) ? "ERROR" : "ok";
}

std::string withinCublasText(const Measured& m) {
  if (!m.faithful) return "-";
  if (m.faithful->ok) return "yes";
  return failsFaithful(m) ? "no (faithful class: FAIL)" : "no";
}

}  // namespace

bool failsFaithful(const Measured& m) {
  return m.precision == PrecisionClass::faithful && m.faithful && !m.faithful->ok;
}

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

std::string formatTable(const std::string& gpuName, const std::vector<SizeResult>& results, PrecisionClass precision) {
  const auto families = familyNames(precision);
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
      const std::string note = !m.verified     ? m.verifyDetail
                               : failsFaithful(m) ? "error above cuBLAS SGEMM's (error table below)"
                                                  : m.match;
      out += fmt::format("  {:<6} {}\n", checkText(m), note);
    }
  }
  return out;
}

std::string formatErrors(const std::vector<SizeResult>& results) {
  std::string out;
  for (const auto& r : results) {
    const Measured* judged = nullptr;
    for (const auto& m : r.rows)
      if (!judged && m.faithful && !m.faithful->sets.empty()) judged = &m;
    if (!judged) continue;
    const auto& sets = judged->faithful->sets;
    out += fmt::format("\nsize {}\n  {:<18}", r.shape.str(), "column");
    for (const auto& f : sets) out += fmt::format(" {:<19}", f.set);
    std::string units = fmt::format(" ≤ cuBLAS\n  {:<18}", "");
    for (std::size_t i = 0; i < sets.size(); ++i) units += fmt::format(" {:<9} {:<9}", "max", "F");
    out += units.substr(0, units.find_last_not_of(' ') + 1) + "\n";
    for (const auto& m : r.rows) {
      out += fmt::format("  {:<18}", m.column);
      for (const auto& set : sets) {
        const SetFigures* f = figuresOf(m, set.set);
        out += f ? fmt::format(" {:<9.1e} {:<9.1e}", f->candidate.maxRelative, f->candidate.frobenius)
                 : fmt::format(" {:<9} {:<9}", "-", "-");
      }
      out += fmt::format(" {}\n", withinCublasText(m));
    }
  }
  if (out.empty()) return out;
  return "\nError against an FP64 product of the same inputs, per data set: max = max |C-C64| / (|A||B|), "
         "F = ||C-C64||_F / ||C64||_F;\n≤ cuBLAS: no figure above cuBLAS SGEMM's on the same data, and NaN/Inf "
         "exactly where its are\n" +
         out;
}

void writeCsv(const std::filesystem::path& path, const std::string& gpuName, const std::vector<SizeResult>& results) {
  std::ofstream csv(path);
  if (!csv) throw std::runtime_error("cannot write " + path.string());
  const auto families = familyNames();
  csv << "gpu,size,m,n,k,column,instance,match,verified,median_ms,spread,tflops,vs_cublas";
  for (const auto& f : families) csv << ",vs_" << f << "_fixed";
  for (std::string set : kFaithfulSets) {  // the same header in a strict run, which judges nothing
    std::replace(set.begin(), set.end(), ' ', '_');
    csv << ",err_" << set << "_max,err_" << set << "_f";
  }
  csv << ",err_within_cublas\n";
  auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : std::string(); };
  for (const auto& r : results) {
    const Measured* blas = findColumn(r, Kind::cublas);
    for (const auto& m : r.rows) {
      csv << fmt::format("{},{},{},{},{},{},{},{},{},{:.6f},{:.4f},{:.3f},{}", csvField(gpuName), r.shape.str(),
                         r.shape.M, r.shape.N, r.shape.K, csvField(m.column), csvField(m.instance), csvField(m.match),
                         m.verified ? 1 : 0, m.medianMs, m.spread, tflops(r.shape, m.medianMs), opt(speedup(m, blas)));
      for (const auto& f : families) csv << "," << opt(speedup(m, findColumn(r, Kind::fixed, f)));
      for (const char* set : kFaithfulSets) {
        const SetFigures* f = figuresOf(m, set);
        csv << (f ? fmt::format(",{:.3e},{:.3e}", f->candidate.maxRelative, f->candidate.frobenius) : ",,");
      }
      csv << "," << (m.faithful ? (m.faithful->ok ? "1" : "0") : "") << "\n";
    }
  }
  if (!csv) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace gemmtune::bench
