// The workload file of `tune --shapes`: problems, weights, comments, merged duplicates, and bad
// lines refused with their line number.
// Run: ctest -R ShapeFile
#include <gtest/gtest.h>

#include "gemmtune/Errors.hpp"
#include "ShapeFile.hpp"

using namespace gemmtune;

namespace {

std::string errorOf(std::string_view text) {
  try {
    parseShapeText(text, "w.txt");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(ShapeFile, ProblemsWeightsAndComments) {
  auto shapes = parseShapeText("# a workload\n4096x1024x512   12\n\n  27x32x3523 # skinny\n1000\r\n", "w.txt");
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].shape, (GemmShape{4096, 1024, 512}));
  EXPECT_DOUBLE_EQ(shapes[0].weight, 12);
  EXPECT_EQ(shapes[0].line, 2);
  EXPECT_EQ(shapes[1].shape, (GemmShape{27, 32, 3523}));
  EXPECT_DOUBLE_EQ(shapes[1].weight, 1);
  EXPECT_EQ(shapes[2].shape, (GemmShape{1000, 1000, 1000}));
  EXPECT_EQ(shapes[2].line, 5);
}

TEST(ShapeFile, TheSameProblemTwiceAddsItsWeights) {
  auto shapes = parseShapeText("64x64x64 2\n128\n64x64x64 0.5\n", "w.txt");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_DOUBLE_EQ(shapes[0].weight, 2.5);
  EXPECT_EQ(shapes[0].line, 1);
}

TEST(ShapeFile, BadLinesNameTheirLine) {
  EXPECT_EQ(errorOf("64x64x64\n64x64 3\n").rfind("w.txt:2: ", 0), 0u) << errorOf("64x64x64\n64x64 3\n");
  EXPECT_EQ(errorOf("64x64x64 -1\n"), "w.txt:1: weight '-1' is not a positive number");
  EXPECT_EQ(errorOf("64x64x64 nan\n"), "w.txt:1: weight 'nan' is not a positive number");
  EXPECT_EQ(errorOf("64x64x64 2 3\n"), "w.txt:1: '64x64x64 2 3' has more than a problem and a weight");
  EXPECT_EQ(errorOf("1024..8192\n"), "w.txt:1: '1024..8192' is not one problem (write MxNxK or N, one per line)");
  EXPECT_EQ(errorOf("1,2\n"), "w.txt:1: '1,2' is not one problem (write MxNxK or N, one per line)");
  EXPECT_EQ(errorOf("0x5x5\n").rfind("w.txt:1: ", 0), 0u);
  EXPECT_EQ(errorOf("# only comments\n\n"), "w.txt: no shapes (one MxNxK per line)");
  EXPECT_EQ(errorOf(std::string(2000, '1')), "w.txt:1: line longer than 1000 bytes");
  EXPECT_EQ(errorOf("64x64x64 \x01\x02"), "w.txt:1: weight '?" "?' is not a positive number");  // control bytes shown as '?'
}

TEST(ShapeFile, AnUnreadableFileIsAnIoError) {
  EXPECT_THROW(readShapeFile("/nonexistent/shapes.txt"), IoError);
}
