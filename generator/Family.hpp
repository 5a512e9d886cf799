// Family: one kernel template plus its spec (parameter domains, named constraints, launch
// geometry, shared-memory formula). A Config is one point of a family's space; an Instance is
// a Config made concrete for NVRTC (source, name expression).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gemmtune {

struct ParamSpec {
  std::string name;          // as written in the template and in --params: "BM"
  std::string tag;           // as written in canonical names: "bm"
  std::vector<int> domain;   // default search values, ascending
  std::string meaning;       // one line for --help and `space`
};

struct Config;

// A static constraint: a predicate over parameter values and the reason it exists.
struct Constraint {
  std::string name;    // "tm_divides_bm"
  std::string reason;  // one line: why the constraint exists
  std::function<bool(const Config&)> holds;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct Family {
  std::string name;            // canonical prefix and CLI name: "blocktile1d"
  std::string templateFile;    // file under templates/: "blocktile_1d.cu"
  std::string kernelName;      // C++ template name: "sgemm_blocktile_1d"
  std::string description;
  std::vector<ParamSpec> params;
  // The well-known fixed configuration (unguarded form): always measured, the yardstick of the
  // speed-up a tuned configuration brings.
  std::vector<int> classic;
  std::vector<Constraint> constraints;
  std::function<int(const Config&)> threadsPerBlock;
  std::function<Dim3(const Config&, long long M, long long N)> grid;
  std::function<int(const Config&)> dynamicSmemBytes;  // launched as dynamic shared memory
  std::function<int(const Config&)> staticSmemBytes;   // declared __shared__ arrays
  // Tile edges in M and N: an unguarded instance is correct only when both divide the size
  // and K is a multiple of kTile().
  std::function<int(const Config&)> mTile, nTile, kTile;

  int paramIndex(const std::string& paramName) const;  // -1 when absent
};

struct Config {
  const Family* family = nullptr;
  std::vector<int> values;  // in family->params order
  bool guarded = true;

  int operator[](const std::string& paramName) const;  // throws std::out_of_range
  // The canonical instance name, e.g. "blocktile1d_bm64_bn64_bk8_tm8_guarded".
  std::string name() const;
  // "sgemm_blocktile_1d<64,64,8,8,true>"
  std::string nameExpression() const;
  // The first violated static constraint, if any.
  const Constraint* violated() const;
  // True when an unguarded instance computes M×N×K correctly.
  bool divides(long long M, long long N, long long K) const;
  bool operator==(const Config& o) const {
    return family == o.family && values == o.values && guarded == o.guarded;
  }
};

}  // namespace gemmtune
