// gemmtune::Library: run the fastest tuned SGEMM for this GPU and problem from your own code.
//
//   gemmtune::Library lib;                      // default results DB ($GEMMTUNE_DB or XDG path),
//                                               // then $GEMMTUNE_SYSTEM_DB, else
//                                               // <prefix>/share/gemmtune/system.db (read-only snapshots)
//   auto choice = lib.best(0, 4096, 4096, 4096); // what would run, and how good the match is
//   lib.sgemm(stream, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);   // device pointers, row-major
//   // x·Wᵀ as nn.Linear computes it: x is M x K, W is N x K (row-major), so op(B) = T, ldb = K
//   lib.sgemm(stream, Order::row_major, Op::N, Op::T, M, N, K, 1.0f, x, K, W, K, 0.0f, y, N);
//   // 64 products of 512 x 512 matrices packed one after another; column-major as in cuBLAS
//   lib.sgemmStridedBatched(stream, Order::column_major, Op::N, Op::N, 512, 512, 512, 1.0f, A, 512,
//                           512 * 512, B, 512, 512 * 512, 0.0f, C, 512, 512 * 512, 64);
//
// cuBLAS is a candidate like any tuned kernel: where the tuner measured it fastest (its row,
// "cublas_nn" and so on), best() names it and sgemm() runs cuBLAS (default math: plain FP32, never
// TF32), loaded at run time (libcublas.so.13, else .so.12; nothing links it). Where it cannot be
// loaded, sgemm() runs the best gemmtune kernel instead and warns once. Options::cublas = false
// keeps to gemmtune's kernels.
//
// Error policy: the constructor and best() never throw for a missing, damaged or tampered
// database — they fall back (nearest measured size, then a built-in default kernel) and log one
// warning per cause on the spdlog logger named "gemmtune". best() throws only for a caller's
// mistake (M, N or K < 1) or an absent GPU. sgemm() never throws at all: it returns a Status,
// with lastError() for details.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gemmtune/GpuSpec.hpp"
#include "gemmtune/Precision.hpp"

struct CUstream_st;  // cudaStream_t and CUstream are both CUstream_st*

namespace gemmtune {

namespace library {
struct GemmCall;
}  // namespace library

enum class Match {
  exact,           // measured at this M, N, K, layout and batch on this GPU
  nearest_size,    // measured at one of the nearest sizes, predicted fastest here (guarded form when the tiles do not divide)
  default_config,  // nothing usable measured: the built-in default configuration
};

struct Choice {
  std::string instance;      // canonical name of the configuration sgemm() runs; "cublas_<layout>": cuBLAS
  Match match = Match::default_config;
  std::string measuredSize;  // "4096", "4096x1024x512", "4096 tn", "512 nt batch 64"; empty for default_config
  double measuredGflops = 0; // at measuredSize; 0 for default_config
  double cublasGflops = 0;   // cuBLAS (default math) at measuredSize on this GPU; 0 when not measured
  std::string note;          // why the match is not exact, when it is not (for nearest_size: why this row);
                             // for cuBLAS: that it was measured (or predicted) fastest
};

// op(X): X as stored (N) or its transpose (T), as cuBLAS's CUBLAS_OP_N / CUBLAS_OP_T.
enum class Op : char { N = 'n', T = 't' };

// How the matrices are stored. row_major: A is M x K (op N, lda >= K) or K x M (op T, lda >= M),
// B is K x N (op N, ldb >= N) or N x K (op T, ldb >= K), C is M x N (ldc >= N), each row
// contiguous. column_major: exactly cuBLAS's cublasSgemm semantics (A is M x K with lda >= M for
// op N, K x M with lda >= K for op T; B is K x N with ldb >= K for op N, N x K with ldb >= N for
// op T; C is M x N with ldc >= M), each column contiguous. A column-major call is served as the
// row-major product Cᵀ = op(B)ᵀ·op(A)ᵀ: no data moves.
enum class Order { row_major, column_major };

enum class Status {
  ok,
  invalid_argument,  // a dimension < 1, a leading dimension too small for the layout, a null pointer or
                     // array, a batch count < 1, a negative stride, batches whose C overlap
  no_gpu,            // no CUDA driver, or no current context on this thread
  launch_failed,     // the driver refused the launch, or no kernel could be loaded (the message says
                     // why); nothing ran and C is untouched
  declined,          // nothing was launched and C is untouched; run the call some other way: the
                     // library would have to prepare it (plan, load, allocate) on a stream that is
                     // capturing a CUDA graph (call the shape once before capturing), its plan
                     // splits K (split-K kernels are never captured: a graph would share the
                     // stream's workspace with every replay), or Options::measuredWinsOnly leaves
                     // it to the caller
  partial_failure,   // a call of several launches (more than kBatchesPerLaunch batches) failed after
                     // its first: the batches before the failed launch were written, the rest not
};

const char* toString(Match match);
const char* toString(Status status);

class Library {
 public:
  // An empty path means $GEMMTUNE_DB, else $XDG_DATA_HOME/gemmtune/tune.db. After it the library
  // consults a read-only system snapshot (a file from `gemmtune db snapshot`): the store
  // $GEMMTUNE_SYSTEM_DB names (set but empty: none), else <prefix>/share/gemmtune/system.db
  // beside the installed library, when that file exists.
  explicit Library(std::filesystem::path dbPath = {});

