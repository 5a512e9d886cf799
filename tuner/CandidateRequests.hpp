// CandidateRequests: what the worker needs to verify and time one configuration, built in one
// place for every caller (the tuner's first timing, its finalist re-timing, head-to-head timing).
#pragma once

#include "CompileResult.hpp"
#include "Family.hpp"
#include "ResultStore.hpp"
#include "SizeSpec.hpp"
#include "WorkerProtocol.hpp"

namespace gemmtune {


// Timing's buffers are packed; the checks also run in padded layouts, and the worker has no
// families to plan those itself.
CandidateRequest requestFor(const Config& config, const CompileResult& compiled, const GemmShape& shape,
                            const TimingPolicy& timing);

// What a stored row holds of its compile: the cubin and every kernel's entry point (the row keeps
// them joined, main kernel first). A worker refuses a request that names no kernel.
CompileResult compiledOf(const db::ResultRecord& row);

// How long the worker may take for one request at `shape`: room for a kernel as slow as
// 0.5 TFLOP/s (hopeless on any GPU gemmtune targets), so only hung or pathological ones time out;
// `faithful` (the request's): room for building the problem's faithful data sets too.
double deadlineSecFor(const GemmShape& shape, const TimingPolicy& policy, bool faithful = false);

}  // namespace gemmtune
