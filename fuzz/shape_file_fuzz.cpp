// Fuzz target: the workload file of `tune --shapes` (tuner/ShapeFile). Every accepted problem has
// positive int dimensions, a batch from 1 to kMaxBatch and a positive finite weight; no problem
// (size, layout and batch) appears twice; lines ascend; and each written back as a line
// `MxNxK LAYOUT batch=N WEIGHT` parses to the same problem.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>

#include "gemmtune/Errors.hpp"
#include "FuzzTarget.hpp"
#include "ShapeFile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gemmtune::fuzz::require;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto shapes = gemmtune::parseShapeText(text, "fuzz.txt");
    int lastLine = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const auto& w = shapes[i];
      for (long long d : {w.shape.M, w.shape.N, w.shape.K})
        require(d >= 1 && d <= std::numeric_limits<int>::max(), "a parsed dimension is a positive int");
      require(w.shape.batch >= 1 && w.shape.batch <= gemmtune::kMaxBatch, "a parsed batch is within its bounds");
      require(std::isfinite(w.weight) && w.weight > 0, "a weight is positive and finite");
      require(w.line > lastLine, "problems keep the order of their first lines");
      lastLine = w.line;
      for (size_t j = 0; j < i; ++j) require(!(shapes[j].shape == w.shape), "a problem appears once");
      const std::string line = fmt::format("{}x{}x{} {} batch={} 1\n", w.shape.M, w.shape.N, w.shape.K,
                                           w.shape.layout.text(), w.shape.batch);
      require(gemmtune::parseShapeText(line, "back.txt").front().shape == w.shape, "a problem's line parses back to it");
    }
  } catch (const gemmtune::UsageError&) {
  }
  return 0;
}
