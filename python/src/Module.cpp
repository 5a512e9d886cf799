// gemmtune._gemmtune: the compiled half of the Python package. It runs one planned GEMM through
// gemmtune::Library (one Library per precision class, made on first use and kept for the
// process) and answers best(); the Python half reads the framework's tensors and streams.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <stdexcept>
#include <string>

#include "JaxFfi.hpp"
#include "LibraryCalls.hpp"
#include "StackedBatches.hpp"
#include "ViewPlan.hpp"
#include "gemmtune/Errors.hpp"
#include "gemmtune/Library.hpp"
#include "gemmtune/Precision.hpp"

namespace nb = nanobind;
using namespace gemmtune;
using gemmtune::python::GemmPlan;
using gemmtune::python::TensorView;

namespace {

using python::launchPlanned;
using python::libraryFor;
using python::makePrimaryContextCurrent;
using python::precisionFrom;

Op opFrom(char c) {
  if (c == 'n' || c == 'N') return Op::N;
  if (c == 't' || c == 'T') return Op::T;
  throw std::invalid_argument(std::string("layout letters are n or t, not ") + c);
}

Status launch(Library& library, std::uintptr_t stream, const GemmPlan& p, float alpha, float beta) {
  return launchPlanned(library, reinterpret_cast<CUstream>(stream), p, alpha, beta);
}

// Returns "" when the product was launched (or there was nothing to compute), "scale" when only
// out = beta·out remains (K == 0, or alpha == 0: like BLAS, A and B are then not read, so NaN in
// them does not reach out), "declined" when the library left the call to the caller with out
// untouched (a CUDA graph capture of a shape not prepared on that stream). The Python side does
// those two with the framework's own operations.
std::string gemm(const std::string& precision, int device, std::uintptr_t stream, const TensorView& a,
                 const TensorView& b, const TensorView& out, float alpha, float beta) {
  const GemmPlan plan = python::planGemm(a, b, out);
  if (!plan.launch) return plan.scaleOnly ? "scale" : "";
  if (alpha == 0.0f) return "scale";
  Library& library = libraryFor(precisionFrom(precision));
  Status status;
  {
    nb::gil_scoped_release unlocked;  // the first call of a shape may compile for seconds
    status = launch(library, stream, plan, alpha, beta);
    if (status == Status::no_gpu && makePrimaryContextCurrent(device)) status = launch(library, stream, plan, alpha, beta);
  }
  if (status == Status::ok) return "";
  if (status == Status::declined) return "declined";
  const std::string why = Library::lastError();
  if (status == Status::invalid_argument) throw std::invalid_argument("gemmtune refused the call: " + why);
  if (status == Status::no_gpu) throw NoGpuError(why);
  throw std::runtime_error(std::string("gemmtune: ") + toString(status) + ": " + why);
}

// `calls` launches of one planned product with nothing else around them: the benchmark's measure of
// the C++ call itself (bench/python/python_bench.py sets the Python call beside it).
void launchLoop(const std::string& precision, std::uintptr_t stream, const TensorView& a, const TensorView& b,
                const TensorView& out, int calls) {
  const GemmPlan plan = python::planGemm(a, b, out);
  Library& library = libraryFor(precisionFrom(precision));
  for (int i = 0; i < calls; ++i)
    if (launch(library, stream, plan, 1.0f, 0.0f) != Status::ok) throw std::runtime_error(Library::lastError());
}

nb::tuple best(int device, const std::string& layout, long long M, long long N, long long K, long long batch,
               const std::string& precision) {
  if (layout.size() != 2) throw std::invalid_argument("layout is two letters: nn, nt, tn or tt, not \"" + layout + "\"");
  Library& library = libraryFor(precisionFrom(precision));
  const Choice c = library.best(device, opFrom(layout[0]), opFrom(layout[1]), M, N, K, batch);
  return nb::make_tuple(c.instance, toString(c.match), c.measuredSize, c.measuredGflops, c.cublasGflops, c.note);
}

}  // namespace

