// GemmShape and Layout: which GEMM is tuned, keyed and served — its sizes, how A and B are stored
// (op(A), op(B) ∈ {N, T}) and how many independent products one call computes (batch). The tuner's
// sizes, the results rows and the library's lookups all name a problem this way; GemmProblem
// (GemmProblem.hpp) adds what one call's memory looks like.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace gemmtune {

// Row-major convention, as the templates compute: op(A) = N stores A as M rows of K (lda ≥ K),
// op(A) = T stores it as K rows of M (lda ≥ M); op(B) = N stores B as K rows of N (ldb ≥ N),
// op(B) = T as N rows of K (ldb ≥ K). Named "nn", "nt", "tn", "tt" (op(A) first).
struct Layout {
  bool transA = false, transB = false;
  bool operator==(const Layout&) const = default;

  std::string text() const;                               // "nn", "nt", "tn", "tt"
  static std::optional<Layout> parse(std::string_view text);  // exactly one of those four
  static const std::array<Layout, 4>& all();              // nn, nt, tn, tt
};

struct GemmShape {
  long long M = 0, N = 0, K = 0;
  Layout layout{};
  long long batch = 1;  // independent products of M x N x K per call
  bool operator==(const GemmShape&) const = default;
  // "4096" when square, else "4096x1024x512"; then " tn" unless nn, then " batch 64" when batched.
  std::string str() const;
  double flops() const { return 2.0 * double(M) * double(N) * double(K) * double(batch); }
};

}  // namespace gemmtune
