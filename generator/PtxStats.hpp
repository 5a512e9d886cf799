// PtxStats: the static instruction mix of a kernel's PTX — how many global loads, shared loads
// and stores, FMAs and barriers the code contains. FMAs per shared load is the figure that shows
// why register blocking (1D blocktiling) beats plain shared-memory tiling.
#pragma once

#include <string_view>

namespace gemmtune {

struct PtxStats {
  int ldGlobal = 0;
  int stGlobal = 0;
  int ldShared = 0;
  int stShared = 0;
  int fma = 0;       // fma.rn.f32
  int barSync = 0;   // bar.sync / barrier.sync
  int total = 0;     // every instruction line

  double fmaPerSharedLoad() const { return ldShared ? double(fma) / ldShared : 0.0; }
};

// Counts instructions as written in the PTX text (a loop body counts once).
PtxStats countPtx(std::string_view ptx);

}  // namespace gemmtune
