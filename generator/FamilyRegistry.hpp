// FamilyRegistry: the kernel families gemmtune knows. Adding a family = a template under
// templates/ plus a spec function listed in FamilyRegistry.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "Family.hpp"

namespace gemmtune {

class FamilyRegistry {
 public:
  static const FamilyRegistry& builtin();

  explicit FamilyRegistry(std::vector<Family> families);
  // Non-copyable: Configs point at the Family objects held here.
  FamilyRegistry(const FamilyRegistry&) = delete;
  FamilyRegistry& operator=(const FamilyRegistry&) = delete;

  const Family* find(std::string_view name) const;  // nullptr when unknown
  const Family& get(std::string_view name) const;   // throws UsageError listing the choices
  const std::vector<Family>& all() const { return families_; }
  std::string choices() const;  // "smem, blocktile1d"

  // "blocktile1d_bm64_bn64_bk8_tm8_guarded" -> Config; throws UsageError on any mismatch.
  Config parseName(std::string_view canonical) const;
  // Family plus "BM=64,BN=64,BK=8,TM=8" -> Config (guarded as given); throws UsageError when a
  // parameter is missing, unknown or not a positive integer, or a static constraint fails.
  Config parseParams(const Family& family, std::string_view params, bool guarded) const;

  // Every point of the family's default domains in a stable order, all in the given form.
  // Static constraints are not applied here: callers report the violations.
  static std::vector<Config> enumerate(const Family& family, bool guarded);

 private:
  std::vector<Family> families_;
};

// Family specs (one function per template).
Family smemTiledFamily();
Family blocktile1dFamily();

}  // namespace gemmtune
