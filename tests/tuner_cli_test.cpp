// `gemmtune space` and `gemmtune gpus` as a user runs them: output shape, JSON, and one clear
// line with exit code 2 (usage) or 69 (no GPU) for bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "CliRunner.hpp"
#include "CudaDriver.hpp"
#include "scratch_dir.hpp"

using gemmtune::test::runCli;

namespace {

// Shared by every test here so the few real compiles happen once.
std::string cacheDir() {
  static const std::string dir = (std::filesystem::temp_directory_path() / "gemmtune-tuner-cli-test-cache").string();
  return dir;
}

std::vector<std::string> space(std::vector<std::string> args) {
  args.insert(args.begin(), {"--cache-dir", cacheDir(), "space"});
  return args;
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// The environment of a `tune` on the tests' simulated H100 (fake_worker's table), state in `dir`.
std::vector<std::string> simulatedH100(const std::filesystem::path& dir) {
  return {"GEMMTUNE_SIMULATED_GPU=h100",
          "GEMMTUNE_SIMULATED_WORKER=" + std::string(GEMMTUNE_FAKE_WORKER) + " table " + (dir / "worker").string(),
          "XDG_CACHE_HOME=" + (dir / "cache").string()};
}

void expectUsageError(const std::vector<std::string>& args, const std::string& fragment) {
  auto r = runCli(args);
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace

TEST(SpaceCli, TableWithSummaryForAnOfflineProfile) {
  auto r = runCli(space({"--gpu", "h100", "--family", "smem", "--size", "4096"}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("smem on NVIDIA H100 80GB HBM3 (profile h100, sm_90, 132 SMs), size 4096"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("instance"), std::string::npos);
  EXPECT_NE(r.out.find("limiter"), std::string::npos);
  // Every tile edge but 24 divides 4096, so only that one needs the guarded form.
  EXPECT_NE(r.out.find("smem_bs24_guarded"), std::string::npos);
  EXPECT_NE(r.out.find("smem_bs32 "), std::string::npos);
  EXPECT_NE(r.out.find("4 enumerated, 0 statically rejected, 4 compiled, 0 compile errors, 0 rejected after compile, "
                       "0 pruned, 4 left to time"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(lines(r.out), 1 + 1 + 4 + 1);  // title, header, rows, summary
  // smem_bs32: 1024 threads, 8 KiB, 2 blocks, 64/64 warps, threads+registers (see occupancy_test).
  auto row = r.out.substr(r.out.find("smem_bs32 "));
  row = row.substr(0, row.find('\n'));
  for (const char* field : {" 1024 ", " 8192 ", " 2 ", " 64/64 ", " 100.0% ", "threads+registers", "accepted"})
    EXPECT_NE(row.find(field), std::string::npos) << field << " in: " << row;
}

TEST(SpaceCli, JsonCarriesEveryCandidate) {
  auto r = runCli(space({"--gpu", "h100", "--family", "smem", "--size", "4096", "--all", "--json"}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"]["profile"], "h100");
  EXPECT_EQ(j["gpu"]["smem_per_block_optin_bytes"], 227 * 1024);
  EXPECT_EQ(j["family"], "smem");
  EXPECT_EQ(j["size"]["M"], 4096);
  ASSERT_EQ(j["candidates"].size(), 8u);
  EXPECT_EQ(j["summary"]["enumerated"], 8);
  // The unguarded form of BLOCKSIZE=24 cannot run 4096 (24 does not divide it): its plan refuses.
  EXPECT_EQ(j["summary"]["accepted"], 7);
  for (const auto& c : j["candidates"]) {
    if (c["instance"] == "smem_bs24") {
      EXPECT_EQ(c["status"], "rejected:plan");
      continue;
    }
    EXPECT_EQ(c["status"], "accepted");
    EXPECT_GT(c["registers"].get<int>(), 0);
    EXPECT_GE(c["occupancy"]["blocks_per_sm"].get<int>(), 1);
  }
}

TEST(SpaceCli, RejectionsNeedNoCompiler) {
  auto r = runCli(space({"--gpu", "t4", "--family", "blocktile1d", "--params", "BM=16,BN=256,TM=4,BK=64"}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("blocktile1d_bm16_bn256_bk64_tm4_guarded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rejected:smem 70656 B > 65536 B opt-in maximum per block"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 enumerated, 1 statically rejected, 0 compiled"), std::string::npos) << r.out;
}

TEST(SpaceCli, AcceptedOnlyHidesRejectedRows) {
  auto r = runCli(space({"--gpu", "t4", "--family", "blocktile1d", "--params", "BM=16,BN=256,TM=4,BK=64", "--accepted"}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.find("rejected:smem"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 statically rejected"), std::string::npos) << r.out;
}

TEST(SpaceCli, BadInputIsOneLineAndExitTwo) {
  expectUsageError(space({"--gpu", "h900", "--family", "smem"}), "unknown GPU 'h900' (choose from: auto, all");
  expectUsageError(space({"--gpu", "h100", "--family", "nosuch"}), "unknown family 'nosuch' (choose from: smem, blocktile1d, blocktile2d, warptile, warppipe, thin, cutlass, streamk, clusterk, tf32x3, fp16x3, wgmmafp16x3)");
  expectUsageError(space({"--gpu", "h100", "--family", "smem", "--size", "40x96"}), "bad size '40x96'");
  expectUsageError(space({"--gpu", "h100", "--family", "smem", "--size", "0"}), "bad size '0'");
  expectUsageError(space({"--gpu", "h100"}), "give --family");
  expectUsageError(space({"--gpu", "all", "--family", "smem"}), "not 'all'");
  expectUsageError(space({"--gpu", "h100", "--family", "smem", "--params", "BM=4"}), "not NAME=VALUE with NAME one of BLOCKSIZE");
  expectUsageError(space({"--gpu", "h100", "--family", "smem", "--prune"}), "--prune needs --size");
}

// A family whose header library is missing is refused when named, before any GPU work, with
// what to do; `tune` of every family skips it with a warning instead.
TEST(TuneCli, AFamilyWithoutItsHeadersIsRefusedWithWhatToDo) {
  auto r = runCli({"tune", "--families", "cutlass", "--sizes", "64"}, {"GEMMTUNE_CUTLASS_DIR=/nonexistent/include"});
  EXPECT_EQ(r.exitCode, 69) << r.err;
  EXPECT_NE(r.err.find("family cutlass is unavailable here: GEMMTUNE_CUTLASS_DIR=/nonexistent/include holds no cutlass/version.h"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(TuneCli, EveryFamilySkipsOneWithoutItsHeadersWithAWarning) {
  // One size of the six other families is six units: shard 9 of 10 has no work, so the run
  // ends before any GPU work, after the family list was made.
  auto r = runCli({"tune", "--sizes", "64", "--shard", "9/10"}, {"GEMMTUNE_CUTLASS_DIR=/nonexistent/include"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("family cutlass skipped: GEMMTUNE_CUTLASS_DIR=/nonexistent/include holds no cutlass/version.h"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the sweep has 6 unit(s)"), std::string::npos) << r.err;
}

// tune --mnk: one shape on demand (the answer to a poor `query --mnk`), checked before GPU work.
TEST(TuneCli, MnkTunesOneShape) {
  expectUsageError({"tune", "--mnk", "12x13"}, "size '12x13' must be N or MxNxK");
  expectUsageError({"tune", "--mnk", "0x1x1"}, "size '0x1x1' is not N or MxNxK with positive integers");
  expectUsageError({"tune", "--mnk", "12x13x14", "--sizes", "64"}, "excludes");
  // One shape of the six families found here is six units: shard 9 of 10 has none.
  auto r = runCli({"tune", "--mnk", "2429x22x4103", "--shard", "9/10"}, {"GEMMTUNE_CUTLASS_DIR=/nonexistent/include"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("the sweep has 6 unit(s)"), std::string::npos) << r.err;
}

// tune --params: the values given replace a parameter's domain in every chosen family that has
// it; a name none of them has, or a bad value, is a usage error before any GPU work.
TEST(TuneCli, ParamsReplaceDomainsOfTheFamiliesThatHaveThem) {
  expectUsageError({"tune", "--families", "smem,blocktile1d", "--params", "SWIZZLE=8"},
                   "--params 'SWIZZLE=8': no chosen family has this parameter (families: smem, blocktile1d;");
  expectUsageError({"tune", "--families", "blocktile1d", "--params", "TM=4/x"}, "parameter 'TM' takes positive integers");
  gemmtune::test::ScratchDir dir;
  const std::string db = (dir.path() / "params.db").string();
  const std::vector<std::string> simulated = simulatedH100(dir.path());
  auto r = runCli({"tune", "--sizes", "256", "--families", "smem,blocktile1d", "--params", "bm=64,BN=64,TM=4/8",
                   "--no-basis", "--db", db},
                  simulated);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto rows = runCli({"results", "--db", db, "--csv"});
  ASSERT_EQ(rows.exitCode, 0) << rows.err;
  std::set<std::string> blocktile;
  bool smem = false;
  std::istringstream lines(rows.out);
  for (std::string line; std::getline(lines, line);) {
    // The instance is the first field that names a family's configuration.
    std::string instance;
    std::istringstream fields(line);
    for (std::string f; instance.empty() && std::getline(fields, f, ',');)
      if (f.rfind("blocktile1d_", 0) == 0 || f.rfind("smem_", 0) == 0) instance = f;
    if (instance.rfind("blocktile1d_", 0) == 0) blocktile.insert(instance.substr(0, instance.find("_bk")) + instance.substr(instance.find("_tm")));
    smem = smem || instance.rfind("smem_", 0) == 0;
  }
  EXPECT_TRUE(smem) << "smem has none of the parameters: its whole space is tuned";
  EXPECT_EQ(blocktile, (std::set<std::string>{"blocktile1d_bm64_bn64_tm4", "blocktile1d_bm64_bn64_tm8"})) << rows.out;
}

TEST(SpaceCli, DeviceSelectorWithoutGpuExits69) {
  if (gemmtune::CudaDriver::available()) GTEST_SKIP() << "a CUDA driver is present";
  auto r = runCli(space({"--gpu", "auto", "--family", "smem"}));
  EXPECT_EQ(r.exitCode, 69) << r.err;
  EXPECT_NE(r.err.find("no CUDA GPU for --gpu auto"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(GpusCli, ListsEveryProfileWithLimits) {
  auto r = runCli({"gpus"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* k : {"h100", "h200", "a100", "a6000", "l4", "rtx4090", "t4", "v100"})
    EXPECT_NE(r.out.find(k), std::string::npos) << k;
  for (const char* row : {"smem / block opt-in", "registers / SM", "blocks / SM", "smem reserved / block", "L2"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row;
  EXPECT_NE(r.out.find("Detected GPUs"), std::string::npos);
}

TEST(GpusCli, Json) {
  auto r = runCli({"gpus", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["profiles"].size(), 8u);
  EXPECT_EQ(j["profiles"][0]["profile"], "h100");
  EXPECT_EQ(j["profiles"][0]["smem_per_sm_bytes"], 233472);
  EXPECT_FALSE(j["profiles"][0]["source"].get<std::string>().empty());
  if (!gemmtune::CudaDriver::available()) {
    EXPECT_TRUE(j["detected"].empty());
    EXPECT_TRUE(j.contains("detect_error"));
  }
}

TEST(TuneCliWorkload, BadShapesFileLinesAreRefusedBeforeAnyGpuWork) {
  const auto file = std::filesystem::temp_directory_path() / "gemmtune-tuner-cli-shapes.txt";
  {
    std::ofstream(file) << "# a workload\n4096x1024x512 12\n64x64 3\n";
  }
  const std::string db = (std::filesystem::temp_directory_path() / "gemmtune-tuner-cli-shapes.db").string();
  expectUsageError({"tune", "--shapes", file.string(), "--db", db}, file.string() + ":3: ");
  expectUsageError({"tune", "--shapes", file.string(), "--sizes", "1024", "--db", db}, "--shapes");
  auto missing = runCli({"tune", "--shapes", "/nonexistent/shapes.txt", "--db", db});
  EXPECT_EQ(missing.exitCode, 74) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(db)) << "a refused tune must not create the database";
  std::filesystem::remove(file);
}

// --layouts and --batch: bad values are one line and exit 2 before any GPU work; --shapes lines
// name their own layout and batch.
TEST(TuneCli, LayoutsAndBatchAreCheckedBeforeAnyGpuWork) {
  expectUsageError({"tune", "--sizes", "256", "--layouts", "nn,xx"}, "bad layout 'xx': write nn, nt, tn or tt");
  expectUsageError({"tune", "--sizes", "256", "--layouts", "nn,"}, "bad layout list: empty item");
  expectUsageError({"tune", "--sizes", "256", "--batch", "0"}, "bad batch '0': a call computes at least 1 product");
  expectUsageError({"tune", "--sizes", "256", "--batch", "4x"}, "bad batch '4x': not a whole number");
  expectUsageError({"tune", "--shapes", "/nonexistent/shapes.txt", "--layouts", "tn"}, "excludes");
  expectUsageError({"tune", "--shapes", "/nonexistent/shapes.txt", "--batch", "4"}, "excludes");
  // 64 GB of products do not fit an H100's 80 GB with their checks: refused up front.
  const std::vector<std::string> simulated{"GEMMTUNE_SIMULATED_GPU=h100", "GEMMTUNE_SIMULATED_WORKER=/bin/false"};
  auto r = runCli({"tune", "--sizes", "8192", "--batch", "64", "--families", "smem"}, simulated);
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("size 8192 batch 64 needs"), std::string::npos) << r.err;
}

// Every size in every layout with the batch: the summary has one section each, named so.
TEST(TuneCli, EverySizeIsTunedInEveryLayoutWithTheBatch) {
  gemmtune::test::ScratchDir dir;
  const std::string db = (dir.path() / "layouts.db").string();
  const std::vector<std::string> simulated = simulatedH100(dir.path());
  auto r = runCli({"tune", "--sizes", "256,128", "--layouts", "nn,tn,nn", "--batch", "2", "--families", "smem",
                   "--params", "BLOCKSIZE=16", "--db", db, "--json"},
                  simulated);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto sizes = nlohmann::json::parse(r.out)["gpus"][0]["sizes"];
  std::vector<std::string> seen;
  for (const auto& s : sizes)
    seen.push_back(std::to_string(s["m"].get<long long>()) + " " + s["layout"].get<std::string>() + " " +
                   std::to_string(s["batch"].get<long long>()));
  EXPECT_EQ(seen, (std::vector<std::string>{"256 nn 2", "256 tn 2", "128 nn 2", "128 tn 2"})) << r.out;
  auto table = runCli({"tune", "--sizes", "128", "--layouts", "tn", "--batch", "2", "--families", "smem",
                       "--params", "BLOCKSIZE=16", "--db", db},
                      simulated);
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find("size 128 tn batch 2  cuBLAS"), std::string::npos) << table.out;
}

// `space --layout`: every configuration reads A and B that way (its name says so), with or
// without a size; --batch goes with a size.
TEST(SpaceCli, LayoutNamesEveryConfiguration) {
  auto r = runCli(space({"--gpu", "h100", "--family", "smem", "--size", "512", "--layout", "tn", "--batch", "4",
                         "--json"}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["layout"], "tn");
  EXPECT_EQ(j["size"]["batch"], 4);
  ASSERT_EQ(j["candidates"].size(), 4u);
  for (const auto& c : j["candidates"])
    EXPECT_NE(c["instance"].get<std::string>().find("_tn"), std::string::npos) << c["instance"];
  auto text = runCli(space({"--gpu", "h100", "--family", "smem", "--params", "BLOCKSIZE=16", "--layout", "tt"}));
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("any size (guarded forms), layout tt"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("smem_bs16_tt_guarded"), std::string::npos) << text.out;
  expectUsageError(space({"--gpu", "h100", "--family", "smem", "--layout", "nt,tn"}), "bad layout 'nt,tn'");
  expectUsageError(space({"--gpu", "h100", "--family", "smem", "--batch", "4"}), "--batch needs --size");
  expectUsageError(space({"--gpu", "h100", "--family", "smem", "--size", "64", "--batch", "0"}), "bad batch '0'");
}

// A tensor-core family is tuned only under --precision faithful: named without it, a usage error
// that says what to add.
TEST(TuneCli, ATensorCoreFamilyNeedsPrecisionFaithful) {
  expectUsageError({"tune", "--families", "cutlass,tf32x3"},
                   "family tf32x3 computes on tensor cores (precision class faithful): add --precision faithful");
  expectUsageError({"tune", "--precision", "fast"}, "--precision");
  expectUsageError({"query", "--size", "64", "--family", "tf32x3"},
                   "family tf32x3 computes on tensor cores (precision class faithful): add --precision faithful");
}

// cuBLAS as a candidate through the command line: `--families` names it (or "all" includes it);
// without it no cuBLAS row is written; alone it is a usage error (it is measured at the families'
// sizes). `results` lists its row and `query` names it where it was measured fastest.
TEST(TuneCli, CublasIsACandidateWhereTheFamiliesNameIt) {
  expectUsageError({"tune", "--families", "cublas"}, "--families cublas: name a kernel family beside cublas");
  gemmtune::test::ScratchDir dir;
  const std::string with = (dir.path() / "with.db").string(), without = (dir.path() / "without.db").string();
  const std::vector<std::string> simulated = simulatedH100(dir.path());
  auto r = runCli({"tune", "--sizes", "256", "--families", "smem,cublas", "--db", with}, simulated);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto rows = runCli({"results", "--db", with, "--family", "cublas"});
  ASSERT_EQ(rows.exitCode, 0) << rows.err;
  EXPECT_NE(rows.out.find("cublas_nn"), std::string::npos) << rows.out;
  EXPECT_EQ(rows.out.find("stale"), rows.out.rfind("stale")) << "only the header names staleness: " << rows.out;
  auto cublasOnly = runCli({"query", "--db", with, "--gpu", "h100", "--size", "256", "--family", "cublas"});
  ASSERT_EQ(cublasOnly.exitCode, 0) << cublasOnly.err;
  EXPECT_NE(cublasOnly.out.find("cublas_nn (cuBLAS)"), std::string::npos) << cublasOnly.out;
  auto json = runCli({"query", "--db", with, "--gpu", "h100", "--size", "256", "--family", "cublas", "--json"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("instance"), "cublas_nn");
  EXPECT_EQ(j.at("cublas"), true);
  EXPECT_TRUE(j.at("threads_per_block").is_null());
  // The report shows cuBLAS as its baseline column; its row is no family of the page.
  auto report = runCli({"report", "--db", with, "-o", "-"});
  ASSERT_EQ(report.exitCode, 0) << report.err;
  EXPECT_NE(report.out.find("smem"), std::string::npos);

  r = runCli({"tune", "--sizes", "256", "--families", "smem", "--db", without}, simulated);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  rows = runCli({"results", "--db", without, "--family", "cublas"});
  EXPECT_EQ(rows.exitCode, 1) << rows.out;
  EXPECT_NE(rows.err.find("no results match"), std::string::npos) << rows.err;
}