  struct Options {
    // Store locations (a path, sqlite:PATH or postgresql://...), highest precedence first: e.g.
    // {user database, system snapshot}. An exact answer from the first store that has one wins,
    // else a nearest-size answer from the first store that has one. Lookups only read them; the
    // first store also receives the record of shapes served without a tuned row (recordSeen
    // below), so put the user's database first, never a shared snapshot. Empty: as Library() above.
    std::vector<std::string> stores;
    // cuBLAS as a candidate (loaded at run time): where it was measured fastest, or predicted
    // faster for an unmeasured shape, sgemm() calls it (Choice::instance "cublas_nn", ...).
    // false: gemmtune's kernels only.
    bool cublas = true;
    // Record the shapes sgemm() serves without an exact row (calls and estimated time) in the
    // first store (the user's database), off the hot path, for `gemmtune seen` and `gemmtune tune
    // --seen` (docs/library.md, "Recorded shapes"). $GEMMTUNE_RECORD_SEEN=0 also turns it off.
    bool recordSeen = true;
    // Run only where this GPU has an exact measured row of a gemmtune kernel that beat cuBLAS
    // there (problem, layout and batch; Choice::match exact, cuBLAS measured at that problem and
    // measuredGflops >= kMeasuredWinMargin · cublasGflops), in the form that was measured (operands whose leading
    // dimensions or alignment need another form are declined too); every other call returns
    // Status::declined without launching anything. The cuBLAS drop-in (libgemmtune_cublas.so)
    // uses it to leave the rest to cuBLAS.
    bool measuredWinsOnly = false;
    // The arithmetic sgemm() may run (gemmtune/Precision.hpp). strict (the default): FP32 FMA
    // kernels only, never a tensor-core family's row, whatever is stored. faithful: also kernels
    // that compute on tensor cores at FP32 accuracy (tf32x3, fp16x3, wgmmafp16x3), where they were tuned and are fastest.
    PrecisionClass precision = PrecisionClass::strict;
  };
  explicit Library(const Options& options);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The configuration sgemm() would run for device `device` (a CUDA ordinal) and M x N x K.
  // Throws only for M, N or K < 1 (std::invalid_argument) and when there is no GPU `device`
  // (gemmtune::NoGpuError without a driver or GPU, gemmtune::UsageError for an ordinal out of range).
  Choice best(int device, long long M, long long N, long long K);
  // The same for a GPU described rather than present (the fields `gemmtune gpus --json` prints),
  // so a choice can be planned on a machine without that GPU. Throws only for M, N or K < 1.
  Choice best(const GpuSpec& gpu, long long M, long long N, long long K);
  // The same for row-major op(A)·op(B) and `batch` products per call (strided or pointer arrays
  // alike). A column-major call (opA, opB, M, N, K) runs as the row-major (opB, opA, N, M, K): ask
  // for that. Throws only as above and for batch < 1.
  Choice best(int device, Op opA, Op opB, long long M, long long N, long long K, long long batch = 1);
  Choice best(const GpuSpec& gpu, Op opA, Op opB, long long M, long long N, long long K, long long batch = 1);

