#include "Family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace gemmtune {

int Family::paramIndex(const std::string& paramName) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == paramName) return static_cast<int>(i);
  return -1;
}

// An architecture-specific target is the GPU's arch with a feature suffix: "sm_90a", "sm_100a".
std::string Family::onlyGpuArch() const { return onlyArch.empty() ? "" : onlyArch.substr(0, onlyArch.size() - 1); }

bool Family::runsOn(const std::string& gpuArch) const { return onlyArch.empty() || gpuArch == onlyGpuArch(); }

bool Family::isSkinnyTile(const std::vector<int>& values) const {
  return std::any_of(skinnyTiles.begin(), skinnyTiles.end(), [&](const std::vector<int>& tile) {
    if (tile.size() != values.size() || tile.size() != params.size()) return false;
    for (size_t p = 0; p < tile.size(); ++p)
      if (!params[p].launchOnly && tile[p] != values[p]) return false;
    return true;
  });
}

int Config::operator[](const std::string& paramName) const {
  int i = family->paramIndex(paramName);
  if (i < 0) throw std::out_of_range(fmt::format("{} has no parameter {}", family->name, paramName));
  return values.at(static_cast<size_t>(i));
}

std::string Config::name() const {
  std::string out = family->name;
  for (size_t i = 0; i < values.size(); ++i) out += fmt::format("_{}{}", family->params[i].tag, values[i]);
  if (layout != Layout{}) out += "_" + layout.text();
  if (guarded) out += "_guarded";
  return out;
}

std::vector<std::pair<std::string, int>> Config::namedValues() const {
  std::vector<std::pair<std::string, int>> out;
  for (size_t i = 0; i < values.size(); ++i) out.emplace_back(family->params[i].name, values[i]);
  return out;
}

std::vector<int> Config::templateArguments() const {
  std::vector<int> out;
  for (size_t i = 0; i < values.size(); ++i)
    if (!family->params[i].launchOnly) out.push_back(values[i]);
  return out;
}

std::string Config::programKey() const {
  std::string out = family->name;
  for (int v : templateArguments()) out += fmt::format("_{}", v);
  return out;
}

bool Config::sameProgram(const Config& o) const {
  return family == o.family && guarded == o.guarded && layout == o.layout && templateArguments() == o.templateArguments();
}

std::vector<Config> Config::launchVariants() const {
  std::vector<Config> out{*this};
  for (size_t i = 0; i < values.size(); ++i) {
    if (!family->params[i].launchOnly) continue;
    std::vector<Config> next;
    for (const Config& c : out)
      for (int v : family->params[i].domain) {
        Config variant = c;
        variant.values[i] = v;
        next.push_back(std::move(variant));
      }
    out = std::move(next);
  }
  return out;
}

std::string Config::nameExpression() const {
  std::string out = family->kernelName + "<";
  for (int v : templateArguments()) out += fmt::format("{},", v);
  auto flag = [](bool b) { return b ? "true" : "false"; };
  out += fmt::format("{},{},{}>", flag(guarded), flag(layout.transA), flag(layout.transB));
  return out;
}

const Constraint* Config::violated() const {
  for (const auto& c : family->constraints)
    if (!c.holds(*this)) return &c;
  return nullptr;
}

const TargetConstraint* Config::violatedOn(const GpuSpec& gpu) const {
  for (const auto& c : family->targetConstraints)
    if (!c.holds(*this, gpu)) return &c;
  return nullptr;
}

std::string Config::compileArch(const std::string& gpuArch) const {
  return family && !family->onlyArch.empty() ? family->onlyArch : gpuArch;
}

std::vector<std::string> Config::kernelExpressions() const {
  std::vector<std::string> out{nameExpression()};
  if (family->extraKernels)
    for (auto& e : family->extraKernels(*this)) out.push_back(std::move(e));
  return out;
}

}  // namespace gemmtune
