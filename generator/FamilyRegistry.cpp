#include "FamilyRegistry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <tuple>
#include <map>
#include <stdexcept>

#include "gemmtune/Errors.hpp"
#include "Quote.hpp"

namespace gemmtune {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

// Strict positive decimal: no sign, no spaces, no trailing characters, fits in int.
bool parsePositive(std::string_view s, int& out) {
  if (s.empty() || s.size() > 9) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 1;
}

std::string paramList(const Family& f) {
  std::string out;
  for (const auto& p : f.params) out += (out.empty() ? "" : ",") + p.name;
  return out;
}

// A value above the parameter's bound would overflow the spec's arithmetic: refused before any
// constraint, resource or compile sees it.
void checkBound(const Family& f, const ParamSpec& p, int value) {
  if (value > p.maxValue())
    throw UsageError(fmt::format("{} {}={} is above the largest accepted value {} (16 times its largest default)",
                                 f.name, p.name, value, p.maxValue()));
}

void checkConstraints(const Config& c) {
  if (const Constraint* bad = c.violated())
    throw UsageError(fmt::format("{} violates constraint {}: {}", c.name(), bad->name, bad->reason));
}

std::vector<Family (*)()>& enrolled() {
  static std::vector<Family (*)()> makers;
  return makers;
}

}  // namespace

void FamilyRegistry::enroll(Family (*make)()) { enrolled().push_back(make); }

const FamilyRegistry& FamilyRegistry::builtin() {
  static const FamilyRegistry registry([] {
    std::vector<Family> families;
    for (auto make : enrolled()) families.push_back(make());
    return families;
  }());
  return registry;
}

Config FamilyRegistry::libraryDefault() const {
  const Family* chosen = nullptr;
  for (const auto& f : families_)
    if (f.libraryDefault) {
      if (chosen || !f.classic) throw std::logic_error("exactly one family with a classic configuration must be the library default");
      chosen = &f;
    }
  if (!chosen) throw std::logic_error("no family is marked as the library default");
  return Config{chosen, *chosen->classic, true};
}

std::optional<Config> FamilyRegistry::classic(const Family& family) {
  if (!family.classic) return std::nullopt;
  return Config{&family, *family.classic, false};
}

FamilyRegistry::FamilyRegistry(std::vector<Family> families) {
  // The same spec linked twice enrolls twice and is kept once; two different specs sharing a name
  // are a build error, not a silent choice.
  for (auto& f : families) {
    auto same = std::find_if(families_.begin(), families_.end(), [&](const Family& g) { return g.name == f.name; });
    if (same == families_.end())
      families_.push_back(std::move(f));
    else if (same->templateFile != f.templateFile || same->kernelName != f.kernelName)
      throw std::logic_error("two kernel families are named " + f.name);
  }
  std::sort(families_.begin(), families_.end(),
            [](const Family& a, const Family& b) { return std::tie(a.order, a.name) < std::tie(b.order, b.name); });
}

const Family* FamilyRegistry::find(std::string_view name) const {
  for (const auto& f : families_)
    if (f.name == name) return &f;
  return nullptr;
}

const Family& FamilyRegistry::get(std::string_view name) const {
  if (const Family* f = find(name)) return *f;
  throw UsageError(fmt::format("unknown family {} (choose from: {})", quoteInput(name), choices()));
}

std::string FamilyRegistry::choices() const {
  std::string out;
  for (const auto& f : families_) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

Config FamilyRegistry::parseName(std::string_view canonical) const {
  // Family names contain no '_', so the first token names the family.
  auto tokens = split(canonical, '_');
  const Family* f = find(tokens[0]);
  if (!f)
    throw UsageError(fmt::format("{} is not an instance name: unknown family {} (choose from: {})",
                                 quoteInput(canonical), quoteInput(tokens[0]), choices()));
  Config c{f, {}, false};
  size_t expected = 1 + f->params.size();
  if (tokens.size() > expected && tokens.back() == "guarded") {
    c.guarded = true;
    tokens.pop_back();
  }
  if (tokens.size() == expected + 1) {
    if (auto layout = Layout::parse(tokens.back()); layout && *layout != Layout{}) {
      c.layout = *layout;
      tokens.pop_back();
    }
  }
  if (tokens.size() != expected) {
    throw UsageError(fmt::format("{} is not a {} instance name (expected e.g. {})", quoteInput(canonical),
                                 f->name, Config{f, std::vector<int>(f->params.size(), 1), true}.name()));
  }
  for (size_t i = 0; i < f->params.size(); ++i) {
    std::string_view tok = tokens[i + 1];
    const auto& tag = f->params[i].tag;
    int v = 0;
    if (tok.substr(0, tag.size()) != tag || !parsePositive(tok.substr(tag.size()), v))
      throw UsageError(fmt::format("{}: expected '{}<positive integer>' at {}", quoteInput(canonical), tag, quoteInput(tok)));
    checkBound(*f, f->params[i], v);
    c.values.push_back(v);
  }
  // Only one spelling per configuration: "bm064" or "bm64_guarded" variants must not alias.
  if (c.name() != canonical)
    throw UsageError(fmt::format("{} is not canonical (did you mean {}?)", quoteInput(canonical), c.name()));
  checkConstraints(c);
  return c;
}

Config FamilyRegistry::parseParams(const Family& f, std::string_view params, bool guarded) const {
  std::map<std::string, int, std::less<>> given;
  for (auto item : split(params, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw UsageError(fmt::format("parameter {} is not NAME=VALUE ({} takes {})", quoteInput(item), f.name, paramList(f)));
    std::string key(item.substr(0, eq));
    for (auto& ch : key) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    int v = 0;
    if (f.paramIndex(key) < 0)
      throw UsageError(fmt::format("unknown parameter {} for {} (choose from: {})", quoteInput(key), f.name, paramList(f)));
    if (!parsePositive(item.substr(eq + 1), v))
      throw UsageError(fmt::format("parameter {} must be a positive integer, got {}", key, quoteInput(item.substr(eq + 1))));
    checkBound(f, f.params[static_cast<size_t>(f.paramIndex(key))], v);
    if (!given.emplace(key, v).second) throw UsageError(fmt::format("parameter {} given twice", key));
  }
  Config c{&f, {}, guarded};
  for (const auto& p : f.params) {
    auto it = given.find(p.name);
    if (it == given.end())
      throw UsageError(fmt::format("missing parameter {} for {} (needs {})", p.name, f.name, paramList(f)));
    c.values.push_back(it->second);
  }
  checkConstraints(c);
  return c;
}

std::vector<Config> FamilyRegistry::enumerate(const Family& f, bool guarded) {
  std::vector<Config> out;
  std::vector<size_t> idx(f.params.size(), 0);
  while (true) {
    Config c{&f, {}, guarded};
    for (size_t i = 0; i < idx.size(); ++i) c.values.push_back(f.params[i].domain[idx[i]]);
    out.push_back(std::move(c));
    size_t i = idx.size();
    while (i > 0) {
      --i;
      if (++idx[i] < f.params[i].domain.size()) break;
      idx[i] = 0;
      if (i == 0) return out;
    }
    if (idx.empty()) return out;
  }
}

}  // namespace gemmtune
