// `gemmtune worker --gpu N` (hidden): the GPU worker process the tuner starts, one per GPU. It
// speaks the WorkerWire protocol on stdin/stdout; people never run it by hand.
#include "CliContext.hpp"
#include "worker/WorkerMain.hpp"

namespace gemmtune::cli {

Action addWorkerCommand(CLI::App& app, CliContext&) {
  auto* sub = app.add_subcommand("worker", "GPU worker process (started by `gemmtune tune`)");
  sub->group("");  // hidden from --help
  auto gpu = std::make_shared<int>(0);
  sub->add_option("--gpu", *gpu, "GPU index as CUDA numbers them")->required()->check(CLI::NonNegativeNumber);
  return [gpu] { return runWorker(*gpu); };
}

}  // namespace gemmtune::cli
