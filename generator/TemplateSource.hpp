// TemplateSource: the exact CUDA source of a family's template — the copy embedded at build time,
// or the file of the same name under --templates-dir when one is given (headers likewise).
#pragma once

#include <filesystem>
#include <string>

#include "CompileUnit.hpp"
#include "Family.hpp"

namespace gemmtune {

class TemplateSource {
 public:
  // An empty `overrideDir` means the embedded templates.
  explicit TemplateSource(std::filesystem::path overrideDir = {}) : dir_(std::move(overrideDir)) {}
  // Throws IoError when the override directory lacks the file.
  std::string get(const Family& family) const;
  // The family's template and headers, `config`'s kernels and the family's options.
  CompileUnit unit(const Config& config) const;
  // The source hash every configuration of `family` shares (template and headers; the kernels
  // named in a unit do not enter it).
  std::string sourceHash(const Family& family) const;
  const std::filesystem::path& overrideDir() const { return dir_; }

 private:
  CompileUnit familyUnit(const Family& family) const;  // all but the kernels

  std::filesystem::path dir_;
};

}  // namespace gemmtune
