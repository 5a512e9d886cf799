// Fixtures for the report tests: a results database with two families at several sizes, ok,
// rejected and pruned rows, stale rows and cuBLAS baselines; and a strict well-formedness check
// for the XML the page is made of.
#pragma once

#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "Database.hpp"
#include "SqliteStore.hpp"
#include "FamilyRegistry.hpp"
#include "db_test_support.hpp"

namespace gemmtune::test {

// testGpu() with the numbers the peak line needs: 132 SMs at a 1.98 GHz boost clock.
inline GpuSpec reportGpu(const std::string& name = "NVIDIA H100 80GB HBM3") {
  GpuSpec g = testGpu();
  g.name = name;
  g.clockKhz = 1980000;
  g.totalMemBytes = 80LL << 30;
  return g;
}

// The synthetic speed of a blocktile1d configuration at 4096: 24 TFLOP/s at BM = BN = 128,
// BK = 8, TM = 16, falling off away from it.
inline double fixtureTflops(int bm, int bn, int bk, int tm) {
  return 24.0 - 2.5 * std::abs(std::log2(bm / 128.0)) - 2.5 * std::abs(std::log2(bn / 128.0)) - (bk == 16 ? 0.6 : 0) -
         (tm == 32 ? 1.5 : 0) - (tm == 4 ? 1.0 : 0);
}

// The two rows excluded as stale; the page must not name them.
inline constexpr const char* kStaleInstance = "blocktile1d_bm64_bn32_bk8_tm4_guarded";

// A row without a measurement; built from the Config because a static-constraint rejection has
// a name that parseName() refuses.
inline db::ResultRecord failedResult(const Config& c, long long m, long long n, long long k, const std::string& status,
                                     const GpuSpec& gpu) {
  db::ResultRecord r = currentRecord(c, m, n, k, gpu);
  r.setStatus(status);
  r.errorText = "fixture: " + status;
  return r;
}

// Writes the fixture into a new database at `path`.
inline void writeReportFixture(const std::filesystem::path& path, const GpuSpec& gpu = reportGpu(),
                               const std::string& commandLine = "gemmtune tune --size 1024,2048,4096,4096x1024x512") {
  db::Database database(path, {db::OpenMode::ReadWrite, db::OpenCheck::Quick});
  db::SqliteStore store(database);
  auto info = testRun(gpu);
  info.commandLine = commandLine;
  auto run = store.beginRun(info);
  const Family& bt = *FamilyRegistry::builtin().find("blocktile1d");
  auto put = [&](const db::ResultRecord& r) { ASSERT_TRUE(store.recordResult(run, r)) << r.instance(); };

  // blocktile1d at 4096: the heatmap's grid.
  for (int bm : {16, 32, 64, 128, 256})
    for (int bn : {16, 32, 64, 128, 256})
      for (int bk : {8, 16})
        for (int tm : {4, 8, 16, 32}) {
          Config c{&bt, {bm, bn, bk, tm}, false};
          std::string name = c.name();
          if (c.violated()) {
            // Recorded as the tuner does only where the whole cell is infeasible.
            if (bm == 256 && bn == 256) put(failedResult(c, 4096, 4096, 4096, "rejected:constraint", gpu));
            continue;
          }
          if (bm + bn >= 384) {
            put(failedResult(c, 4096, 4096, 4096, "rejected:smem", gpu));
          } else if (bm == 16 && bn <= 32) {
            put(failedResult(c, 4096, 4096, 4096, "pruned:rank", gpu));
          } else if (bm == 32 && bn == 16 && !(bk == 8 && tm == 4)) {
            put(failedResult(c, 4096, 4096, 4096, "pruned:rank", gpu));
          } else {
            auto r = okResult(name, 4096, 4096, 4096, 1000 * fixtureTflops(bm, bn, bk, tm), gpu);
            int threads = bm * bn / tm;
            r.occupancy = std::min(1.0, threads / 1024.0 * 0.5 + (bk == 8 ? 0.125 : 0.0625));
            r.registers = 32 + 4 * tm;
            put(r);
          }
        }
  // blocktile1d at the smaller sizes, a few points each.
  for (auto [size, scale] : {std::pair{1024LL, 0.6}, std::pair{2048LL, 0.85}})
    for (auto [bm, bn, tm] : {std::tuple{64, 64, 8}, std::tuple{128, 64, 8}, std::tuple{128, 128, 16}}) {
      Config c{&bt, {bm, bn, 8, tm}, false};
      put(okResult(c.name(), size, size, size, 1000 * scale * fixtureTflops(bm, bn, 8, tm), gpu));
    }
  // smem at every size, the rectangular one included.
  struct Sz {
    long long m, n, k;
    double scale;
  };
  for (auto s : {Sz{1024, 1024, 1024, 0.6}, Sz{2048, 2048, 2048, 0.85}, Sz{4096, 4096, 4096, 1.0},
                 Sz{4096, 1024, 512, 0.7}})
    for (auto [bs, t] : {std::pair{8, 4.0}, std::pair{16, 7.0}, std::pair{32, 9.0}}) {
      auto r = okResult("smem_bs" + std::to_string(bs), s.m, s.n, s.k, 1000 * t * s.scale, gpu);
      r.occupancy = bs == 32 ? 0.5 : bs == 16 ? 0.75 : 1.0;
      put(r);
    }
  // Stale: another template source, another measuring method. Fast, so showing them would be seen.
  auto staleSource = okResult(kStaleInstance, 4096, 4096, 4096, 99000, gpu);
  staleSource.key.sourceHash = std::string(64, '0');
  auto staleMethod = okResult(kStaleInstance, 2048, 2048, 2048, 98000, gpu);
  staleMethod.key.methodVersion = "tune0.time0.verify0";
  put(staleSource);
  put(staleMethod);

  for (auto [m, n, k, tf] : {std::tuple{1024LL, 1024LL, 1024LL, 30.0}, std::tuple{2048LL, 2048LL, 2048LL, 45.0},
                             std::tuple{4096LL, 4096LL, 4096LL, 50.0}, std::tuple{4096LL, 1024LL, 512LL, 35.0}}) {
    db::BaselineRecord b;
    b.libraryVersion = "12.9";
    b.problem = {m, n, k};
    b.medianMs = 2.0 * m * n * k / (tf * 1e12) * 1e3;
    ASSERT_TRUE(store.recordBaseline(run, b));
  }
  store.endRun(run);
}

// Strict XML well-formedness: balanced tags, quoted attributes without duplicates, only the
// predefined and numeric entities, no stray '<' or '&'. A leading <!DOCTYPE ...> is skipped.
class XmlChecker {
 public:
  explicit XmlChecker(const std::string& s) : s_(s) {}

