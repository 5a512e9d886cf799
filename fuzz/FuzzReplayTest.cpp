// Runs one fuzz target without libFuzzer (any compiler, every CI run): each seed of its corpus,
// then seeded random mutations of the seeds — byte flips, insertions of bytes and tokens,
// deletions, duplications and splices. Deterministic for a given GEMMTUNE_FUZZ_SEED, so a failure
// reproduces; GEMMTUNE_FUZZ_RUNS sets how many mutated inputs (default 3000).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "FuzzTarget.hpp"

namespace {

std::vector<std::string> loadCorpus() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(GEMMTUNE_FUZZ_CORPUS))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());  // the same order everywhere, so seeds reproduce
  std::vector<std::string> out;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    out.push_back(s.str());
  }
  return out;
}

unsigned long envNumber(const char* name, unsigned long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoul(v, nullptr, 10) : fallback;
}

void run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
}

// Tokens that reach deeper than random bytes: grammar pieces, JSON structure, extreme numbers.
const std::vector<std::string> kTokens = {"..", ":", ",", "x", "=", "_", "_guarded", "{", "}", "[", "]", "\"", "\":",
                                          "null", "1e400", "-1", "0", "2147483647", "2147483648",
                                          "99999999999999999999", "\\u0000", "\n", "\x1b", "{\"a\":{\"a\":"};

std::string mutate(std::string s, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return n ? static_cast<std::size_t>(rng() % n) : 0; };
  const int steps = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < steps; ++i) {
    const std::size_t at = pick(s.size() + 1);
    switch (rng() % 6) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1: s.insert(at, 1, static_cast<char>(rng() % 256)); break;
      case 2: s.insert(at, kTokens[pick(kTokens.size())]); break;
      case 3: s.erase(at, pick(16) + 1); break;
      case 4:
        if (at < s.size()) s.insert(at, s.substr(at, pick(64) + 1));
        break;
      case 5: {
        const std::string& other = corpus[pick(corpus.size())];
        std::size_t from = pick(other.size() + 1);
        s = s.substr(0, at) + other.substr(from);
        break;
      }
    }
    if (s.size() > (1u << 20)) s.resize(1u << 20);
  }
  return s;
}

}  // namespace

// One suite per target (GEMMTUNE_FUZZ_SUITE, e.g. fuzz_params), so CTest names stay distinct.
#define FUZZ_TEST(suite, name) TEST(suite, name)

FUZZ_TEST(GEMMTUNE_FUZZ_SUITE, EverySeedOfTheCorpus) {
  auto corpus = loadCorpus();
  ASSERT_FALSE(corpus.empty()) << "no seeds in " << GEMMTUNE_FUZZ_CORPUS;
  for (const auto& seed : corpus) run(seed);
}

FUZZ_TEST(GEMMTUNE_FUZZ_SUITE, SeededMutationsOfTheCorpus) {
  auto corpus = loadCorpus();
  ASSERT_FALSE(corpus.empty());
  const unsigned long seed = envNumber("GEMMTUNE_FUZZ_SEED", 13);
  const unsigned long runs = envNumber("GEMMTUNE_FUZZ_RUNS", 3000);
  std::mt19937_64 rng(seed);
  for (unsigned long i = 0; i < runs; ++i) {
    SCOPED_TRACE(::testing::Message() << "GEMMTUNE_FUZZ_SEED=" << seed << " input " << i);
    run(mutate(corpus[i % corpus.size()], corpus, rng));
  }
}