  // C = alpha * A * B + beta * C on `stream` (nullptr: the default stream) in the calling
  // thread's current CUDA context. Row-major: A is M x K (lda >= K), B is K x N (ldb >= N), C is
  // M x N (ldc >= N); pointers 4-byte aligned. beta == 0 never reads C. alpha == 0 still reads A
  // and B (the kernels compute alpha·(A·B)): NaN or Inf there reach C, where BLAS reads neither
  // (the cuBLAS drop-in leaves alpha == 0 calls to cuBLAS for that reason). Thread-safe; never throws.
  // The first call per context and shape chooses and loads the kernel (NVRTC only when the
  // database holds no usable binary); later calls cost a hash lookup plus the launch. Under CUDA
  // graph capture a prepared shape is captured like any launch; one that still needs preparing on
  // the capturing stream, or whose plan splits K, returns Status::declined (preparing allocates and
  // loads, which a capture forbids; a split-K workspace must not be shared by graph replays).
  // Preparing while another stream or thread captures is done in relaxed capture mode. Launches
  // are asynchronous: a fault inside the kernel surfaces at the next synchronisation. Kernels
  // that split K (serial split-K) use a small workspace the library allocates once per context
  // and stream and keeps until it is destroyed; calls on one stream share it in stream order.
  Status sgemm(CUstream_st* stream, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc) noexcept;

  // C = alpha * op(A) * op(B) + beta * C in either storage order (see Order and Op). Everything
  // else as the shorthand above.
  Status sgemm(CUstream_st* stream, Order order, Op opA, Op opB, int M, int N, int K, float alpha, const float* A,
               int lda, const float* B, int ldb, float beta, float* C, int ldc) noexcept;

  // `batch` independent products in one call: product b reads A + b·strideA and B + b·strideB and
  // writes C + b·strideC (strides in floats, like cublasSgemmStridedBatched). Strides of A or B may
  // be 0 (one matrix for every batch); the batches' C must not overlap (strideC at least one C:
  // (M - 1)·ldc + N row-major, (N - 1)·ldc + M column-major). More than 1023 batches run as
  // several launches (grid z holds batches × K slices), in order, on `stream`.
  Status sgemmStridedBatched(CUstream_st* stream, Order order, Op opA, Op opB, int M, int N, int K, float alpha,
                             const float* A, int lda, long long strideA, const float* B, int ldb, long long strideB,
                             float beta, float* C, int ldc, long long strideC, int batch) noexcept;

  // The same with per-product pointers: A[b], B[b] and C[b] (like cublasSgemmBatched). The three
  // arrays are in device memory and are read by the kernel, never by the host (no
  // synchronisation); the host cannot check the matrices' alignment, so the library assumes
  // 4-byte alignment and runs kernels that accept it. Products must not share a C.
  Status sgemmBatched(CUstream_st* stream, Order order, Op opA, Op opB, int M, int N, int K, float alpha,
                      const float* const A[], int lda, const float* const B[], int ldb, float beta, float* const C[],
                      int ldc, int batch) noexcept;

  // The message for this thread's last non-ok Status.
  static std::string lastError();

  // Batches one launch holds at most (grid z); a call of more runs as several launches (a later
  // one failing gives Status::partial_failure).
  static constexpr int kBatchesPerLaunch = 1023;

  // How much faster than cuBLAS a measured row must be for Options::measuredWinsOnly to run it.
  // A tune's medians move by 1-2 % between runs, and in a program the kernel sees other L2 and clock
  // states than in its timing: measured on an H100 (scripts/dropin-demo.sh), serving rows 0-5 % faster
  // made a PyTorch training step 1 % slower.
  static constexpr double kMeasuredWinMargin = 1.03;

 private:
  Status run(CUstream_st* stream, const library::GemmCall& call) noexcept;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmtune
