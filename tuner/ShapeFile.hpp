// ShapeFile: the workload of `tune --shapes FILE` — one problem per line:
//
//   SIZE [LAYOUT] [batch=N] [WEIGHT]        # comment
//
// SIZE is `MxNxK` (or `N` for a square); LAYOUT is nn, nt, tn or tt (op(A) then op(B), as
// problem/GemmShape.hpp defines them; default nn); batch=N gives N independent products per call
// (default 1, no spaces around '='); WEIGHT is how often the workload runs it (a positive number,
// default 1). The optional parts come in this order; `#` starts a comment. A bad line is refused
// with its file and line number (UsageError, exit 2); an unreadable file is an IoError (exit 74).
// The same problem twice (same size, layout and batch) keeps its first line and adds the weights.
//
//   # attention projections
//   4096x1024x512   12
//   512x512x512 nt batch=64  3     # per-head scores
//   27x32x3523 tn                  # skinny, large K
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
