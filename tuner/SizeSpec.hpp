// SizeSpec: the problem-size grammar of `tune --sizes` and friends.
//   1024..8192        powers of two times the start: 1024, 2048, 4096, 8192 (square M=N=K)
//   1024..8192:1024   arithmetic steps: 1024, 2048, ..., 8192
//   1000,1536         lists; items of any form may be mixed
//   4096x1024x512     one M x N x K problem
// Every size is then tuned in each layout of `--layouts` (nn, nt, tn, tt: op(A) then op(B), see
// problem/GemmShape.hpp) with `--batch` products per call: shapesFor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "GemmShape.hpp"

namespace gemmtune {

// Throws UsageError with one line naming the bad item. Duplicates are dropped (first kept).
std::vector<GemmShape> parseSizes(std::string_view spec);

// One layout: nn, nt, tn or tt; throws UsageError naming the text.
Layout parseLayout(std::string_view text);
// "nn,tn": layouts in the order given, duplicates dropped; throws UsageError with one line naming
// the bad item.
std::vector<Layout> parseLayouts(std::string_view spec);
// A batch count: a whole number from 1 to kMaxBatch; throws UsageError naming the text.
long long parseBatch(std::string_view text);
inline constexpr long long kMaxBatch = 2147483647;  // kernels count batches in an int

// Every size in every layout (sizes outer, layouts inner), each with `batch` products per call;
// duplicates dropped (first kept).
std::vector<GemmShape> shapesFor(const std::vector<GemmShape>& sizes, const std::vector<Layout>& layouts,
                                 long long batch);

// Device memory the tuner's worker needs for one problem (inputs, rotation copies, outputs, the
// verification reference and the padded, guarded copies the checks launch in), in bytes: every
// batch's share, with room between batches for the guards of the padded checks.
std::int64_t workingSetBytes(const GemmShape& s);

// Throws UsageError when a problem cannot fit in `deviceBytes` of GPU memory.
void checkFits(const std::vector<GemmShape>& shapes, std::int64_t deviceBytes, std::string_view gpuName);

}  // namespace gemmtune
