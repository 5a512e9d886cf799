#include "Timer.hpp"

#include <vector>

#include "CudaDriver.hpp"

namespace gemmtune {

namespace {

class Events {
 public:
  Events() {
    const auto& cu = CudaDriver::get();
    cu.check(cu.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    if (CUresult r = cu.cuEventCreate(&stop_, CU_EVENT_DEFAULT); r != CUDA_SUCCESS) {
      cu.cuEventDestroy(start_);
      cu.check(r, "cuEventCreate");
    }
  }
  ~Events() {
    const auto& cu = CudaDriver::get();
    cu.cuEventDestroy(start_);
    cu.cuEventDestroy(stop_);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;

  // Milliseconds the GPU spent on what `enqueue` put between the two events; with a gate, all of
  // it queued before the GPU starts the first event.
  template <typename F>
  double measure(CUstream stream, F&& enqueue, LaunchGate* gate = nullptr) {
    const auto& cu = CudaDriver::get();
    {
      const LaunchGate::Closed closed(gate);
      cu.check(cu.cuEventRecord(start_, stream), "cuEventRecord");
      enqueue();
      cu.check(cu.cuEventRecord(stop_, stream), "cuEventRecord");
    }
    cu.check(cu.cuEventSynchronize(stop_), "cuEventSynchronize");
    float ms = 0;
    cu.check(cu.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
    return ms;
  }

 private:
  CUevent start_ = nullptr, stop_ = nullptr;
};

}  // namespace

TimingResult timeLaunches(const TimingPolicy& policy, CUstream stream, LaunchGate& gate,
                          const std::function<void(int rep)>& launch) {
  Events ev;
  // Warm-up in doubling batches: cheap for microsecond kernels, one launch for slow ones. At least
  // one, also with no warm-up asked: it is ungated, so a first launch's one-time host work (a
  // workspace grown, the old one freed, which waits for the GPU) happens here, not while the gate
  // holds the stream.
  int rep = 0;
  double warmed = 0;
  for (int batch = 1; rep == 0 || warmed < policy.warmupMs; batch *= 2) {
    warmed += ev.measure(stream, [&] {
      for (int i = 0; i < batch; ++i) launch(rep++);
    });
  }

  TimingResult out;
  std::vector<double> samples;
  double total = 0;
  while (true) {
    const double ms = ev.measure(stream, [&] { launch(rep++); }, &gate);
    samples.push_back(ms);
    total += ms;
    out.summary = summarize(samples);
    TimingStop stop = timingStop(policy, out.summary, total);
    if (stop == TimingStop::Continue) continue;
    out.partial = stop == TimingStop::Slower;
    return out;
  }
}

}  // namespace gemmtune
