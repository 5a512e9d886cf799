#include "CubinCheck.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "CubinInfo.hpp"
#include "LaunchLimits.hpp"

namespace gemmtune::library {

namespace {

constexpr std::uint16_t kEmCuda = 190;
constexpr std::uint32_t kShtNobits = 8;

template <class T>
bool read(std::string_view data, std::uint64_t off, T& out) {
  if (off > data.size() || data.size() - off < sizeof(T)) return false;
  std::memcpy(&out, data.data() + off, sizeof(T));
  return true;
}

bool inside(std::string_view data, std::uint64_t off, std::uint64_t size) {
  return off <= data.size() && size <= data.size() - off;
}

}  // namespace

std::optional<std::string> cubinProblem(std::string_view cubin) {
  if (cubin.size() < 64 || std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0) return "not an ELF file";
  if (cubin[4] != 2 || cubin[5] != 1) return "not a 64-bit little-endian ELF file";
  std::uint16_t machine = 0, phentsize = 0, phnum = 0, shentsize = 0, shnum = 0;
  std::uint64_t phoff = 0, shoff = 0;
  if (!read(cubin, 0x12, machine) || !read(cubin, 0x20, phoff) || !read(cubin, 0x28, shoff) ||
      !read(cubin, 0x36, phentsize) || !read(cubin, 0x38, phnum) || !read(cubin, 0x3a, shentsize) ||
      !read(cubin, 0x3c, shnum))
    return "truncated ELF header";
  if (machine != kEmCuda) return fmt::format("ELF machine {} is not CUDA ({})", machine, kEmCuda);
  if (shnum == 0 || shentsize < 64 || !inside(cubin, shoff, std::uint64_t(shnum) * shentsize))
    return "section headers outside the file";
  if (phnum && (phentsize < 56 || !inside(cubin, phoff, std::uint64_t(phnum) * phentsize)))
    return "program headers outside the file";
  for (std::uint16_t i = 0; i < shnum; ++i) {
    std::uint64_t base = shoff + std::uint64_t(i) * shentsize, offset = 0, size = 0;
    std::uint32_t type = 0;
    if (!read(cubin, base + 4, type) || !read(cubin, base + 0x18, offset) || !read(cubin, base + 0x20, size))
      return "truncated section header";
    if (type != kShtNobits && !inside(cubin, offset, size)) return fmt::format("section {} lies outside the file", i);
  }
  for (std::uint16_t i = 0; i < phnum; ++i) {
    std::uint64_t base = phoff + std::uint64_t(i) * phentsize, offset = 0, size = 0;
    if (!read(cubin, base + 0x08, offset) || !read(cubin, base + 0x20, size)) return "truncated program header";
    if (!inside(cubin, offset, size)) return fmt::format("segment {} lies outside the file", i);
  }
  return std::nullopt;
}

std::string manglePrefix(const Config& config) {
  const std::string& name = config.family->kernelName;
  std::string out = fmt::format("_Z{}{}I", name.size(), name);
  for (int v : config.templateArguments()) out += v < 0 ? fmt::format("Lin{}E", -static_cast<long long>(v)) : fmt::format("Li{}E", v);
  auto flag = [](bool b) { return b ? "Lb1E" : "Lb0E"; };
  out += fmt::format("{}{}{}E", flag(config.guarded), flag(config.layout.transA), flag(config.layout.transB));
  return out;
}

std::optional<std::string> storedBinaryProblem(const Config& config, std::string_view cubin,
                                               const std::vector<std::string>& loweredNames, const GpuSpec& gpu) {
  if (auto problem = cubinProblem(cubin)) return "its binary is damaged: " + *problem;
  const size_t expected = config.kernelExpressions().size();
  if (loweredNames.size() != expected)
    return fmt::format("it names {} entry points, {} has {} kernels", loweredNames.size(), config.name(), expected);
  if (!loweredNames[0].starts_with(manglePrefix(config)))
    return fmt::format("its entry point {} is not the kernel of {}", loweredNames[0], config.name());
  for (const auto& name : loweredNames) {
    auto info = readCubinKernelInfo(cubin, name);
    if (!info) return fmt::format("its binary holds no kernel {}", name);
    if (info->registers > gpu.maxRegsPerThread)
      return fmt::format("its kernel uses {} registers per thread, the GPU allows {}", info->registers, gpu.maxRegsPerThread);
  }
  const Family& f = *config.family;
  auto main = readCubinKernelInfo(cubin, loweredNames[0]);
  if (auto v = kernelLimitViolation(gpu, {f.threadsPerBlock(config), main->registers, f.staticSmemBytes(config),
                                          f.dynamicSmemBytes(config)}))
    return fmt::format("its kernel does not fit the GPU: {} ({})", v->reason, v->limit);
  return std::nullopt;
}

}  // namespace gemmtune::library
