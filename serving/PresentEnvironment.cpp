#include "PresentEnvironment.hpp"

#include "PresentBuild.hpp"

namespace gemmtune::serving {

db::PresentEnvironment presentEnvironment(const std::string& templatesDir) {
  PresentBuild build = presentBuild(templatesDir);
  db::PresentEnvironment p;
  p.nvrtcVersion = build.nvrtcVersion;
  p.compileOptionsOf = std::move(build.compileOptionsOf);
  p.sourceHashOf = std::move(build.sourceHashOf);
  return p;
}

}  // namespace gemmtune::serving
