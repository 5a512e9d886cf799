// SeenRecorder: the library's record of the problems sgemm() served without an exact row (a
// nearest size or the built-in default), written into the user's database for `gemmtune seen` and
// `gemmtune tune --seen` (docs/library.md, "Recorded shapes").
//
// Off the hot path: sgemm() only adds one to its problem's counter (a relaxed atomic add on a
// counter its prepared launch points to: no lock, no allocation, no I/O). A background thread,
// started with the first counter, hands the counts to a sink every period and once more when the
// recorder is destroyed. A failing sink (a read-only file, a damaged database, a server away) is
// warned about once and its counts are dropped: recording never fails or stalls a call.
//
// Time: the library does not synchronise, so a call's time is not measured but estimated once per
// problem, when its launch is prepared (estimatedCallMs); a row's time is calls × that estimate.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <sys/types.h>
#include <string>
#include <thread>
#include <utility>

#include "GemmShape.hpp"
#include "ResultStore.hpp"
#include "Warnings.hpp"
#include "gemmtune/GpuSpec.hpp"

namespace gemmtune::library {

struct Plan;

// One problem's calls since the last flush.
struct SeenCounter {
  std::atomic<std::uint64_t> calls{0};
  void count() noexcept { calls.fetch_add(1, std::memory_order_relaxed); }
};

class SeenRecorder {
 public:
  // Where counts go: one call per GPU and flush with that GPU's records. Throws when it fails.
  using Sink = std::function<void(const GpuSpec& gpu, std::span<const db::SeenRecord> records)>;
  static constexpr std::chrono::milliseconds kPeriod{10000};

  // `where` names the sink's destination in the warning about a failure.
  SeenRecorder(Sink sink, std::string where, Warnings& warnings, std::chrono::milliseconds period = kPeriod);
  ~SeenRecorder();  // stops the thread, then flushes once more
  SeenRecorder(const SeenRecorder&) = delete;
  SeenRecorder& operator=(const SeenRecorder&) = delete;

  // The counter of `problem` on `gpu`, made on first use; `msPerCall` is one call's estimated time
  // (the first estimate given for a problem is kept). Allocates: for when a launch is prepared.
  SeenCounter* counterFor(const GpuSpec& gpu, const db::ProblemKey& problem, double msPerCall);
  // The counter for the launch of `plan` at `asked`; nullptr when the plan is an exact row.
  SeenCounter* counterFor(const GpuSpec& gpu, const GemmShape& asked, const Plan& plan);
  // Hands what was counted since the last flush to the sink; on failure warns once and drops it.
  void flush();

 private:
  struct Entry {
    GpuSpec gpu;
    std::string fingerprint;
    db::ProblemKey problem;
    double msPerCall = 0;
    SeenCounter counter;
  };
  void loop();
  void flushQuietly() noexcept;  // flush(), whatever it throws swallowed (the thread and the destructor)

  Sink sink_;
  std::string where_;
  Warnings& warnings_;
  const std::chrono::milliseconds period_;
  const pid_t ownerPid_;  // the process that made it: a forked child has the thread's handle, not the thread

  std::mutex entriesMutex_;    // counterFor() against flush(); never taken by a counted call
  std::deque<Entry> entries_;  // never erased: launches keep pointers to their counters
  std::map<std::pair<std::string, std::string>, Entry*> index_;  // (fingerprint, problem text)
  std::mutex flushMutex_;      // one flush at a time

  // What the thread waits on, on the heap so that a forked child can leak it: the child's copy of a
  // condition variable the parent's thread waited on still counts that waiter, and destroying it
  // (glibc's pthread_cond_destroy waits for its waiters) would hang the child forever.
  struct Wake {
    std::mutex mutex;
    std::condition_variable cv;
    bool stopping = false;
  };
  std::unique_ptr<Wake> wake_ = std::make_unique<Wake>();
  std::thread thread_;  // started with the first counter
  bool noThread_ = false;  // the thread could not be started: flushed at destruction only
};

// A sink that writes to the store at `location` (the user's database: a path, sqlite:PATH or
// postgresql://...; empty: $GEMMTUNE_DB, else the XDG default), opened for writing at the first
// flush with something to write and kept open. A missing SQLite file is created, as `gemmtune
// tune` would; a store of an older schema is not upgraded (the library leaves that to a gemmtune
// command) and a failed store is opened again at the next flush.
SeenRecorder::Sink storeSink(std::string location);

// Whether the library records: Options::recordSeen, unless $GEMMTUNE_RECORD_SEEN (`env`, null when
// unset) is 0, false, off or no.
bool recordingSeen(bool option, const char* env);

// The recorder of a Library whose user database is `userStore` (as storeSink takes it), or null
// when recording is off (recordingSeen with the process's environment).
std::unique_ptr<SeenRecorder> seenRecorderFor(const std::string& userStore, bool option, Warnings& warnings);

// One call's estimated time in ms: the lookup's predicted time at the asked size (`predictedMs`,
// nearest-size answers) when there is one; else the asked FLOPs at the rate measured at the
// nearest size (`measuredGflops`); else (the built-in default) the GPU's roofline: the larger of the
// FLOPs at the FP32 peak and the operands' bytes at the memory bandwidth, a lower bound.
double estimatedCallMs(double predictedMs, double measuredGflops, const GpuSpec& gpu, const GemmShape& asked);

}  // namespace gemmtune::library
