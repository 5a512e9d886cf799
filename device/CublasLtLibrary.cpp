#include "CublasLtLibrary.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

#include "DynamicLibrary.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>

namespace gemmtune {

// Types from the header (unevaluated decltype only); the symbols from the loaded library.
struct CublasLtLibrary::Api {
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtDestroy) destroy = nullptr;
  decltype(&::cublasLtMatmulDescCreate) descCreate = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) descDestroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) descSet = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) layoutCreate = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) layoutDestroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) layoutSet = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) prefCreate = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) prefDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) prefSet = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&::cublasLtMatmulAlgoGetIds) algoIds = nullptr;
  decltype(&::cublasLtMatmulAlgoInit) algoInit = nullptr;
  decltype(&::cublasLtMatmulAlgoCapGetAttribute) capGet = nullptr;
  decltype(&::cublasLtMatmulAlgoConfigGetAttribute) configGet = nullptr;
  decltype(&::cublasLtMatmulAlgoConfigSetAttribute) configSet = nullptr;
  decltype(&::cublasLtMatmulAlgoCheck) check = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
  decltype(&::cublasLtGetStatusName) statusName = nullptr;  // optional
};

namespace {

using Api = CublasLtLibrary::Api;
constexpr const char* kNeeded = "cuBLASLt 12 or 13";

const Api* resolveAll(void* lib, const char* name, std::string& missing) {
  auto* api = new Api;
#define GEMMTUNE_RESOLVE(field, symbol) resolveSymbol(lib, #symbol, api->field, name, kNeeded, missing)
  const bool all = GEMMTUNE_RESOLVE(create, cublasLtCreate) && GEMMTUNE_RESOLVE(destroy, cublasLtDestroy) &&
                   GEMMTUNE_RESOLVE(descCreate, cublasLtMatmulDescCreate) &&
                   GEMMTUNE_RESOLVE(descDestroy, cublasLtMatmulDescDestroy) &&
                   GEMMTUNE_RESOLVE(descSet, cublasLtMatmulDescSetAttribute) &&
                   GEMMTUNE_RESOLVE(layoutCreate, cublasLtMatrixLayoutCreate) &&
                   GEMMTUNE_RESOLVE(layoutDestroy, cublasLtMatrixLayoutDestroy) &&
                   GEMMTUNE_RESOLVE(layoutSet, cublasLtMatrixLayoutSetAttribute) &&
                   GEMMTUNE_RESOLVE(prefCreate, cublasLtMatmulPreferenceCreate) &&
                   GEMMTUNE_RESOLVE(prefDestroy, cublasLtMatmulPreferenceDestroy) &&
                   GEMMTUNE_RESOLVE(prefSet, cublasLtMatmulPreferenceSetAttribute) &&
                   GEMMTUNE_RESOLVE(heuristic, cublasLtMatmulAlgoGetHeuristic) &&
                   GEMMTUNE_RESOLVE(algoIds, cublasLtMatmulAlgoGetIds) &&
                   GEMMTUNE_RESOLVE(algoInit, cublasLtMatmulAlgoInit) &&
                   GEMMTUNE_RESOLVE(capGet, cublasLtMatmulAlgoCapGetAttribute) &&
                   GEMMTUNE_RESOLVE(configGet, cublasLtMatmulAlgoConfigGetAttribute) &&
                   GEMMTUNE_RESOLVE(configSet, cublasLtMatmulAlgoConfigSetAttribute) &&
                   GEMMTUNE_RESOLVE(check, cublasLtMatmulAlgoCheck) && GEMMTUNE_RESOLVE(matmul, cublasLtMatmul);
#undef GEMMTUNE_RESOLVE
  if (!all) {
    delete api;
    return nullptr;
  }
  api->statusName = reinterpret_cast<decltype(api->statusName)>(::dlsym(lib, "cublasLtGetStatusName"));
  return api;
}

// The operation and the three matrices of one row-major problem, column-major as cuBLASLt reads
// them: A' = B (N×K, or K×N stored), B' = A, C' = Cᵀ (N×M); destroyed with this object.
class Descriptors {
 public:
  Descriptors(const Api& api, const SgemmArgs& a) : api_(api) {
    const cublasOperation_t opA = a.layout.transB ? CUBLAS_OP_T : CUBLAS_OP_N;  // A' = B
    const cublasOperation_t opB = a.layout.transA ? CUBLAS_OP_T : CUBLAS_OP_N;  // B' = A
    status_ = api.descCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (ok()) status_ = api.descSet(op_, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA);
    if (ok()) status_ = api.descSet(op_, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB);
    // Stored column-major shapes: op N reads rows × cols = m' × k', op T the transpose.
    if (ok()) status_ = make(a_, opA == CUBLAS_OP_T ? a.k : a.n, opA == CUBLAS_OP_T ? a.n : a.k, a.ldb, a.batch.strideB, a);
    if (ok()) status_ = make(b_, opB == CUBLAS_OP_T ? a.m : a.k, opB == CUBLAS_OP_T ? a.k : a.m, a.lda, a.batch.strideA, a);
    if (ok()) status_ = make(c_, a.n, a.m, a.ldc, a.batch.strideC, a);
  }
  ~Descriptors() {
    for (cublasLtMatrixLayout_t l : {a_, b_, c_})
      if (l) api_.layoutDestroy(l);
    if (op_) api_.descDestroy(op_);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  bool ok() const { return status_ == CUBLAS_STATUS_SUCCESS; }
  cublasStatus_t status() const { return status_; }
  cublasLtMatmulDesc_t op() const { return op_; }
  cublasLtMatrixLayout_t a() const { return a_; }
  cublasLtMatrixLayout_t b() const { return b_; }
  cublasLtMatrixLayout_t c() const { return c_; }

 private:
  cublasStatus_t make(cublasLtMatrixLayout_t& l, int rows, int cols, int ld, long long stride, const SgemmArgs& a) {
    cublasStatus_t s = api_.layoutCreate(&l, CUDA_R_32F, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld);
    if (s != CUBLAS_STATUS_SUCCESS || a.batch.count <= 1) return s;
    const int32_t count = a.batch.count;
    const int64_t offset = stride;
    s = api_.layoutSet(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    if (s == CUBLAS_STATUS_SUCCESS) s = api_.layoutSet(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof offset);
    return s;
  }

  const Api& api_;
  cublasStatus_t status_ = CUBLAS_STATUS_NOT_INITIALIZED;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
};

// The configuration attributes in CublasLtAlgo's field order, with their width in cuBLASLt.
struct ConfigAttribute {
  cublasLtMatmulAlgoConfigAttributes_t attribute;
  int CublasLtAlgo::*field;
  bool narrow;  // uint16_t in cuBLASLt (inner and cluster shape); 0 means "any" and is not set
};
constexpr std::array<ConfigAttribute, 8> kConfigAttributes = {{
    {CUBLASLT_ALGO_CONFIG_TILE_ID, &CublasLtAlgo::tile, false},
    {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &CublasLtAlgo::splitK, false},
    {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &CublasLtAlgo::reduction, false},
    {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &CublasLtAlgo::swizzle, false},
    {CUBLASLT_ALGO_CONFIG_STAGES_ID, &CublasLtAlgo::stages, false},
    {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &CublasLtAlgo::custom, false},
    {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &CublasLtAlgo::innerShape, true},
    {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &CublasLtAlgo::clusterShape, true},
}};

// The configuration an algorithm object holds. Attributes an older cuBLASLt lacks read as 0.
CublasLtAlgo configOf(const Api& api, const cublasLtMatmulAlgo_t& algo) {
  CublasLtAlgo out;
  std::size_t written = 0;
  api.configGet(&algo, CUBLASLT_ALGO_CONFIG_ID, &out.id, sizeof out.id, &written);
  for (const ConfigAttribute& c : kConfigAttributes) {
    int32_t wide = 0;
    uint16_t narrow = 0;
    void* buf = c.narrow ? static_cast<void*>(&narrow) : static_cast<void*>(&wide);
    const std::size_t bytes = c.narrow ? sizeof narrow : sizeof wide;
    const bool read = api.configGet(&algo, c.attribute, buf, bytes, &written) == CUBLAS_STATUS_SUCCESS;
    out.*c.field = !read ? 0 : c.narrow ? narrow : wide;
  }
  if (out.splitK < 1) out.splitK = 1;
  return out;
}

// The algorithm object `c` describes; false where cuBLASLt has no such algorithm or refuses an
// attribute.
bool buildAlgo(const Api& api, cublasLtHandle_t h, const CublasLtAlgo& c, cublasLtMatmulAlgo_t& algo) {
  if (api.algoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, c.id, &algo) !=
      CUBLAS_STATUS_SUCCESS)
    return false;
  for (const ConfigAttribute& a : kConfigAttributes) {
    const int value = c.*a.field;
    if (a.narrow && value == 0) continue;  // "any": older versions lack the attribute
    const int32_t wide = value;
    const uint16_t narrow = static_cast<uint16_t>(value);
    const void* buf = a.narrow ? static_cast<const void*>(&narrow) : static_cast<const void*>(&wide);
    if (api.configSet(&algo, a.attribute, buf, a.narrow ? sizeof narrow : sizeof wide) != CUBLAS_STATUS_SUCCESS)
      return false;
  }
  return true;
}

// The heuristic's configurations for the problem, in its order (its first is the one cublasSgemm
// ran, measured on an H100 with cuBLAS 13.1).
cublasStatus_t heuristicAlgos(const Api& api, cublasLtHandle_t h, const Descriptors& d, std::size_t workspaceBytes,
                              std::vector<CublasLtAlgo>& out) {
  cublasLtMatmulPreference_t pref = nullptr;
  cublasStatus_t s = api.prefCreate(&pref);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  const uint64_t bytes = workspaceBytes;
  s = api.prefSet(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof bytes);
  std::array<cublasLtMatmulHeuristicResult_t, 32> results{};
  int returned = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = api.heuristic(h, d.op(), d.a(), d.b(), d.c(), d.c(), pref, static_cast<int>(results.size()), results.data(), &returned);
  api.prefDestroy(pref);
  for (int i = 0; s == CUBLAS_STATUS_SUCCESS && i < returned; ++i)
    if (results[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS)
      out.push_back(configOf(api, results[static_cast<std::size_t>(i)].algo));
  return s;
}

// An integer array capability of an algorithm (tile or stage ids); {0} ("undefined": the
// algorithm picks) when it has none.
std::vector<int> capIds(const Api& api, const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t cap) {
  std::size_t bytes = 0;
  std::vector<int> ids;
  if (api.capGet(&algo, cap, nullptr, 0, &bytes) == CUBLAS_STATUS_SUCCESS && bytes >= sizeof(int)) {
    ids.resize(bytes / sizeof(int));
    if (api.capGet(&algo, cap, ids.data(), ids.size() * sizeof(int), &bytes) != CUBLAS_STATUS_SUCCESS) ids.clear();
  }
  if (ids.empty()) ids.push_back(0);
  return ids;
}

int capInt(const Api& api, const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t cap) {
  int32_t v = 0;
  std::size_t bytes = 0;
  return api.capGet(&algo, cap, &v, sizeof v, &bytes) == CUBLAS_STATUS_SUCCESS ? v : 0;
}

// The most custom options (kernel variants of one configuration) listed per algorithm: cuBLASLt
// may offer more, and each is one more configuration to screen.
constexpr int kMostCustomOptions = 7;

// Whether cublasLtMatmulAlgoCheck accepts configuration `c` for the problem within the workspace.
bool accepts(const Api& api, cublasLtHandle_t h, const Descriptors& d, const CublasLtAlgo& c, std::size_t workspaceBytes) {
  cublasLtMatmulAlgo_t algo;
  cublasLtMatmulHeuristicResult_t checked{};
  return buildAlgo(api, h, c, algo) &&
         api.check(h, d.op(), d.a(), d.b(), d.c(), d.c(), &algo, &checked) == CUBLAS_STATUS_SUCCESS &&
         checked.workspaceSize <= workspaceBytes;
}

// Every configuration of algorithm `id` that cublasLtMatmulAlgoCheck accepts for the problem
// within the workspace: each tile and stage count, unsplit or split in 2–8 with each reduction
// it supports, each swizzle. Measured on an H100 at 1024³ the fastest split 2–4 ways.
void enumerateAlgo(const Api& api, cublasLtHandle_t h, const Descriptors& d, int id, std::size_t workspaceBytes,
                   std::size_t limit, std::vector<CublasLtAlgo>& out, std::set<std::string>& seen) {
  cublasLtMatmulAlgo_t base;
  if (api.algoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, id, &base) !=
      CUBLAS_STATUS_SUCCESS)
    return;
  const bool splits = capInt(api, base, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT) != 0;
  const int reductions = capInt(api, base, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
  const int swizzles = capInt(api, base, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT) != 0 ? 1 : 0;
  for (int tile : capIds(api, base, CUBLASLT_ALGO_CAP_TILE_IDS))
    for (int stages : capIds(api, base, CUBLASLT_ALGO_CAP_STAGES_IDS))
      for (int splitK : {1, 2, 3, 4, 6, 8})
        for (int reduction : {0, 1, 2, 4})
          for (int swizzle = 0; swizzle <= swizzles; ++swizzle) {
            if (out.size() >= limit) return;
            if ((splitK == 1) != (reduction == 0)) continue;
            if (splitK > 1 && (!splits || !(reductions & reduction))) continue;
            CublasLtAlgo c;
            c.id = id, c.tile = tile, c.stages = stages, c.splitK = splitK, c.reduction = reduction, c.swizzle = swizzle;
            if (seen.count(c.name()) || !accepts(api, h, d, c, workspaceBytes)) continue;
            seen.insert(c.name());
            out.push_back(c);
          }
}

// After every algorithm's default kernel: each listed configuration's variants (custom options
// 1 to its algorithm's CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, at most kMostCustomOptions), option by
// option, so that a limit cuts the later options of every configuration alike. Only what the
// default accepted is tried: one check per variant.
void addCustomOptions(const Api& api, cublasLtHandle_t h, const Descriptors& d, std::size_t workspaceBytes,
                      std::size_t limit, std::vector<CublasLtAlgo>& out, std::set<std::string>& seen) {
  std::map<int, int> mostOf;  // algorithm id -> its largest custom option
  for (const CublasLtAlgo& a : out) {
    cublasLtMatmulAlgo_t base;
    if (mostOf.count(a.id)) continue;
    mostOf[a.id] = api.algoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                a.id, &base) == CUBLAS_STATUS_SUCCESS
                       ? std::min(capInt(api, base, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX), kMostCustomOptions)
                       : 0;
  }
  const std::size_t defaults = out.size();
  for (int custom = 1; custom <= kMostCustomOptions; ++custom)
    for (std::size_t i = 0; i < defaults; ++i) {
      if (out.size() >= limit) return;
      CublasLtAlgo c = out[i];
      if (c.custom != 0 || custom > mostOf[c.id]) continue;
      c.custom = custom;
      if (seen.count(c.name()) || !accepts(api, h, d, c, workspaceBytes)) continue;
      seen.insert(c.name());
      out.push_back(c);
    }
}

}  // namespace

// cuBLASLt's pointer-array batches are not mapped here (the library's cuBLAS call takes them):
// a status with `error` saying so.
static bool refusesPointerArrays(const SgemmArgs& args, std::string& error) {
  if (args.batch.arrayA == 0) return false;
  error = "cuBLASLt's configurations are listed and run for one product or strided batches, not pointer arrays";
  return true;
}

const CublasLtLibrary* CublasLtLibrary::get(std::string& why) {
  static std::string failure;
  static const CublasLtLibrary* loaded = [] {
    std::string errors;
    const char* name = nullptr;
    if (const Api* api = openFirst<Api>({"libcublasLt.so.13", "libcublasLt.so.12"}, resolveAll, name, errors))
      return static_cast<const CublasLtLibrary*>(new CublasLtLibrary(name, api));  // never freed, as the library
    failure = fmt::format("cuBLASLt cannot be loaded ({}): install the CUDA math libraries or add their directory to "
                          "LD_LIBRARY_PATH",
                          errors);
    return static_cast<const CublasLtLibrary*>(nullptr);
  }();
  if (!loaded) why = failure;
  return loaded;
}

std::string CublasLtLibrary::statusText(int s) const {
  const char* n = api_->statusName ? api_->statusName(static_cast<cublasStatus_t>(s)) : nullptr;
  return n ? n : fmt::format("cublasStatus {}", s);
}

int CublasLtLibrary::create(void*& handle, std::string& error) const {
  cublasLtHandle_t h = nullptr;
  const cublasStatus_t s = api_->create(&h);
  if (s != CUBLAS_STATUS_SUCCESS) error = fmt::format("cublasLtCreate ({}) failed: {}", name_, statusText(s));
  handle = h;
  return s;
}

void CublasLtLibrary::destroy(void* handle) const {
  if (handle) api_->destroy(static_cast<cublasLtHandle_t>(handle));
}

int CublasLtLibrary::algorithms(void* handle, const SgemmArgs& args, std::size_t workspaceBytes, std::size_t limit,
                                std::vector<CublasLtAlgo>& out, std::string& error) const {
  out.clear();
  if (refusesPointerArrays(args, error)) return CUBLAS_STATUS_NOT_SUPPORTED;
  auto h = static_cast<cublasLtHandle_t>(handle);
  const Descriptors d(*api_, args);
  cublasStatus_t s = d.status();
  if (d.ok()) s = heuristicAlgos(*api_, h, d, workspaceBytes, out);
  if (s != CUBLAS_STATUS_SUCCESS) {
    error = fmt::format("cuBLASLt's heuristic ({}) failed for {}: {}", name_, problemOf(args).text(), statusText(s));
    return s;
  }
  if (out.size() > limit) out.resize(limit);
  std::set<std::string> seen;
  for (const CublasLtAlgo& a : out) seen.insert(a.name());
  std::array<int, 64> ids{};
  int count = 0;
  if (api_->algoIds(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                    static_cast<int>(ids.size()), ids.data(), &count) == CUBLAS_STATUS_SUCCESS)
    for (int i = 0; i < count; ++i) enumerateAlgo(*api_, h, d, ids[static_cast<std::size_t>(i)], workspaceBytes, limit, out, seen);
  addCustomOptions(*api_, h, d, workspaceBytes, limit, out, seen);
  return CUBLAS_STATUS_SUCCESS;
}

int CublasLtLibrary::rowMajorMatmul(void* handle, const SgemmArgs& args, const CublasLtAlgo& algo, CUdeviceptr workspace,
                                    std::size_t workspaceBytes, CUstream stream, std::string& error) const {
  if (refusesPointerArrays(args, error)) return CUBLAS_STATUS_NOT_SUPPORTED;
  auto h = static_cast<cublasLtHandle_t>(handle);
  const Descriptors d(*api_, args);
  cublasStatus_t s = d.status();
  cublasLtMatmulAlgo_t built;
  cublasLtMatmulHeuristicResult_t checked{};
  // Checked before it runs: a configuration that does not fit this problem (or this cuBLASLt)
  // is a status, never a launch.
  if (s == CUBLAS_STATUS_SUCCESS && !buildAlgo(*api_, h, algo, built)) s = CUBLAS_STATUS_NOT_SUPPORTED;
  if (s == CUBLAS_STATUS_SUCCESS) s = api_->check(h, d.op(), d.a(), d.b(), d.c(), d.c(), &built, &checked);
  if (s == CUBLAS_STATUS_SUCCESS && checked.workspaceSize > workspaceBytes) s = CUBLAS_STATUS_NOT_SUPPORTED;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = api_->matmul(h, d.op(), &args.alpha, reinterpret_cast<const void*>(args.b), d.a(), reinterpret_cast<const void*>(args.a),
                     d.b(), &args.beta, reinterpret_cast<const void*>(args.c), d.c(), reinterpret_cast<void*>(args.c), d.c(),
                     &built, reinterpret_cast<void*>(workspace), workspaceBytes, reinterpret_cast<cudaStream_t>(stream));
  if (s != CUBLAS_STATUS_SUCCESS)
    error = fmt::format("cublasLtMatmul ({}, {}) failed for {}: {}", name_, algo.name(), problemOf(args).text(),
                        statusText(s));
  return s;
}

}  // namespace gemmtune
