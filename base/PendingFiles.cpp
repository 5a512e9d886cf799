#include "PendingFiles.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

namespace gemmtune {

namespace {

// Fixed slots of fixed-size paths: the handler may only read memory and call unlink().
constexpr int kSlots = 8;
constexpr std::size_t kMaxPath = 4096;
struct Slot {
  std::atomic<bool> used{false};
  char path[kMaxPath];
};
std::array<Slot, kSlots> slots;
std::mutex slotsMutex;
constexpr std::array<int, 4> kSignals = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
std::array<struct sigaction, kSignals.size()> previous;
bool installed = false;

void removePending(int sig) {
  for (auto& s : slots)
    if (s.used.load()) ::unlink(s.path);
  // Then die of the signal as if we had not been here (exit status 128 + sig for the shell).
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    if (kSignals[i] == sig) ::sigaction(sig, &previous[i], nullptr);
  ::raise(sig);
}

void installOnce() {
  if (installed) return;
  installed = true;
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    struct sigaction now {};
    ::sigaction(kSignals[i], nullptr, &previous[i]);
    // A signal the program ignores (SIGPIPE under some shells) stays ignored.
    if (previous[i].sa_handler == SIG_IGN) continue;
    now.sa_handler = removePending;
    sigemptyset(&now.sa_mask);
    now.sa_flags = SA_RESETHAND;
    ::sigaction(kSignals[i], &now, nullptr);
  }
}

}  // namespace

PendingFile::PendingFile(const std::filesystem::path& path) : path_(path) {
  std::lock_guard lock(slotsMutex);
  installOnce();
  const std::string text = path_.string();
  if (text.size() >= kMaxPath) return;  // removed by the destructor only
  for (int i = 0; i < kSlots; ++i) {
    if (slots[i].used.load()) continue;
    std::memcpy(slots[i].path, text.c_str(), text.size() + 1);
    slots[i].used.store(true);
    slot_ = i;
    return;
  }
}

PendingFile::~PendingFile() {
  std::filesystem::path unfinished = path_;
  keep();
  if (!unfinished.empty()) ::unlink(unfinished.c_str());
}

void PendingFile::keep() {
  std::lock_guard lock(slotsMutex);
  if (slot_ >= 0) slots[slot_].used.store(false);
  slot_ = -1;
  path_.clear();
}

}  // namespace gemmtune
