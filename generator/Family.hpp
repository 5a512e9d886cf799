// Family: one kernel template plus its spec (parameter domains, named constraints, resources and
// launch plan). A Config is one point of a family's space; an Instance is a Config made concrete
// for NVRTC (source, name expressions). A family is exactly two files, templates/<file>.cu and
// generator/families/<Name>.cpp, the second ending in GEMMTUNE_REGISTER_FAMILY (FamilyRegistry.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "FamilyPlans.hpp"
#include "gemmtune/GpuSpec.hpp"
#include "gemmtune/Precision.hpp"

namespace gemmtune {

struct ParamSpec {
  std::string name;          // as written in the template and in --params: "BM"
  std::string tag;           // as written in canonical names: "bm"
  std::vector<int> domain;   // default search values, ascending
  std::string meaning;       // one line for --help and `space`
  // Read by the launch plan only (a grid dimension, a slice count), never a template argument:
  // configurations that differ only here are one program, compiled once.
  bool launchOnly = false;

  // The largest value accepted anywhere (instance names, --params, imports): 16 times the largest
  // default value. Specs compute resources and constraints in int from products of a few
  // parameters; this bound keeps them far from overflow (issue 13, defect 5).
  int maxValue() const { return 16 * (domain.empty() ? 64 : domain.back()); }
};

struct Config;

// A static constraint: a predicate over parameter values and the reason it exists.
struct Constraint {
  std::string name;    // "tm_divides_bm"
  std::string reason;  // one line: why the constraint exists
  std::function<bool(const Config&)> holds;
};

// A constraint that depends on the target GPU (compute capability, limits): "cp.async needs sm_80".
struct TargetConstraint {
  std::string name;
  std::string reason;
  std::function<bool(const Config&, const GpuSpec&)> holds;
};


struct Family {
  std::string name;            // canonical prefix and CLI name, no '_': "tiled2d"
  std::string templateFile;    // file under templates/: "tiled_2d.cu"
  std::string kernelName;      // C++ template name of the main kernel: "sgemm_tiled_2d"
  std::string description;
  std::vector<ParamSpec> params;
  // A well-known fixed configuration (unguarded form), when the family has one: always measured,
  // the yardstick of the speed-up a tuned configuration brings.
  std::optional<std::vector<int>> classic;
  // Small tiles timed first at skinny shapes (M or N at most 64: tuner/BasisShapes.hpp): by the
  // main job's basis, before the requested sizes' finalists, and by the model search at a tuned
  // skinny size (SearchPoint::seed). Square sizes never make them fastest, so ranked from those
  // they would never be measured, and no skinny shape could be served by them.
  // Values as `classic` (launch-only ones ignored: every value is timed); each is skipped where
  // a --params domain leaves it out. The basis times them guarded even where the tile divides its
  // shape: the shapes a program has rarely do, and the lookup counts an unmeasured guarded form
  // twice (so an exact query at such a basis shape gets the guarded row). A tuned size times the
  // form that size needs.
  std::vector<std::vector<int>> skinnyTiles;
  std::vector<Constraint> constraints;
  std::vector<TargetConstraint> targetConstraints;
  // Extra NVRTC options (e.g. include directories) and files under templates/ that the template
  // includes; both are part of every compile's cache key.
  std::vector<std::string> compileOptions;
  std::vector<std::string> headers;
  // Header libraries from outside templates/ (HeaderTrees.hpp: "cutlass"): their include
  // directories are found on this machine, their versions enter the source hash. A family whose
  // tree is missing here is unavailable (listed with the reason, skipped by `tune` unless named).
  std::vector<std::string> headerTrees;
  // Name expressions of further kernels compiled in the same program (a reduction, a helper),
  // launched by the plan as kernels 1, 2, ...; none by default.
  std::function<std::vector<std::string>(const Config&)> extraKernels;
  // Resources of the main kernel, known before compiling (the filters check them).
  std::function<int(const Config&)> threadsPerBlock;
  std::function<int(const Config&)> dynamicSmemBytes;  // launched as dynamic shared memory
  std::function<int(const Config&)> staticSmemBytes;   // declared __shared__ arrays
  // How a configuration runs a problem (see problem/LaunchPlan.hpp; single-kernel templates use tiledPlan, generator/FamilyPlans.hpp).
  std::function<LaunchPlan(const Config&, const GemmProblem&)> plan;
  // Exactly one family sets this: its classic configuration, guarded, is what the library runs
  // when nothing tuned applies, so it must be correct for every problem and small enough for
  // every GPU gemmtune compiles for.
  bool libraryDefault = false;
  PrecisionClass precision = PrecisionClass::strict;  // gemmtune/Precision.hpp
  // An architecture-specific NVRTC target ("sm_90a": wgmma) the family is always compiled for;
  // its code runs on that architecture only (runsOn; the family's target constraint asks it). Empty:
  // compiled for the GPU's own arch (Config::compileArch).
  std::string onlyArch;
  // Listing order among families (then by name): simpler families first.
  int order = 100;
  // Tests only: a family whose template lies outside templates/ supplies its source itself.
  std::function<std::string()> templateText;

