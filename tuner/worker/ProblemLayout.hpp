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
// and ldc fails too. A and B are stored as the problem's layout says (op T: transposed).
//
// Batched problems only: the gaps (floats, multiples of 4 to keep every batch 16-byte aligned)
// lie between one batch's matrix and the next — NaN between A's and B's, so a kernel reading
// across a batch boundary fails, canaries between C's. The pointer-array layout hands every batch
// its own pointer: the matrices lie in reverse batch order at uneven distances (arraySlot), so a
// kernel that adds a stride to the first pointer fails; it exists for batched problems only.
struct CheckGeometry {
  const char* name;
  int padA, padB, padC;  // floats added to the stored row lengths (rounded up to 4 first where > 0)
  int offsetBytes;       // A and B from their allocations; C from the end of its front guard
  int gapA, gapB, gapC;  // floats between consecutive batches (strided)
  bool pointerArrays;
};
inline constexpr CheckGeometry kCheckGeometries[] = {
    {"packed", 0, 0, 0, 0, 0, 0, 0, false},
    {"padded", 4, 8, 12, 16, 16, 32, 256, false},
    {"pointer arrays", 0, 0, 0, 0, 0, 0, 0, true},
};

// Where one operand's matrices lie in its allocation, in floats.
struct OperandPlacement {
  long long rows = 0, cols = 0, ld = 0;  // one matrix as stored
  long long count = 1;                   // matrices (the batch)
  long long front = 0;                   // floats before the first matrix (strided) or slot (pointer arrays)
  long long stride = 0;                  // strided: floats from one matrix to the next (0 for one matrix)
  long long slot = 0;                    // pointer arrays: floats per slot (ProblemLayout::arraySlot); 0 when strided
  long long allocElems = 0;              // the allocation, guards and gaps included

  long long start(long long b) const;    // where batch b's matrix begins
  long long span() const { return rows * ld; }  // floats from a matrix's start to its end (padding included)
};

// Every operand of a verification layout. An operand the layout does not store itself (packed,
// not transposed) is the problem's own input (starts b·rows·cols of a packed allocation).
struct CheckPlacement {
  OperandPlacement a, b, c;
  bool ownA = true, ownB = true;
};

struct ProblemLayout {
  // Floats of A, B and C over all batches, packed.
  long long aElems = 0, bElems = 0, cElems = 0;
  // Small-integer inputs lie in [-intRange, intRange]: at most 8, less when K is so large that
  // K·range² + 2·range could exceed 2^24 and FP32 partial sums would stop being exact.
  int intRange = 8;
  // A/B/C sets timing cycles through so that together they exceed twice the L2 cache: a small
  // problem otherwise runs from L2 and times faster than it will in real use.
  int rotationCopies = 1;
  // Peak device memory for the problem: both verification sets with their references and |A||B|,
  // the scratch C, the extra rotation copies, the guarded C, own operands and pointer arrays of
  // the verification layouts, and the |A|,|B| temporaries used while preparing.
  std::uint64_t deviceBytes = 0;

  static constexpr int kMaxRotationCopies = 64;
  // Canaries before and after every verification C. 256 floats (1 KiB) keep a packed C at the
  // allocation's 256-byte alignment and catch stray writes just outside it.
  static constexpr long long kGuardElems = 256;
  // Pointer arrays: floats of NaN after every A and B matrix, of which the matrix's own offset
  // (arraySlot) takes up to 29; C's slots end in kGuardElems canaries instead.
  static constexpr long long kArraySlack = 32;
  // Throws UsageError for non-positive sizes or batches, or dimensions above INT_MAX.
  static ProblemLayout of(const Problem& p, long long l2Bytes);

  // The layouts the verification of `p` runs in: packed and padded; pointer arrays when batched.
  static std::vector<const CheckGeometry*> geometries(const Problem& p);
  // Where geometry `g` puts every batch of A, B and C.
  static CheckPlacement place(const Problem& p, const CheckGeometry& g);
  // The problem a verification launch poses in geometry `g`: sizes, layout, leading dimensions,
  // batch strides or pointer arrays, pointer alignment (allocations are at least 256-byte
  // aligned) and beta class.
  static GemmProblem checkProblem(const Problem& p, const CheckGeometry& g, bool betaZero);
  // Every problem the verification launches, one per geometry and beta class (the checks use
  // beta = 0 and beta = 2): the parent sends the candidate's plan for each.
  static std::vector<GemmProblem> checkProblems(const Problem& p);
  // Pointer arrays: batch b's matrix lies in slot `batch - 1 - b` (reverse order), `first` floats
  // into it; the offsets (1 to 29) grow unevenly from batch to batch.
  struct Slot {
    long long index, first;
  };
  static Slot arraySlot(long long batch, long long b);
};

}  // namespace gemmtune
