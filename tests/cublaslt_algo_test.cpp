// The names of cuBLASLt algorithm configurations (CPU): every field written and read back; any
// other text refused.
#include <gtest/gtest.h>

#include "CublasLtAlgo.hpp"

using namespace gemmtune;

TEST(CublasLtAlgoName, EveryFieldSurvivesItsName) {
  CublasLtAlgo a;
  a.id = 55, a.tile = 18, a.splitK = 2, a.reduction = 2, a.swizzle = 1, a.stages = 31, a.custom = 3;
  a.innerShape = 7, a.clusterShape = 12;
  EXPECT_EQ(a.name(), "lt55_t18_k2_r2_w1_s31_c3_i7_g12");
  EXPECT_EQ(CublasLtAlgo::parse(a.name()), a);
  EXPECT_EQ(CublasLtAlgo::parse(CublasLtAlgo{}.name()), CublasLtAlgo{});
}

TEST(CublasLtAlgoName, OtherTextIsRefused) {
  for (const char* bad : {"", "lt", "lt55", "lt55_t18_k2_r2_w1_s31_c3_i7", "lt55_t18_k2_r2_w1_s31_c3_i7_g12_",
                          "lt55_t18_k2_r2_w1_s31_c3_i7_g12x", "lt55_t18_k0_r0_w0_s0_c0_i0_g0",
                          "lt55_t-1_k1_r0_w0_s0_c0_i0_g0", "lt55_t18_r2_k2_w1_s31_c3_i7_g12", "xt55_t18_k2_r2_w1_s31_c3_i7_g12",
                          "lt55_t+1_k1_r0_w0_s0_c0_i0_g0", "lt99999999999_t1_k1_r0_w0_s0_c0_i0_g0"})
    EXPECT_FALSE(CublasLtAlgo::parse(bad)) << bad;
}

// The search's finalists: the fastest, one per configuration but for its custom option, so that a
// variant running its default's kernel does not crowd out the next distinct configuration.
TEST(CublasLtAlgoFinalists, OnePerConfigurationButForItsCustomOption) {
  auto algo = [](int id, int custom, int splitK = 1) {
    CublasLtAlgo a;
    a.id = id, a.custom = custom, a.splitK = splitK;
    return a;
  };
  const std::vector<CublasLtAlgo> algos = {algo(20, 0), algo(20, 1), algo(20, 2), algo(55, 0, 2), algo(55, 3, 2),
                                           algo(55, 0, 4)};
  EXPECT_EQ(fastestDistinct(algos, {2, 1, 0, 4, 3, 5}, 3), (std::vector<std::size_t>{2, 4, 5}));
  EXPECT_EQ(fastestDistinct(algos, {0, 1, 2}, 3), (std::vector<std::size_t>{0}));
  EXPECT_EQ(fastestDistinct(algos, {5, 3, 0}, 2), (std::vector<std::size_t>{5, 3}));
  EXPECT_TRUE(fastestDistinct(algos, {}, 3).empty());
}
