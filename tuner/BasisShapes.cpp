#include "BasisShapes.hpp"

#include <algorithm>

namespace gemmtune {

// Tiles, for the reasons below: `thin` 8×128 to 128×8 (BM·BN ≤ 64·64, BK 32, split-K 1–16),
// `cutlass` 32–256 a side (BK 8, split-K 1–8), the other families 32–128 a side. An H100 has
// 132 SMs. Every shape takes a few milliseconds of GPU time at most per launch; what costs is the
// fixed part of each timing (warm-up, verification, ≥ 5 repetitions), so the list stays short.
const std::vector<BasisShape>& basisShapes() {
  static const std::vector<BasisShape> shapes{
      {{16, 4096, 4096}, "skinny M",
       "one tile row for every family; a 128-wide tile makes 32 blocks for 132 SMs, so only split-K "
       "fills the GPU (issue 28: all 27 skinny shapes went to a cutlass 64x128 tile, at 0.56x cuBLAS)"},
      {{4096, 16, 4096}, "skinny N",
       "the mirror, not the same traffic: in row-major nn, B's 16 columns are 64-byte rows and A is read whole"},
      {{1, 4096, 4096}, "GEMV (M = 1)",
       "memory-bound: B (64 MB) read once for one row of C; every tile row but one is padding"},
      {{4096, 1, 4096}, "GEMV (N = 1)", "memory-bound the other way: A read once, B one column"},
      {{16, 16, 2048}, "tiny M and N",
       "one or two tiles whatever the tile, so only K slices fill the GPU, and each block's k loop waits on its "
       "loads: measured on an H100, thin's 8x32 and 16x16 tiles ran 1.2-1.3x cuBLAS at such shapes, its 32x64 tile "
       "0.5-0.6x"},
      {{512, 512, 8192}, "long K, few tiles",
       "16 tiles of 128x128 (64 of 64x64) for 132 SMs: split-K 8-16 decides; the wave model's split-K 1 "
       "lost such mid-size long-K shapes to cuBLAS"},
      {{64, 2048, 4096}, "skinny M at M = 64",
       "the bound of the issue's skinny class: 64x128 tiles make 16 blocks, 16x64 tiles 128; where thin and "
       "the large tiles cross"},
      {{2000, 40, 3001}, "skinny N, ragged",
       "no tile divides N = 40 but 8 wide, none K = 3001: every family's guarded form, partial tiles on two sides"},
      {{1000, 1500, 777}, "ragged",
       "mid-size with no tile dividing N = 1500 or K = 777 (odd): guarded forms and partial tiles, as most "
       "shapes of a real program"},
      {{1024, 1024, 8192}, "long K",
       "64 tiles of 128x128 fill half the SMs once: split-K 2 against 1; M and N as the requested 1024, so "
       "the model sees K alone change"},
      {{4096, 4096, 32}, "small K",
       "one 32-deep k tile for thin, four for cutlass: the prologue and C's write (64 MB) dominate, memory-bound"},
  };
  return shapes;
}

std::vector<GemmShape> basisShapesFor(const std::vector<Layout>& layouts, const std::vector<GemmShape>& requested) {
  std::vector<GemmShape> out;
  for (const BasisShape& b : basisShapes())
    for (const Layout& layout : layouts) {
      GemmShape s = b.shape;
      s.layout = layout;
      const bool tunedAlready = std::find(requested.begin(), requested.end(), s) != requested.end();
      if (!tunedAlready && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
  return out;
}

std::string basisRegimeOf(const GemmShape& shape) {
  for (const BasisShape& b : basisShapes())
    if (b.shape.M == shape.M && b.shape.N == shape.N && b.shape.K == shape.K) return b.regime;
  return "";
}

bool isSkinnyShape(const GemmShape& shape) { return shape.M <= 64 || shape.N <= 64; }

}  // namespace gemmtune
