// SizeSpec: the problem-size grammar of `tune --sizes` and friends.
//   1024..8192        powers of two times the start: 1024, 2048, 4096, 8192 (square M=N=K)
//   1024..8192:1024   arithmetic steps: 1024, 2048, ..., 8192
//   1000,1536         lists; items of any form may be mixed
//   4096x1024x512     one M x N x K problem
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "GemmShape.hpp"

namespace gemmtune {

// Throws UsageError with one line naming the bad item. Duplicates are dropped (first kept).
std::vector<GemmShape> parseSizes(std::string_view spec);

// Device memory the tuner's worker needs for one problem (inputs, rotation copies, outputs and
// the verification reference), in bytes.
std::int64_t workingSetBytes(const GemmShape& s);

// Throws UsageError when a problem cannot fit in `deviceBytes` of GPU memory.
void checkFits(const std::vector<GemmShape>& shapes, std::int64_t deviceBytes, std::string_view gpuName);

}  // namespace gemmtune
