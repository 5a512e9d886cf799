// FamilyRegistry: the kernel families gemmtune knows. Adding a family = a template under
// templates/ plus a spec file under generator/families/ that ends in
// GEMMTUNE_REGISTER_FAMILY(makeFunction); CMake picks the file up, and the family enrolls itself
// when the program starts (the families library is linked whole, so no spec is dropped).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "Family.hpp"

namespace gemmtune {

class FamilyRegistry {
 public:
  // Every enrolled family, in (order, name) order; built on first use.
  static const FamilyRegistry& builtin();
  // Adds a family maker to builtin(); only before builtin()'s first use (static initialisation).
  static void enroll(Family (*make)());

  // Sorted by (order, name); a family given twice is kept once; two different families of one
  // name throw std::logic_error.
  explicit FamilyRegistry(std::vector<Family> families);
  // Non-copyable: Configs point at the Family objects held here.
  FamilyRegistry(const FamilyRegistry&) = delete;
  FamilyRegistry& operator=(const FamilyRegistry&) = delete;

  const Family* find(std::string_view name) const;  // nullptr when unknown
  const Family& get(std::string_view name) const;   // throws UsageError listing the choices
  const std::vector<Family>& all() const { return families_; }
  std::string choices() const;  // family names in listing order, comma-separated

  // Canonical instance name -> Config; throws UsageError on any mismatch.
  Config parseName(std::string_view canonical) const;
  // Family plus "BM=64,BN=64,BK=8,TM=8" -> Config (guarded as given); throws UsageError when a
  // parameter is missing, unknown or not a positive integer, or a static constraint fails.
  Config parseParams(const Family& family, std::string_view params, bool guarded) const;

  // Every point of the family's default domains in a stable order, all in the given form.
  // Static constraints are not applied here: callers report the violations.
  static std::vector<Config> enumerate(const Family& family, bool guarded);
  // The library's built-in default: the guarded classic configuration of the family marked
  // libraryDefault. Throws std::logic_error when no family (or more than one) is marked.
  Config libraryDefault() const;
  // The family's classic configuration (unguarded), if it has one.
  static std::optional<Config> classic(const Family& family);

 private:
  std::vector<Family> families_;
};

}  // namespace gemmtune

// In a spec file, at namespace gemmtune scope: enrolls `make` (a function returning the Family).
#define GEMMTUNE_REGISTER_FAMILY(make)                                          \
  namespace {                                                                   \
  [[maybe_unused]] const bool registered_##make = (FamilyRegistry::enroll(make), true); \
  }
