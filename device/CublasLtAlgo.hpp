// CublasLtAlgo: one configuration of one of cuBLASLt's matmul algorithms (the algorithm id and the
// tile, K slices, reduction, swizzle, stages, custom option, inner and cluster shape it runs with),
// named so that a result row can carry it and the library can run it again. cuBLAS's own SGEMM call
// ran the first configuration cuBLASLt's heuristic returns (measured on an H100, cuBLAS 13.1);
// others can be faster for a given problem (at 1024³: 1.05–1.12× cuBLAS's call, every layout).
// No CUDA here: the names are parsed and written on machines without a GPU.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gemmtune {

struct CublasLtAlgo {
  int id = 0;            // CUBLASLT_ALGO_CONFIG_ID
  int tile = 0;          // CUBLASLT_ALGO_CONFIG_TILE_ID (cublasLtMatmulTile_t)
  int splitK = 1;        // CUBLASLT_ALGO_CONFIG_SPLITK_NUM
  int reduction = 0;     // CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME (0 when splitK is 1)
  int swizzle = 0;       // CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING
  int stages = 0;        // CUBLASLT_ALGO_CONFIG_STAGES_ID (cublasLtMatmulStages_t)
  int custom = 0;        // CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION
  int innerShape = 0;    // CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID
  int clusterShape = 0;  // CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID

  // "lt55_t18_k2_r2_w0_s31_c0_i0_g0": every field, in this order.
  std::string name() const;
  // The configuration `name` writes; nullopt for any other text (a missing, extra or negative
  // field, a split of less than 1).
  static std::optional<CublasLtAlgo> parse(std::string_view name);

  bool operator==(const CublasLtAlgo&) const = default;
};

// The first `most` of `fastestFirst` (indices into `algos`), one per configuration but for its
// custom option: a variant may run its default's kernel, or nearly, and would otherwise take the
// places of the next distinct configurations.
std::vector<std::size_t> fastestDistinct(const std::vector<CublasLtAlgo>& algos,
                                         const std::vector<std::size_t>& fastestFirst, std::size_t most);

}  // namespace gemmtune