  // An empty string when well-formed, else what is wrong and where.
  std::string problem() {
    skipSpace();
    if (s_.compare(i_, 9, "<!DOCTYPE") == 0) {
      i_ = s_.find('>', i_);
      if (i_ == std::string::npos) return "unterminated DOCTYPE";
      ++i_;
    }
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '&') {
        if (!entityOk(i_)) return "bad entity" + where(i_);
        ++i_;
        continue;
      }
      if (c != '<') {
        if (open_.empty() && !std::isspace(static_cast<unsigned char>(c))) return "text outside the root" + where(i_);
        ++i_;
        continue;
      }
      if (std::string why = markup(); !why.empty()) return why;
    }
    if (!open_.empty()) return "unclosed <" + open_.back() + ">";
    if (roots_ == 0) return "no element";
    return {};
  }

 private:
  static bool isNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
  static bool isNameChar(char c) {
    return isNameStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  }
  std::string where(size_t at) const { return " at offset " + std::to_string(at) + ": '" + s_.substr(at, 40) + "'"; }

  bool entityOk(size_t at) const {  // s_[at] == '&'
    size_t semi = s_.find(';', at);
    if (semi == std::string::npos || semi - at > 10) return false;
    std::string e = s_.substr(at + 1, semi - at - 1);
    static const std::set<std::string> named{"amp", "lt", "gt", "quot", "apos"};
    if (named.count(e)) return true;
    if (e.size() > 1 && e[0] == '#') {
      bool hex = e[1] == 'x';
      std::string digits = e.substr(hex ? 2 : 1);
      if (digits.empty()) return false;
      for (char c : digits)
        if (!(hex ? std::isxdigit(static_cast<unsigned char>(c)) : std::isdigit(static_cast<unsigned char>(c))))
          return false;
      return true;
    }
    return false;
  }

  void skipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }

  std::string readName() {
    size_t n0 = i_;
    while (i_ < s_.size() && isNameChar(s_[i_])) ++i_;
    return s_.substr(n0, i_ - n0);
  }

  // At a '<': a comment, a closing tag or a start tag.
  std::string markup() {
    if (s_.compare(i_, 4, "<!--") == 0) {
      size_t end = s_.find("-->", i_);
      if (end == std::string::npos) return "unterminated comment" + where(i_);
      i_ = end + 3;
      return {};
    }
    size_t start = i_++;
    bool closing = i_ < s_.size() && s_[i_] == '/';
    if (closing) ++i_;
    if (i_ >= s_.size() || !isNameStart(s_[i_])) return "bad tag name" + where(start);
    std::string name = readName();
    return closing ? closingTag(start, name) : startTag(start, name);
  }

  std::string closingTag(size_t start, const std::string& name) {
    skipSpace();
    if (i_ >= s_.size() || s_[i_] != '>') return "bad closing tag" + where(start);
    ++i_;
    if (open_.empty() || open_.back() != name)
      return "closing </" + name + "> does not match <" + (open_.empty() ? "" : open_.back()) + ">" + where(start);
    open_.pop_back();
    return {};
  }

  std::string startTag(size_t start, const std::string& name) {
    if (std::string why = attributes(start); !why.empty()) return why;
    if (open_.empty() && ++roots_ > 1) return "second root element" + where(start);
    if (s_[i_] == '/') {
      i_ += 2;
    } else {
      ++i_;
      open_.push_back(name);
    }
    return {};
  }

  // The attributes of the start tag at `start`, up to its '>' or '/>'.
  std::string attributes(size_t start) {
    std::set<std::string> attrs;
    while (true) {
      size_t before = i_;
      skipSpace();
      if (i_ >= s_.size()) return "unterminated tag" + where(start);
      if (s_[i_] == '>' || s_.compare(i_, 2, "/>") == 0) return {};
      if (i_ == before) return "attributes need white space between them" + where(i_);
      if (!isNameStart(s_[i_])) return "bad attribute name" + where(i_);
      size_t a0 = i_;
      std::string attr = readName();
      if (!attrs.insert(attr).second) return "duplicate attribute " + attr + where(a0);
      if (std::string why = attributeValue(a0); !why.empty()) return why;
    }
  }

  // The '=' and quoted value of the attribute named at `a0`.
  std::string attributeValue(size_t a0) {
    skipSpace();
    if (i_ >= s_.size() || s_[i_] != '=') return "attribute without value" + where(a0);
    ++i_;
    skipSpace();
    if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) return "unquoted attribute" + where(a0);
    char q = s_[i_++];
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '<') return "'<' in attribute value" + where(a0);
      if (s_[i_] == '&' && !entityOk(i_)) return "bad entity in attribute" + where(i_);
      ++i_;
    }
    if (i_ >= s_.size()) return "unterminated attribute value" + where(a0);
    ++i_;
    return {};
  }

  const std::string& s_;
  size_t i_ = 0;
  std::vector<std::string> open_;
  int roots_ = 0;
};

// Returns an empty string when well-formed, else what is wrong and where.
inline std::string xmlProblem(const std::string& s) { return XmlChecker(s).problem(); }

// The <svg>...</svg> fragments of a page, in order.
inline std::vector<std::string> svgFragments(const std::string& page) {
  std::vector<std::string> out;
  for (size_t at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 1)) {
    size_t end = page.find("</svg>", at);
    if (end == std::string::npos) break;
    out.push_back(page.substr(at, end + 6 - at));
  }
  return out;
}

}  // namespace gemmtune::test
