#include "Family.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace gemmtune {

int Family::paramIndex(const std::string& paramName) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == paramName) return static_cast<int>(i);
  return -1;
}

int Config::operator[](const std::string& paramName) const {
  int i = family->paramIndex(paramName);
  if (i < 0) throw std::out_of_range(fmt::format("{} has no parameter {}", family->name, paramName));
  return values.at(static_cast<size_t>(i));
}

std::string Config::name() const {
  std::string out = family->name;
  for (size_t i = 0; i < values.size(); ++i) out += fmt::format("_{}{}", family->params[i].tag, values[i]);
  if (guarded) out += "_guarded";
  return out;
}

std::string Config::nameExpression() const {
  std::string out = family->kernelName + "<";
  for (int v : values) out += fmt::format("{},", v);
  out += guarded ? "true>" : "false>";
  return out;
}

const Constraint* Config::violated() const {
  for (const auto& c : family->constraints)
    if (!c.holds(*this)) return &c;
  return nullptr;
}

bool Config::divides(long long M, long long N, long long K) const {
  return M % family->mTile(*this) == 0 && N % family->nTile(*this) == 0 &&
         K % family->kTile(*this) == 0;
}

}  // namespace gemmtune
