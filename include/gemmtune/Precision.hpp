// PrecisionClass: the arithmetic a kernel family's inner loop runs on, which decides who may be
// served its kernels and the peak its rows are held to (serving/SpeedBound).
#pragma once

#include <cctype>
#include <optional>
#include <string_view>

namespace gemmtune {

// strict: FP32 multiply-adds on the SIMT pipes, as cuBLAS SGEMM in its default math (every family
// but tf32x3, fp16x3 and wgmmafp16x3; the default everywhere). faithful: FP32 products emulated on tensor cores (3xTF32, 3xFP16) at
// about FP32 accuracy (every row verified as any other) — tuned with `tune --precision faithful`, served only where the caller
// allows it (Library::Options::precision, `query --precision`). Ordered: a caller allowing a class
// allows the ones before it.
enum class PrecisionClass { strict, faithful };
inline constexpr PrecisionClass kPrecisionClasses[] = {PrecisionClass::strict, PrecisionClass::faithful};

// The class's name where users write one (`--precision`, $GEMMTUNE_PRECISION): "strict", "faithful".
// A switch, so that a new class without a name is a compiler warning.
inline const char* precisionName(PrecisionClass precision) {
  switch (precision) {
    case PrecisionClass::strict: return "strict";
    case PrecisionClass::faithful: return "faithful";
  }
  return "strict";
}

// The class named `name`, in any letter case; nullopt for any other text.
inline std::optional<PrecisionClass> precisionNamed(std::string_view name) {
  for (PrecisionClass p : kPrecisionClasses) {
    const std::string_view known = precisionName(p);
    bool same = name.size() == known.size();
    for (std::size_t i = 0; same && i < name.size(); ++i)
      same = std::tolower(static_cast<unsigned char>(name[i])) == known[i];
    if (same) return p;
  }
  return std::nullopt;
}

}  // namespace gemmtune
