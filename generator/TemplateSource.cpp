#include "TemplateSource.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "HeaderTrees.hpp"
#include "gemmtune/EmbeddedTemplates.hpp"
#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace {

std::string read(const std::filesystem::path& dir, const std::string& file) {
  if (dir.empty()) {
    for (const auto& t : embedded::kTemplates)
      if (t.name == file) return std::string(t.source);
    throw std::logic_error("template " + file + " was not embedded at build time");
  }
  auto path = dir / file;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("cannot read template {} (from --templates-dir)", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string TemplateSource::get(const Family& family) const {
  if (family.templateText) return family.templateText();
  return read(dir_, family.templateFile);
}

std::string TemplateSource::sourceHash(const Family& family) const { return familyUnit(family).sourceHash(); }

CompileUnit TemplateSource::unit(const Config& config) const {
  CompileUnit u = familyUnit(*config.family);
  u.expressions = config.kernelExpressions();
  return u;
}

CompileUnit TemplateSource::familyUnit(const Family& f) const {
  CompileUnit u{get(f), {}, f.compileOptions, {}};
  for (const auto& h : f.headers) u.headers.emplace_back(h, read(dir_, h));
  for (const auto& name : f.headerTrees) {
    const HeaderTree& tree = requireHeaderTree(name);
    u.headerTrees.push_back(tree.identity());
    // Paths differ between machines: they reach NVRTC (and this machine's compile cache key) but
    // never the stored compile options or the source hash.
    for (const auto& dir : tree.includeDirs) u.options.push_back("-I" + dir);
  }
  return u;
}

}  // namespace gemmtune