  int paramIndex(const std::string& paramName) const;  // -1 when absent
  // The GPU architecture onlyArch's code runs on ("sm_90" for "sm_90a"); empty without onlyArch.
  std::string onlyGpuArch() const;
  // Whether code compiled for this family runs on a GPU of `gpuArch` ("sm_90"): always without
  // onlyArch, else only on onlyGpuArch().
  bool runsOn(const std::string& gpuArch) const;
  // Whether `values` are one of skinnyTiles, launch-only values aside.
  bool isSkinnyTile(const std::vector<int>& values) const;
};

struct Config {
  const Family* family = nullptr;
  std::vector<int> values;  // in family->params order
  bool guarded = true;
  // How the kernel reads A and B (a template argument, like the form): the problem decides it
  // (formFor), as it decides the form.
  Layout layout{};

  int operator[](const std::string& paramName) const;  // throws std::out_of_range
  // The canonical instance name: family, then tag and value per parameter, e.g.
  // "tiled2d_bm64_bn64_bk8_guarded"; a layout other than nn comes before the form:
  // "tiled2d_bm64_bn64_bk8_tn_guarded".
  std::string name() const;
  // (parameter name, value) in the family's order.
  std::vector<std::pair<std::string, int>> namedValues() const;
  // The values the template is instantiated with: every parameter's but the launch-only ones.
  std::vector<int> templateArguments() const;
  // What configurations share a compiled program's tiles: family and templateArguments() (form
  // and layout left out: they move no tile), e.g. for calibrating one program from its rows.
  std::string programKey() const;
  // One compiled program (programKey, form and layout): a row's stored binary runs both.
  bool sameProgram(const Config& other) const;
  // This configuration at every combination of its launch-only parameters' domains (itself when
  // it has none), in domain order: one program, launched differently (e.g. SPLITK).
  std::vector<Config> launchVariants() const;
  // "sgemm_tiled_2d<64,64,8,true,false,false>": templateArguments(), then the form, then
  // TRANS_A and TRANS_B.
  std::string nameExpression() const;
  // The NVRTC target for a GPU of `gpuArch` ("sm_90"): the family's onlyArch where it has one.
  std::string compileArch(const std::string& gpuArch) const;
  // Every kernel of this configuration's program: the main one first, then the family's extras.
  std::vector<std::string> kernelExpressions() const;
  // The first violated static constraint, if any.
  const Constraint* violated() const;
  // The first constraint `gpu` violates, if any.
  const TargetConstraint* violatedOn(const GpuSpec& gpu) const;
  bool operator==(const Config& o) const {
    return family == o.family && values == o.values && guarded == o.guarded && layout == o.layout;
  }
};

}  // namespace gemmtune
