// ThreadPool: a fixed set of workers running submitted jobs in FIFO order; futures carry results
// and exceptions back. Destruction drops the jobs not yet started and joins the running ones.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace gemmtune {

class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    if (threads < 1) threads = 1;
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { run(); });
  }
  ~ThreadPool() {
    cancelPending();
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // `first`: ahead of every job still waiting (something is waiting for this one).
  template <class F>
  auto submit(F&& f, bool first = false) -> std::future<decltype(f())> {
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::forward<F>(f));
    auto fut = task->get_future();
    {
      std::lock_guard lock(mutex_);
      if (first) jobs_.emplace_front([task] { (*task)(); });
      else jobs_.emplace_back([task] { (*task)(); });
    }
    wake_.notify_one();
    return fut;
  }

  int size() const { return static_cast<int>(workers_.size()); }

  // Drops the jobs not yet started (their futures report std::future_errc::broken_promise);
  // returns how many. Jobs already running finish.
  size_t cancelPending() {
    std::deque<std::function<void()>> dropped;
    {
      std::lock_guard lock(mutex_);
      dropped.swap(jobs_);
    }
    return dropped.size();
  }

 private:
  void run() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

}  // namespace gemmtune
