#include "CubinInfo.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace gemmtune {

namespace {

// Minimal ELF64 little-endian reader with bounds checks on every access.
struct Reader {
  std::string_view data;
  template <class T>
  bool get(size_t off, T& out) const {
    if (off > data.size() || data.size() - off < sizeof(T)) return false;
    std::memcpy(&out, data.data() + off, sizeof(T));
    return true;
  }
  std::string_view cstr(size_t off) const {
    if (off >= data.size()) return {};
    size_t end = data.find('\0', off);
    if (end == std::string_view::npos) return {};
    return data.substr(off, end - off);
  }
};

struct Section {
  std::string_view name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0, size = 0;
  std::uint32_t link = 0;
  std::uint64_t entsize = 0;
};

constexpr std::uint8_t kEiAttrRegCount = 0x2f;  // EIATTR_REGCOUNT: {symbol index, registers}
constexpr std::uint8_t kEiFmtSval = 0x04;       // record with a 16-bit size then a payload
constexpr std::uint8_t kEiFmtHval = 0x03;       // record with a 16-bit inline value
constexpr std::uint32_t kShtSymtab = 2;

}  // namespace

std::optional<CubinKernelInfo> readCubinKernelInfo(std::string_view cubin, std::string_view kernel) {
  Reader r{cubin};
  if (cubin.size() < 64 || std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0 || cubin[4] != 2) return std::nullopt;
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!r.get(0x28, shoff) || !r.get(0x3a, shentsize) || !r.get(0x3c, shnum) || !r.get(0x3e, shstrndx))
    return std::nullopt;
  if (shentsize < 64 || shstrndx >= shnum) return std::nullopt;

  std::vector<Section> sections(shnum);
  std::vector<std::uint32_t> nameOffsets(shnum);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    size_t base = shoff + size_t(i) * shentsize;
    Section& s = sections[i];
    if (!r.get(base, nameOffsets[i]) || !r.get(base + 4, s.type) || !r.get(base + 0x18, s.offset) ||
        !r.get(base + 0x20, s.size) || !r.get(base + 0x28, s.link) || !r.get(base + 0x38, s.entsize))
      return std::nullopt;
  }
  for (std::uint16_t i = 0; i < shnum; ++i) sections[i].name = r.cstr(sections[shstrndx].offset + nameOffsets[i]);

  // Symbol index of the kernel.
  std::optional<std::uint32_t> symIndex;
  for (const auto& s : sections) {
    if (s.type != kShtSymtab || s.entsize < 24 || s.link >= shnum) continue;
    const Section& strtab = sections[s.link];
    for (std::uint64_t k = 0; k < s.size / s.entsize; ++k) {
      std::uint32_t nameOff = 0;
      if (!r.get(s.offset + k * s.entsize, nameOff)) return std::nullopt;
      if (r.cstr(strtab.offset + nameOff) == kernel) symIndex = static_cast<std::uint32_t>(k);
    }
  }
  if (!symIndex) return std::nullopt;

  CubinKernelInfo info;
  std::string shared = ".nv.shared." + std::string(kernel);
  for (const auto& s : sections) {
    if (s.name == shared) info.sharedSectionBytes = static_cast<long long>(s.size);
    if (s.name != ".nv.info") continue;
    // Records: u8 format, u8 attribute, u16 size-or-value, then `size` payload bytes for SVAL.
    std::uint64_t pos = s.offset, end = s.offset + s.size;
    while (pos + 4 <= end) {
      std::uint8_t fmt = 0, attr = 0;
      std::uint16_t len = 0;
      if (!r.get(pos, fmt) || !r.get(pos + 1, attr) || !r.get(pos + 2, len)) return std::nullopt;
      pos += 4;
      if (fmt == kEiFmtSval) {
        if (attr == kEiAttrRegCount && len >= 8) {
          std::uint32_t sym = 0, regs = 0;
          if (!r.get(pos, sym) || !r.get(pos + 4, regs)) return std::nullopt;
          if (sym == *symIndex) info.registers = static_cast<int>(regs);
        }
        pos += len;
      } else if (fmt != kEiFmtHval && fmt != 0x01 && fmt != 0x02) {
        break;  // unknown record format: stop rather than misread
      }
    }
  }
  return info;
}

std::optional<Resources> resourcesFromCubin(std::string_view cubin, std::string_view kernel, std::string_view arch) {
  auto info = readCubinKernelInfo(cubin, kernel);
  if (!info || info->registers < 0) return std::nullopt;
  int sm = 0;
  if (arch.substr(0, 3) == "sm_") sm = std::atoi(std::string(arch.substr(3)).c_str());
  constexpr long long kReservedSm90 = 1024;
  long long shared = info->sharedSectionBytes;
  if (sm >= 90 && shared >= kReservedSm90) shared -= kReservedSm90;
  Resources r;
  r.registers = info->registers;
  r.staticSmemBytes = static_cast<int>(shared);
  return r;
}

}  // namespace gemmtune
