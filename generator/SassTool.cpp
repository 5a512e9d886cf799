#include "SassTool.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "gemmtune/Errors.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

namespace {
// The tools print what went wrong last, after the listing they had begun ("\n\tcode for sm_90\n
// cuobjdump fatal : Could not find executable file 'nvdisasm' ..."): its last non-blank line.
std::string lastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "no message";
  size_t start = text.find_last_of('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end + 1 - start);
}
}  // namespace

std::string findSassTool() {
  std::vector<fs::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      if (end > start) dirs.emplace_back(p.substr(start, end - start));
      start = end + 1;
    }
  }
  if (const char* cuda = std::getenv("CUDA_HOME")) dirs.push_back(fs::path(cuda) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  // nvdisasm first: it reads a cubin by itself, while cuobjdump only unpacks it and then runs
  // nvdisasm, failing where that is not beside it or on PATH (the PyPI wheels are separate).
  for (const char* tool : {"nvdisasm", "cuobjdump"})
    for (const auto& d : dirs)
      if (::access((d / tool).c_str(), X_OK) == 0) return (d / tool).string();
  return {};
}

std::string disassemble(const std::string& cubin) {
  std::string tool = findSassTool();
  if (tool.empty())
    throw UnavailableError(
        "--sass needs cuobjdump or nvdisasm, and neither is installed (CUDA toolkit binutils, or "
        "`pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` and put their bin/ on PATH)");
  auto tmp = fs::temp_directory_path() / fmt::format("gemmtune-{}-{}.cubin", ::getpid(), std::rand());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    if (!out.flush()) throw IoError(fmt::format("cannot write {}", tmp.string()));
  }
  bool isCuobjdump = fs::path(tool).filename() == "cuobjdump";
  std::string cmd = fmt::format("'{}' {} '{}' 2>&1", tool, isCuobjdump ? "-sass" : "-c", tmp.string());
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    int rc = ::pclose(p);
    std::error_code ec;
    fs::remove(tmp, ec);
    if (rc != 0) throw UnavailableError(fmt::format("{} failed: {}", tool, lastLine(out)));
    return out;
  }
  std::error_code ec;
  fs::remove(tmp, ec);
  throw UnavailableError(fmt::format("cannot run {}", tool));
}

}  // namespace gemmtune
