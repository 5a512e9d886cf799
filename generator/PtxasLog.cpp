#include "PtxasLog.hpp"

#include <regex>
#include <sstream>
#include <string>

namespace gemmtune {

// The log looks like (one block per entry function):
//   ptxas info    : Compiling entry function '_Z...' for 'sm_90'
//   ptxas info    : Function properties for _Z...
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 40 registers, used 1 barriers, 8192 bytes smem, 400 bytes cmem[0]
std::optional<Resources> parsePtxasLog(std::string_view log, std::string_view loweredName) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex cmem(R"((\d+) bytes cmem\[0\])");

  std::istringstream in{std::string(log)};
  std::string line;
  bool inEntry = false, sawUsed = false;
  Resources r;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, entry)) {
      if (inEntry && sawUsed) break;  // the next entry begins: ours is complete
      inEntry = (m[1] == std::string(loweredName));
      continue;
    }
    if (!inEntry) continue;
    if (std::regex_search(line, m, frame)) {
      r.stackFrameBytes = std::stoi(m[1]);
      r.spillStoreBytes = std::stoi(m[2]);
      r.spillLoadBytes = std::stoi(m[3]);
    }
    if (std::regex_search(line, m, used)) {
      r.registers = std::stoi(m[1]);
      sawUsed = true;
      if (std::regex_search(line, m, smem)) r.staticSmemBytes = std::stoi(m[1]);
      if (std::regex_search(line, m, cmem)) r.constBytes = std::stoi(m[1]);
    }
  }
  if (!sawUsed) return std::nullopt;
  return r;
}

}  // namespace gemmtune
