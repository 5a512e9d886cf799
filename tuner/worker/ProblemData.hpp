// ProblemData: the device-side state of one Problem — inputs of both verification sets (the
// logical M×K A and K×N B, different in every batch), their cuBLAS (pedantic FP32) references
// and |A||B| products, the guarded C, own operands and pointer arrays of each verification
// layout, the scratch C timing writes into, and the rotation copies timing cycles through.
// Built once per problem, reused by every candidate.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <vector>

#include "Cublas.hpp"
#include "DeviceBuffer.hpp"
#include "GpuContext.hpp"
#include "HelperKernels.hpp"
#include "LoadedKernel.hpp"
#include "ProblemLayout.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {

// A 32-bit pattern no kernel result takes: a signalling NaN (FP arithmetic only ever yields quiet
// NaNs) with a payload of its own. Guards and padding columns hold it and are compared as bits.
inline constexpr std::uint32_t kGuardCanary = 0x7FBADBADu;

// Where a check's C lies: every batch's matrix inside one allocation whose every other word holds
// kGuardCanary.
struct GuardedC {
  CUdeviceptr alloc = 0;
  OperandPlacement place;  // where each batch's C begins, in floats from `alloc`
};

// One verification check in one layout: inputs, how C starts, what it must equal, and how strictly.
struct Check {
  const char* name;      // "small integers, beta=0"
  const char* layout;    // CheckGeometry::name
  SgemmArgs args;        // as launched: the layout's leading dimensions, pointers and batches
  DeviceMatrix a, b, c;  // the operands as stored, every batch
  CUdeviceptr packedA, packedB;  // the logical inputs (M×K, K×N), packed batch after batch
  bool copyA, copyB;     // the layout stores A / B itself: copied in first (transposed where op T)
  CUdeviceptr initialC;  // packed; 0: C is filled with NaN first
  CUdeviceptr ref;
  CUdeviceptr absAB;     // |A||B| of the inputs, scaled by |alpha| in the tolerance
  bool exact;
  GuardedC out;
};

class ProblemData {
 public:
  // Throws UsageError when the problem does not fit in free GPU memory.
  ProblemData(const Problem& p, const GpuContext& gpu, const HelperKernels& k, const Cublas& blas);

  const Problem& problem() const { return problem_; }
  const ProblemLayout& layout() const { return layout_; }
  // The three checks of the verification in every layout (ProblemLayout::geometries), in order.
  std::vector<Check> checks() const;
  // The three checks in the packed layout alone.
  std::vector<Check> packedChecks() const;
  // Timing launch `rep`: normal-distributed inputs of rotation copy rep % rotationCopies, laid out
  // as GemmProblem::packed(problem().shape()) (op T reads the same floats as its transpose: timing
  // needs the shape, not the values), alpha = 1, beta = problem().beta.
  SgemmArgs timingArgs(int rep) const;
  CUdeviceptr scratchC() const { return scratch_.ptr(); }

 private:
  struct Set {
    DeviceBuffer A, B, C;
  };
  // One verification layout's buffers: C with its guards; A and B unless the inputs serve as
  // they are; the pointer arrays (A's, then B's, then C's) when the layout has them.
  struct LayoutBuffers {
    const CheckGeometry* geometry;
    CheckPlacement place;
    DeviceBuffer A, B, C, pointers;
  };
  // alpha·op(A)·op(B) + beta·C on packed operands stored as the problem's layout says.
  SgemmArgs args(CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, float alpha, float beta) const;
  void computeReferences(const GpuContext& gpu, const HelperKernels& k, const Cublas& blas);
  LayoutBuffers buffersFor(const CheckGeometry& g, const HelperKernels& k) const;
  std::vector<Check> checksIn(const LayoutBuffers& l) const;

  Problem problem_;
  ProblemLayout layout_;
  DeviceBuffer intA_, intB_, intC0_, intRef0_, intRef2_, intAbs_;
  DeviceBuffer normA_, normB_, normRef_, normAbs_;
  DeviceBuffer scratch_;
  std::vector<LayoutBuffers> layouts_;
  std::vector<Set> copies_;  // rotation copies 1..n-1 (copy 0 is normA_, normB_, scratch_)
};

// The random-normal check's alpha: a power of two keeps the reference exact to scale while still
// catching kernels that ignore alpha (the integer checks use alpha = 1).
inline constexpr float kNormalCheckAlpha = 0.5f;

}  // namespace gemmtune