namespace nanobind::detail {
// Dims from a tuple or list of ints (torch.Size is a tuple), and to a tuple.
template <>
struct type_caster<python::Dims> {
  NB_TYPE_CASTER(python::Dims, const_name("Sequence[int]"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    const bool tuple = PyTuple_Check(o);
    if (!tuple && !PyList_Check(o)) return false;
    const Py_ssize_t n = tuple ? PyTuple_GET_SIZE(o) : PyList_GET_SIZE(o);
    value.count = static_cast<int>(n);
    for (Py_ssize_t i = 0; i < n && i < python::Dims::kMaxDims; ++i) {
      PyObject* item = tuple ? PyTuple_GET_ITEM(o, i) : PyList_GET_ITEM(o, i);
      const long long v = PyLong_AsLongLong(item);
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      value.values[i] = v;
    }
    return true;
  }
  static handle from_cpp(const python::Dims& dims, rv_policy, cleanup_list*) noexcept {
    PyObject* t = PyTuple_New(dims.count);
    for (int i = 0; t && i < dims.count; ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(dims[i]));
    return t;
  }
};

// A TensorView from the tuple (data pointer, shape, strides) the Python side builds.
template <>
struct type_caster<TensorView> {
  NB_TYPE_CASTER(TensorView, const_name("tuple[int, Sequence[int], Sequence[int]]"))
  bool from_python(handle src, uint8_t flags, cleanup_list* cleanup) noexcept {
    PyObject* o = src.ptr();
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 3) return false;
    make_caster<std::uintptr_t> data;
    make_caster<python::Dims> shape, strides;
    if (!data.from_python(PyTuple_GET_ITEM(o, 0), flags, cleanup) ||
        !shape.from_python(PyTuple_GET_ITEM(o, 1), flags, cleanup) ||
        !strides.from_python(PyTuple_GET_ITEM(o, 2), flags, cleanup))
      return false;
    value.data = data.value;
    value.shape = shape.value;
    value.strides = strides.value;
    return true;
  }
};
}  // namespace nanobind::detail

NB_MODULE(_gemmtune, m) {
  m.doc() = "gemmtune's compiled core: planned GEMM launches and best() through gemmtune::Library";
  static nb::exception<NoGpuError> noGpu(m, "NoGpuError", PyExc_RuntimeError);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("gemm", &gemm, nb::arg("precision"), nb::arg("device"), nb::arg("stream"), nb::arg("a"), nb::arg("b"), nb::arg("out"),
        nb::arg("alpha"), nb::arg("beta"));
  m.def("result_shape", &python::resultShape, nb::arg("a_shape"), nb::arg("b_shape"));
  m.def(
      "plan",
      [](const TensorView& a, const TensorView& b, const TensorView& out) {
        const GemmPlan p = python::planGemm(a, b, out);
        nb::dict d;
        d["launch"] = p.launch, d["scale_only"] = p.scaleOnly;
        d["layout"] = std::string{static_cast<char>(p.opA), static_cast<char>(p.opB)};
        d["m"] = p.M, d["n"] = p.N, d["k"] = p.K, d["a"] = p.A, d["b"] = p.B, d["c"] = p.C;
        d["lda"] = p.lda, d["ldb"] = p.ldb, d["ldc"] = p.ldc;
        d["stride_a"] = p.strideA, d["stride_b"] = p.strideB, d["stride_c"] = p.strideC, d["batch"] = p.batch;
        return d;
      },
      "The library call gemm() would make (for tests and for explaining a layout)");
  m.def("_launch_loop", &launchLoop, nb::arg("precision"), nb::arg("stream"), nb::arg("a"), nb::arg("b"),
        nb::arg("out"), nb::arg("calls"));
  m.def(
      "_stack_batches",
      [](const python::Dims& a, const python::Dims& b, const python::Dims& out) {
        const python::StackedCall c = python::stackBatches(a, b, out, 0, 0, 0);
        nb::dict d;
        d["calls"] = c.calls, d["stride_a"] = c.strideA, d["stride_b"] = c.strideB, d["stride_out"] = c.strideOut;
        d["a"] = c.a.shape, d["b"] = c.b.shape, d["out"] = c.out.shape;
        return d;
      },
      "How JAX's handler batches a product of these shapes (for tests)");
  m.def(
      "jax_handler",
      []() -> nb::object {
        void* handler = python::jaxMatmulHandler();
        return handler ? nb::object(nb::capsule(handler)) : nb::none();
      },
      "The XLA FFI handler of gemmtune_matmul as a PyCapsule (gemmtune/_jax.py registers it with JAX); None "
      "when this build has no JAX support");
  m.def("best", &best, nb::arg("device"), nb::arg("layout"), nb::arg("m"), nb::arg("n"), nb::arg("k"),
        nb::arg("batch"), nb::arg("precision"));
}
