// ProblemData: the device-side state of one Problem — inputs of both verification sets, their
// cuBLAS (pedantic FP32) references and |A||B| products, the guarded C and padded operands of each
// verification layout, the scratch C timing writes into, and the rotation copies timing cycles
// through. Built once per problem, reused by every candidate.
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

// Where a check's C lies: inside an allocation whose every other word holds kGuardCanary.
struct GuardedC {
  CUdeviceptr alloc = 0;
  long long allocElems = 0;
  long long front = 0;  // words before C
};

// One verification check in one layout: inputs, how C starts, what it must equal, and how strictly.
struct Check {
  const char* name;      // "small integers, beta=0"
  const char* layout;    // CheckGeometry::name
  SgemmArgs args;        // as launched: the layout's leading dimensions and pointers
  CUdeviceptr packedA, packedB;  // the inputs, packed; copied into args.a / args.b first when those differ
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
  // The three checks of the verification in every layout (kCheckGeometries), in order.
  std::vector<Check> checks() const;
  // The three checks in the packed layout alone.
  std::vector<Check> packedChecks() const;
  // Timing launch `rep`: normal-distributed inputs of rotation copy rep % rotationCopies,
  // alpha = 1, beta = problem().beta.
  SgemmArgs timingArgs(int rep) const;
  CUdeviceptr scratchC() const { return scratch_.ptr(); }

 private:
  struct Set {
    DeviceBuffer A, B, C;
  };
  // One verification layout's buffers: C with its guards, and A and B unless the layout is packed.
  struct LayoutBuffers {
    const CheckGeometry* geometry;
    DeviceBuffer A, B, C;
  };
  SgemmArgs args(CUdeviceptr A, CUdeviceptr B, CUdeviceptr C, float alpha, float beta) const;
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
