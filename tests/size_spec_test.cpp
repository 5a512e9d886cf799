// The --sizes grammar: ranges, steps, lists, MxNxK, the --layouts and --batch every size is tuned
// with, the memory a problem needs, and one-line errors for everything else.
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
// The one line `parse` refuses `text` with, or "no error".
template <class Parse>
std::string refusal(Parse parse, std::string_view text) {
  try {
    parse(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}
std::string error(std::string_view spec) { return refusal(parseSizes, spec); }
std::string layoutsError(std::string_view spec) { return refusal(parseLayouts, spec); }
std::string batchError(std::string_view text) { return refusal(parseBatch, text); }
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

TEST(SizeSpec, LayoutsAndBatches) {
  const Layout nn{}, nt{false, true}, tn{true, false}, tt{true, true};
  EXPECT_EQ(parseLayouts("nn,nt,tn,tt"), (std::vector<Layout>{nn, nt, tn, tt}));
  EXPECT_EQ(parseLayouts("tn,nn,tn"), (std::vector<Layout>{tn, nn}));
  EXPECT_EQ(parseBatch("64"), 64);
  EXPECT_EQ(parseBatch("1"), 1);
  EXPECT_EQ(layoutsError("nn,xx"), "bad layout 'xx': write nn, nt, tn or tt (op(A) then op(B); t: stored transposed)");
  EXPECT_EQ(layoutsError("NT"), "bad layout 'NT': write nn, nt, tn or tt (op(A) then op(B); t: stored transposed)");
  EXPECT_EQ(layoutsError("nn,"), "bad layout list: empty item (check for a stray comma)");
  EXPECT_EQ(layoutsError(""), "no layouts given (e.g. --layouts nn,tn)");
  EXPECT_EQ(batchError("0"), "bad batch '0': a call computes at least 1 product");
  EXPECT_EQ(batchError("-3"), "bad batch '-3': a call computes at least 1 product");
  EXPECT_EQ(batchError("many"), "bad batch 'many': not a whole number (e.g. 64)");
  EXPECT_EQ(batchError("99999999999999999999"), "bad batch '99999999999999999999': at most 2147483647 products per call");
  EXPECT_EQ(batchError("2147483648"), "bad batch '2147483648': at most 2147483647 products per call");
}

// Each size in each layout (sizes outer), all with the batch; a size given twice is tuned once.
TEST(SizeSpec, EverySizeInEveryLayout) {
  std::vector<std::string> names;
  for (const auto& s : shapesFor(parseSizes("512,4096x1024x512,512"), parseLayouts("nn,tn"), 8)) names.push_back(s.str());
  EXPECT_EQ(names, (std::vector<std::string>{"512 batch 8", "512 tn batch 8", "4096x1024x512 batch 8",
                                             "4096x1024x512 tn batch 8"}));
  const auto one = shapesFor(parseSizes("256"), {Layout{}}, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0], (GemmShape{256, 256, 256}));
}

// A batch needs every product's memory (and room between them): 64 × 512³ is 64 times 512³ and
// more; 64 × 8192³ does not fit an 80 GB GPU although one 8192³ does.
TEST(SizeSpec, WorkingSetScalesWithTheBatch) {
  const GemmShape one{512, 512, 512}, batched{512, 512, 512, Layout{}, 64};
  EXPECT_GE(workingSetBytes(batched), 64 * workingSetBytes(one));
  EXPECT_LT(workingSetBytes(batched), 65 * workingSetBytes(one));
  // Operands stored transposed need the same memory, up to their padded rows.
  const GemmShape tall{4096, 64, 1024}, tallTn{4096, 64, 1024, Layout{true, false}, 1};
  EXPECT_NEAR(double(workingSetBytes(tallTn)), double(workingSetBytes(tall)), 0.01 * double(workingSetBytes(tall)));
  EXPECT_NO_THROW(checkFits({GemmShape{8192, 8192, 8192}}, 80LL << 30, "H100"));
  try {
    checkFits({GemmShape{8192, 8192, 8192, Layout{}, 64}}, 80LL << 30, "NVIDIA H100 80GB HBM3");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("size 8192 batch 64 needs"), std::string::npos) << e.what();
  }
}
