// ShapeFile: the workload of `tune --shapes FILE` — one problem per line, `MxNxK` (or `N` for a
// square), optionally followed by a weight (how often the workload runs it, a positive number),
// `#` starting a comment. A bad line is refused with its file and line number (UsageError, exit 2);
// an unreadable file is an IoError (exit 74). The same problem twice keeps its first line and adds
// the weights.
//
//   # attention projections, batch 8
//   4096x1024x512   12
//   27x32x3523           # skinny, large K
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "SizeSpec.hpp"

namespace gemmtune {

struct WorkloadShape {
  GemmShape shape;
  double weight = 1;
  int line = 0;  // where it was first given
};

// `name` is how errors call the text (its file name).
std::vector<WorkloadShape> parseShapeText(std::string_view text, std::string_view name);
std::vector<WorkloadShape> readShapeFile(const std::filesystem::path& path);

}  // namespace gemmtune
