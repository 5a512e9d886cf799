// ProblemLayout: what the worker allocates and generates for one Problem — pure arithmetic, so
// the tuner can check a size fits in GPU memory before any GPU work, and can plan every layout
// the verification launches in (checkProblems) without asking the worker.
#pragma once

#include <cstdint>
#include <vector>

#include "LaunchPlan.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

// Where one verification layout puts the operands. A padded layout rounds leading dimensions up
// to a multiple of 4 floats and pads them by multiples of 4 more, and offsets base pointers by
// multiples of 16 bytes, so float4 forms stay runnable (at odd sizes too, with ragged rows) while
// kernels that assume packed rows fail. The three pads differ so that a kernel mixing up lda, ldb
// and ldc fails too.
struct CheckGeometry {
  const char* name;
  int padA, padB, padC;  // floats added to lda = K, ldb = N, ldc = N (rounded up to 4 first where > 0)
  int offsetBytes;       // A and B from their allocations; C from the end of its front guard

  // Packed A and B are the problem's own inputs; any other geometry needs copies laid out its way.
  constexpr bool packed() const { return padA == 0 && padB == 0 && padC == 0 && offsetBytes == 0; }
};
inline constexpr CheckGeometry kCheckGeometries[] = {{"packed", 0, 0, 0, 0}, {"padded", 4, 8, 12, 16}};

struct ProblemLayout {
  long long aElems = 0, bElems = 0, cElems = 0;
  // Small-integer inputs lie in [-intRange, intRange]: at most 8, less when K is so large that
  // K·range² + 2·range could exceed 2^24 and FP32 partial sums would stop being exact.
  int intRange = 8;
  // A/B/C sets timing cycles through so that together they exceed twice the L2 cache: a small
  // problem otherwise runs from L2 and times faster than it will in real use.
  int rotationCopies = 1;
  // Peak device memory for the problem: both verification sets with their references and |A||B|,
  // the scratch C, the extra rotation copies, the guarded C and padded operands of the
  // verification layouts, and the |A|,|B| temporaries used while preparing.
  std::uint64_t deviceBytes = 0;

  static constexpr int kMaxRotationCopies = 64;
  // Canaries before and after every verification C. 256 floats (1 KiB) keep a packed C at the
  // allocation's 256-byte alignment and catch stray writes just outside it.
  static constexpr long long kGuardElems = 256;
  // Throws UsageError for non-positive sizes or dimensions above INT_MAX.
  static ProblemLayout of(const Problem& p, long long l2Bytes);

  // The problem a verification launch poses in geometry `g`: sizes, leading dimensions, pointer
  // alignment (allocations are at least 256-byte aligned) and beta class.
  static GemmProblem checkProblem(const Problem& p, const CheckGeometry& g, bool betaZero);
  // Every problem the verification launches, one per geometry and beta class (the checks use
  // beta = 0 and beta = 2): the parent sends the candidate's plan for each.
  static std::vector<GemmProblem> checkProblems(const Problem& p);
  // Floats allocated for an operand of `rows` rows of `ld` floats, `offsetBytes` into the allocation.
  static long long operandElems(long long rows, long long ld, int offsetBytes);
  // Floats allocated for C in geometry `g`, the guards on both sides included.
  static long long guardedCElems(const Problem& p, const CheckGeometry& g);
};

}  // namespace gemmtune
