// The libFuzzer entry point every fuzz target defines. One input, no state kept between calls;
// a refusal (gemmtune::Error) is a normal outcome, anything else — a crash, a sanitizer report,
// another exception, a broken property — is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace gemmtune::fuzz {

// A property that must hold for every input: report and abort, so libFuzzer keeps the input.
inline void require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz property broken: %s\n", what);
  std::abort();
}

}  // namespace gemmtune::fuzz
