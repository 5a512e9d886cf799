// The --sizes grammar: ranges, steps, lists, MxNxK, and one-line errors for everything else.
#include <gtest/gtest.h>

#include "SizeSpec.hpp"
#include "gemmtune/Errors.hpp"

using namespace gemmtune;

namespace {
std::vector<std::string> strs(std::string_view spec) {
  std::vector<std::string> out;
  for (const auto& s : parseSizes(spec)) out.push_back(s.str());
  return out;
}
std::string error(std::string_view spec) {
  try {
    parseSizes(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(SizeSpec, Grammar) {
  EXPECT_EQ(strs("1024..8192"), (std::vector<std::string>{"1024", "2048", "4096", "8192"}));
  EXPECT_EQ(strs("1024..8192:1024").size(), 8u);
  EXPECT_EQ(strs("1024..8192:1024").back(), "8192");
  EXPECT_EQ(strs("1000,1536"), (std::vector<std::string>{"1000", "1536"}));
  EXPECT_EQ(strs("4096x1024x512"), (std::vector<std::string>{"4096x1024x512"}));
  EXPECT_EQ(strs("1000,1024..2048,7x17x1,1000"), (std::vector<std::string>{"1000", "1024", "2048", "7x17x1"}));
  EXPECT_EQ(strs("1..1"), (std::vector<std::string>{"1"}));
  EXPECT_EQ(strs("1000..5000"), (std::vector<std::string>{"1000", "2000", "4000"}));
  auto s = parseSizes("4096x1024x512")[0];
  EXPECT_EQ(s.M, 4096);
  EXPECT_EQ(s.N, 1024);
  EXPECT_EQ(s.K, 512);
  EXPECT_DOUBLE_EQ(s.flops(), 2.0 * 4096 * 1024 * 512);
  // Ranges inside MxNxK: one dimension swept, or several (every combination).
  EXPECT_EQ(strs("4096x1..16x4096"),
            (std::vector<std::string>{"4096x1x4096", "4096x2x4096", "4096x4x4096", "4096x8x4096", "4096x16x4096"}));
  EXPECT_EQ(strs("64..128x32x1000..3000:1000"),
            (std::vector<std::string>{"64x32x1000", "64x32x2000", "64x32x3000", "128x32x1000", "128x32x2000",
                                      "128x32x3000"}));
  EXPECT_EQ(strs("4096x1..4096x4096").size(), 13u);
}

TEST(SizeSpec, BadSpecsNameTheProblem) {
  EXPECT_EQ(error("0"), "bad size '0': sizes must be at least 1");
  EXPECT_EQ(error("-5"), "bad size '-5': sizes must be at least 1");
  EXPECT_EQ(error("8192..1024"), "bad size range '8192..1024': start 8192 is above end 1024");
  EXPECT_EQ(error("1e3"), "bad size '1e3': '1e3' is not a whole number (e.g. 4096, 1024..8192, 4096x1024x512)");
  EXPECT_EQ(error("abc"), "bad size 'abc': 'abc' is not a whole number (e.g. 4096, 1024..8192, 4096x1024x512)");
  EXPECT_EQ(error("1024..8192:0"), "bad size range '1024..8192:0': the step must be a whole number of at least 1");
  EXPECT_EQ(error("1024,"), "bad size list: empty item (check for a stray comma)");
  EXPECT_EQ(error(""), "no sizes given (e.g. --sizes 1024..8192)");
  EXPECT_EQ(error("4096x1024"), "bad size '4096x1024': write a problem as MxNxK, e.g. 4096x1024x512 or 4096x1..4096x4096");
  EXPECT_EQ(error("4096x8..1x16"), "bad size range '4096x8..1x16': start 8 is above end 1");
  EXPECT_EQ(error("1..4096:1x1..4096:1x1..2"), "bad size range '1..4096:1x1..4096:1x1..2': more than 10000 shapes");
  EXPECT_EQ(error("99999999999"), "bad size '99999999999': 99999999999 exceeds the largest dimension 2147483647");
  EXPECT_EQ(error("1..100000:1"), "bad size range '1..100000:1': more than 10000 sizes");
  EXPECT_EQ(error("1024 "), "bad size '1024 ': '1024 ' is not a whole number (e.g. 4096, 1024..8192, 4096x1024x512)");
}

TEST(SizeSpec, SizesThatDoNotFitTheGpuAreRefused) {
  auto shapes = parseSizes("8192,65536");
  EXPECT_NO_THROW(checkFits({shapes[0]}, 80LL << 30, "H100"));
  try {
    checkFits(shapes, 80LL << 30, "NVIDIA H100 80GB HBM3");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("size 65536 needs"), std::string::npos) << e.what();
  }
}
