#include "SizeDistance.hpp"

#include <cmath>

namespace gemmtune {

double sizeDistance(const db::ProblemKey& a, const db::ProblemKey& b) {
  // Measured on an H100: 4096x1024x512 ran 0.86x cuBLAS with the 1024³ winner (64×64 tiles, the
  // nearest by summed log ratios) and 1.00x with the 2048³ winner (128×128), whose output area
  // it shares. Area sets the tile count and so the waves; depth and aspect matter less.
  auto lg = [](double x, double y) { return std::log2(x / y); };
  const double area = lg(double(a.m) * double(a.n), double(b.m) * double(b.n));
  const double depth = lg(double(a.k), double(b.k));
  const double aspect = lg(double(a.m) / double(a.n), double(b.m) / double(b.n));
  return std::abs(area) + 0.5 * std::abs(depth) + 0.25 * std::abs(aspect);
}

}  // namespace gemmtune
