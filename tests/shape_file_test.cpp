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
  EXPECT_EQ(errorOf("64x64x64 2 3\n"), "w.txt:1: '64x64x64 2 3' has more than a problem, a layout, a batch and a weight");
  EXPECT_EQ(errorOf("1024..8192\n"), "w.txt:1: '1024..8192' is not one problem (write MxNxK or N, one per line)");
  EXPECT_EQ(errorOf("1,2\n"), "w.txt:1: '1,2' is not one problem (write MxNxK or N, one per line)");
  EXPECT_EQ(errorOf("0x5x5\n").rfind("w.txt:1: ", 0), 0u);
  EXPECT_EQ(errorOf("# only comments\n\n"), "w.txt: no shapes (one MxNxK per line)");
  EXPECT_EQ(errorOf(std::string(2000, '1')), "w.txt:1: line longer than 1000 bytes");
  EXPECT_EQ(errorOf("64x64x64 \x01\x02"),  // control bytes shown as '?'
            "w.txt:1: '?" "?' is neither a layout (nn, nt, tn, tt), batch=N nor a weight (a number)");
}

// `SIZE [LAYOUT] [batch=N] [WEIGHT]`: each optional part may be left out.
TEST(ShapeFile, LinesNameTheirLayoutAndBatch) {
  auto shapes = parseShapeText("512x512x512 nt batch=64 3\n512 tn\n128x128x64 batch=512\n64 tt 2.5\n1000 4\n", "w.txt");
  ASSERT_EQ(shapes.size(), 5u);
  EXPECT_EQ(shapes[0].shape, (GemmShape{512, 512, 512, Layout{false, true}, 64}));
  EXPECT_DOUBLE_EQ(shapes[0].weight, 3);
  EXPECT_EQ(shapes[1].shape, (GemmShape{512, 512, 512, Layout{true, false}, 1}));
  EXPECT_DOUBLE_EQ(shapes[1].weight, 1);
  EXPECT_EQ(shapes[2].shape, (GemmShape{128, 128, 64, Layout{}, 512}));
  EXPECT_EQ(shapes[3].shape, (GemmShape{64, 64, 64, Layout{true, true}, 1}));
  EXPECT_DOUBLE_EQ(shapes[3].weight, 2.5);
  EXPECT_EQ(shapes[4].shape, (GemmShape{1000, 1000, 1000}));
  EXPECT_DOUBLE_EQ(shapes[4].weight, 4);
}

// The same problem is the same size, layout and batch: only then do the weights add up.
TEST(ShapeFile, OnlyTheSameSizeLayoutAndBatchMerge) {
  auto shapes = parseShapeText("512 nt batch=64\n512 nt batch=64 2\n512 batch=64\n512 nt\n512 nn batch=1 5\n512\n",
                               "w.txt");
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_DOUBLE_EQ(shapes[0].weight, 3);
  EXPECT_EQ(shapes[1].shape, (GemmShape{512, 512, 512, Layout{}, 64}));
  EXPECT_EQ(shapes[2].shape, (GemmShape{512, 512, 512, Layout{false, true}, 1}));
  EXPECT_EQ(shapes[3].shape, (GemmShape{512, 512, 512}));
  EXPECT_DOUBLE_EQ(shapes[3].weight, 6);  // `nn batch=1` is the plain problem
  EXPECT_EQ(shapes[3].line, 5);
}

TEST(ShapeFile, BadLayoutAndBatchWordsNameTheirLine) {
  EXPECT_EQ(errorOf("512\n512 batch 64\n"), "w.txt:2: write the batch as batch=N, e.g. '512 nt batch=64'");
  EXPECT_EQ(errorOf("512 batch=0\n"), "w.txt:1: bad batch '0': a call computes at least 1 product");
  EXPECT_EQ(errorOf("512 batch=\n"), "w.txt:1: bad batch '': not a whole number (e.g. 64)");
  EXPECT_EQ(errorOf("512 batch=2.5\n"), "w.txt:1: bad batch '2.5': not a whole number (e.g. 64)");
  EXPECT_EQ(errorOf("512 batch=4294967296\n"), "w.txt:1: bad batch '4294967296': at most 2147483647 products per call");
  EXPECT_EQ(errorOf("512 batch=4 nt\n"), "w.txt:1: '512 batch=4 nt' is out of order (write SIZE [LAYOUT] [batch=N] [WEIGHT])");
  EXPECT_EQ(errorOf("512 3 nt\n"), "w.txt:1: '512 3 nt' has more than a problem, a layout, a batch and a weight");
  EXPECT_EQ(errorOf("512 nt nt\n"), "w.txt:1: '512 nt nt' is out of order (write SIZE [LAYOUT] [batch=N] [WEIGHT])");
  EXPECT_EQ(errorOf("512 NT\n"), "w.txt:1: 'NT' is neither a layout (nn, nt, tn, tt), batch=N nor a weight (a number)");
  EXPECT_EQ(errorOf("512 nx 2\n"), "w.txt:1: 'nx' is neither a layout (nn, nt, tn, tt), batch=N nor a weight (a number)");
}

TEST(ShapeFile, AnUnreadableFileIsAnIoError) {
  EXPECT_THROW(readShapeFile("/nonexistent/shapes.txt"), IoError);
}
