// Sha256: content hash for compile-cache keys and source hashes (FIPS 180-4).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gemmtune {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  // Hex digest; the object must not be updated afterwards.
  std::string hex();

  static std::string of(std::string_view data) { return Sha256().update(data).hex(); }

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> h_;
  unsigned char buf_[64];
  size_t used_ = 0;
  std::uint64_t bits_ = 0;
};

}  // namespace gemmtune
