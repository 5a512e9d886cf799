// runWorker: the body of the hidden `gemmtune worker --gpu N` subcommand. Speaks the WorkerWire
// protocol on stdin/stdout until "shutdown" or end of input; exits at once (code 3) after a
// sticky CUDA error, because a poisoned context cannot be recovered in-process.
#pragma once

namespace gemmtune {

inline constexpr int kWorkerExitFatal = 3;

// Returns the process exit code (0 after shutdown or end of input).
int runWorker(int gpuIndex);

}  // namespace gemmtune
