#include "SeenRecorder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "CacheKey.hpp"
#include "DbPath.hpp"
#include "NearestChoice.hpp"
#include "Planner.hpp"
#include "SpeedBound.hpp"

namespace gemmtune::library {

namespace {

std::string problemText(const db::ProblemKey& p) {
  return fmt::format("{}x{}x{} {} {} {}", p.m, p.n, p.k, p.layout, p.batch, p.betaClass);
}

}  // namespace

SeenRecorder::SeenRecorder(Sink sink, std::string where, Warnings& warnings, std::chrono::milliseconds period)
    : sink_(std::move(sink)), where_(std::move(where)), warnings_(warnings), period_(period), ownerPid_(getpid()) {}

SeenRecorder::~SeenRecorder() {
  // A child forked after the thread started has the thread's handle but not the thread (and
  // maybe a copy of a mutex the thread held, and a condition variable that counts the thread as
  // its waiter): no lock, no pthread call — the handle and the wake state are left to leak — and
  // no write: the counts up to the fork are the parent's, the child's own are dropped.
  if (ownerPid_ != getpid()) {
    if (thread_.joinable()) new std::thread(std::move(thread_));  // deliberately leaked
    (void)wake_.release();                                       // deliberately leaked
    return;
  }
  {
    std::lock_guard lock(wake_->mutex);
    wake_->stopping = true;
  }
  wake_->cv.notify_all();
  if (thread_.joinable()) thread_.join();
  flushQuietly();  // what the last calls counted
}

SeenCounter* SeenRecorder::counterFor(const GpuSpec& gpu, const db::ProblemKey& problem, double msPerCall) {
  std::lock_guard lock(entriesMutex_);
  std::string fingerprint = db::gpuFingerprint(gpu);
  auto key = std::make_pair(fingerprint, problemText(problem));
  if (auto it = index_.find(key); it != index_.end()) return &it->second->counter;
  Entry& e = entries_.emplace_back();
  e.gpu = gpu;
  e.fingerprint = std::move(fingerprint);
  e.problem = problem;
  e.msPerCall = msPerCall;
  index_.emplace(std::move(key), &e);
  if (!thread_.joinable() && !noThread_) {
    try {
      thread_ = std::thread([this] { loop(); });
    } catch (const std::system_error& e) {  // no thread: counts are written at destruction only
      noThread_ = true;
      warnings_.once("seen-recorder-thread", fmt::format("recording untuned shapes without a background thread ({}): "
                                                         "written when the Library is destroyed",
                                                         e.what()));
    }
  }
  return &e.counter;
}

SeenCounter* SeenRecorder::counterFor(const GpuSpec& gpu, const GemmShape& asked, const Plan& plan) {
  if (plan.choice.match == Match::exact) return nullptr;
  return counterFor(gpu, db::problemKeyOf(asked),
                    estimatedCallMs(plan.predictedMs, plan.choice.measuredGflops, gpu, asked));
}

void SeenRecorder::flush() {
  std::lock_guard flushing(flushMutex_);
  // Per GPU fingerprint: the GPU and the records of its problems that were called.
  std::map<std::string, std::pair<const GpuSpec*, std::vector<db::SeenRecord>>> byGpu;
  {
    std::lock_guard lock(entriesMutex_);
    for (Entry& e : entries_) {
      const std::uint64_t calls = e.counter.calls.exchange(0, std::memory_order_relaxed);
      if (calls == 0) continue;
      auto& [gpu, records] = byGpu[e.fingerprint];
      gpu = &e.gpu;  // entries are never erased or changed: safe to read after the lock
      records.push_back({e.problem, static_cast<std::int64_t>(calls), static_cast<double>(calls) * e.msPerCall});
    }
  }
  for (const auto& [fingerprint, group] : byGpu) {
    std::string why;
    try {
      sink_(*group.first, group.second);
      continue;
    } catch (const std::exception& e) {
      why = e.what();
    } catch (...) {
      why = "unknown error";
    }
    warnings_.once("seen-recorder", fmt::format("cannot record the shapes sgemm() served without a tuned row in {} "
                                                "({}); those counts are dropped (GEMMTUNE_RECORD_SEEN=0 turns "
                                                "recording off)",
                                                where_, why));
  }
}

void SeenRecorder::flushQuietly() noexcept {
  try {
    flush();
  } catch (...) {  // out of memory while gathering: those counts are lost, never the program
  }
}

void SeenRecorder::loop() {
  std::unique_lock lock(wake_->mutex);
  while (!wake_->cv.wait_for(lock, period_, [this] { return wake_->stopping; })) {
    lock.unlock();
    flushQuietly();  // an exception here would end the thread and the program (std::terminate)
    lock.lock();
  }
}

SeenRecorder::Sink storeSink(std::string location) {
  // The connection outlives one flush; shared because std::function copies its target.
  auto store = std::make_shared<std::unique_ptr<db::ResultStore>>();
  return [location = std::move(location), store](const GpuSpec& gpu, std::span<const db::SeenRecord> records) {
    try {
      if (!*store) {
        db::OpenOptions options{db::OpenMode::ReadWrite, db::OpenCheck::Header};
        options.busyTimeoutMs = 5000;  // a tuner's write is short; longer would delay the Library's destruction
        options.migrate = false;
        *store = db::openStore(db::resolveDatabasePath(location).string(), options);
      }
      (*store)->recordSeen(gpu, records);
    } catch (...) {
      store->reset();  // opened again at the next flush: the server may be back, the file fixed
      throw;
    }
  };
}

bool recordingSeen(bool option, const char* env) {
  if (!option) return false;
  if (!env) return true;
  std::string value(env);
  for (auto& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return !(value == "0" || value == "false" || value == "off" || value == "no");
}

std::unique_ptr<SeenRecorder> seenRecorderFor(const std::string& userStore, bool option, Warnings& warnings) {
  if (!recordingSeen(option, std::getenv("GEMMTUNE_RECORD_SEEN"))) return nullptr;
  std::string where = userStore.empty() ? std::string("the user's database") : db::maskLocation(userStore);
  return std::make_unique<SeenRecorder>(storeSink(userStore), std::move(where), warnings);
}

double estimatedCallMs(double predictedMs, double measuredGflops, const GpuSpec& gpu, const GemmShape& asked) {
  if (predictedMs > 0) return predictedMs;
  const double flops = asked.flops();
  if (measuredGflops > 0) return flops / (measuredGflops * 1e6);
  // The family model's roofline: FLOPs at the FP32 peak against the operands' bytes at the memory
  // bandwidth, plus a launch; a spec without either rate: a nominal 1 TFLOP/s.
  const double ms = rooflineMs(db::problemKeyOf(asked), serving::machineRatesOf(gpu));
  return serving::machineRatesOf(gpu).peakGflops > 0 ? ms : flops / 1e9;
}

}  // namespace gemmtune::library
