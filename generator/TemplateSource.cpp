#include "TemplateSource.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "gemmtune/EmbeddedTemplates.hpp"
#include "gemmtune/Errors.hpp"

namespace gemmtune {

std::string TemplateSource::get(const Family& family) const {
  if (dir_.empty()) {
    for (const auto& t : embedded::kTemplates)
      if (t.name == family.templateFile) return std::string(t.source);
    throw std::logic_error("template " + family.templateFile + " was not embedded at build time");
  }
  auto path = dir_ / family.templateFile;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("cannot read template {} (from --templates-dir)", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gemmtune
