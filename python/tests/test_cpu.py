"""CPU tests of the Python package (CI runs them on a machine without a GPU): the package imports,
the gemmtune command runs, arguments are refused with messages naming them, and tensor layouts
become the library calls expected (gemmtune._gemmtune.plan shows the call without running it)."""

import itertools
import os
import re
import subprocess

import pytest

import gemmtune
from gemmtune import _gemmtune


_addresses = itertools.count(1 << 40, 1 << 40)  # views far apart: no overlap unless a test wants one


def view(shape, strides, data=None):
    return (next(_addresses) if data is None else data, tuple(shape), tuple(strides))


def row_major(*shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    return view(shape, strides)


def test_the_package_imports_and_names_its_api():
    assert {"matmul", "best", "tune", "results", "Choice", "NoGpuError"} <= set(gemmtune.__all__)
    assert issubclass(gemmtune.NoGpuError, RuntimeError)


OFFLINE = os.environ.get("GEMMTUNE_OFFLINE_INSTALL") == "1"  # scripts/python-check.sh: installed --no-deps


@pytest.mark.skipif(OFFLINE, reason="installed without its dependencies (scripts/python-check.sh)")
def test_the_package_carries_nvrtc_and_cutlass_and_the_command_uses_them():
    nvrtc, cutlass = gemmtune._deps.pinned_nvrtc(), gemmtune._deps.bundled_cutlass()
    assert nvrtc is not None and nvrtc.name == "libnvrtc.so.13"
    assert cutlass is not None and (cutlass / "cutlass" / "gemm" / "device" / "gemm.h").is_file()
    env = {k: v for k, v in os.environ.items() if k not in ("GEMMTUNE_NVRTC", "GEMMTUNE_CUTLASS_DIR")}
    run = subprocess.run(["gemmtune", "--version"], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    assert re.search(rf"NVRTC 13\.\d+ from {re.escape(str(nvrtc))} \(GEMMTUNE_NVRTC\)", run.stdout), run.stdout


def test_non_tensors_are_a_type_error_naming_the_argument():
    with pytest.raises(TypeError, match="^a must be a CUDA float32 array of PyTorch, CuPy or JAX, not builtins.list"):
        gemmtune.matmul([[1.0]], [[1.0]])


def test_best_without_a_gpu_says_so():
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("this machine has a GPU")
    with pytest.raises(gemmtune.NoGpuError, match="NVIDIA GPU"):
        gemmtune.best(1024, 1024, 1024)


@pytest.mark.parametrize("layout,precision,message", [
    ("nx", "strict", "layout letters are n or t"), ("n", "strict", "layout is two letters"),
    ("nn", "tf32", 'precision must be "strict" or "faithful"')])
def test_best_refuses_bad_arguments(layout, precision, message):
    with pytest.raises(ValueError, match=message):
        gemmtune.best(64, 64, 64, layout, precision=precision)


def test_row_major_operands_are_the_nn_layout():
    p = _gemmtune.plan(row_major(30, 20), row_major(20, 10), row_major(30, 10))
    assert (p["layout"], p["m"], p["n"], p["k"], p["lda"], p["ldb"], p["ldc"], p["batch"]) == ("nn", 30, 10, 20, 20, 10, 10, 1)


def test_transposed_views_are_read_transposed_without_a_copy():
    a_t = view((30, 20), (1, 30))   # x.T of a 20 x 30 row-major x
    b_t = view((20, 10), (1, 24))   # y.T of a 10 x 20 slice of a 10 x 24 tensor (padded rows)
    p = _gemmtune.plan(a_t, b_t, row_major(30, 10))
    assert (p["layout"], p["lda"], p["ldb"]) == ("tt", 30, 24)


def test_a_column_major_out_computes_the_transposed_product():
    out_t = view((30, 10), (1, 30), data=8192)
    p = _gemmtune.plan(view((30, 20), (20, 1), data=4096), view((20, 10), (1, 20), data=65536), out_t)
    # Cᵀ = op(B)ᵀ·op(A)ᵀ: b (read transposed) becomes the first operand, read as stored.
    assert (p["layout"], p["m"], p["n"], p["a"], p["b"], p["c"], p["ldc"]) == ("nt", 10, 30, 65536, 4096, 8192, 30)


def test_padded_rows_keep_their_leading_dimension():
    p = _gemmtune.plan(view((30, 20), (64, 1)), row_major(20, 10), view((30, 10), (16, 1)))
    assert (p["lda"], p["ldc"]) == (64, 16)


def test_a_single_row_or_column_accepts_any_stride():
    p = _gemmtune.plan(view((1, 20), (999, 1)), view((20, 1), (1, 7)), view((1, 1), (5, 3)))
    assert (p["layout"], p["m"], p["n"], p["lda"]) == ("nn", 1, 1, 20)


def test_batches_and_broadcast_operands():
    p = _gemmtune.plan(row_major(8, 30, 20), row_major(20, 10), row_major(8, 30, 10))
    assert (p["batch"], p["stride_a"], p["stride_b"], p["stride_c"]) == (8, 600, 0, 300)
    p = _gemmtune.plan(view((1, 30, 20), (0, 20, 1)), row_major(8, 20, 10), row_major(8, 30, 10))
    assert (p["batch"], p["stride_a"], p["stride_b"]) == (8, 0, 200)


def test_empty_products_launch_nothing():
    assert _gemmtune.plan(row_major(0, 20), row_major(20, 10), row_major(0, 10))["launch"] is False
    p = _gemmtune.plan(view((30, 0), (0, 1)), view((0, 10), (10, 1)), row_major(30, 10))
    assert (p["launch"], p["scale_only"]) == (False, True)


@pytest.mark.parametrize("a,b", [((0, 5, 4), (4, 6)), ((0, 5, 4), (1, 4, 6)), ((1, 5, 4), (0, 4, 6)), ((5, 4), (0, 4, 6))])
def test_a_batch_of_none_against_one_matrix_is_empty(a, b):
    # The result once had a batch of 1 here, and the plan launched on the empty operand's pointer.
    assert tuple(_gemmtune.result_shape(a, b)) == (0, 5, 6)
    assert _gemmtune.plan(row_major(*a), row_major(*b), row_major(0, 5, 6))["launch"] is False


@pytest.mark.parametrize("a,b,out,message", [
    (view((30, 20), (40, 2)), row_major(20, 10), row_major(30, 10), r"^a \(30x20, strides 40, 2\) is neither row- nor column-contiguous"),
    (row_major(30, 20), view((20, 10), (5, 1)), row_major(30, 10), "^b .* is neither row- nor column-contiguous"),
    (row_major(30, 20), row_major(21, 10), row_major(30, 10), r"a's columns \(20\) must equal b's rows \(21\)"),
    (row_major(30, 20), row_major(20, 10), row_major(30, 11), "^out has shape 30x11, expected 30x10"),
    (row_major(2, 3, 30, 20), row_major(20, 10), row_major(30, 10), "^a has 4 dimension"),
    (row_major(3, 30, 20), row_major(4, 20, 10), row_major(4, 30, 10), "a holds 3 matrices and b 4"),
    (view((30, 20), (-20, 1)), row_major(20, 10), row_major(30, 10), "^a has negative strides"),
    (view((3, 2**31), (2**31, 1)), row_major(2**31, 2), row_major(3, 2), "^a's column count is 2147483648"),
    (row_major(30, 20), row_major(20, 10), view((30, 10), (10, 1, 1)), "^out has 3 strides for 2 dimensions"),
])
def test_layouts_the_library_cannot_read_are_refused_naming_the_argument(a, b, out, message):
    with pytest.raises(ValueError, match=message):
        _gemmtune.plan(a, b, out)


def test_results_are_the_stored_rows_as_dicts(tmp_path):
    db = tmp_path / "h100.db"
    sample = os.path.join(os.path.dirname(__file__), "data", "h100-smem-1024.json")
    subprocess.run(["gemmtune", "import", "--db", str(db), sample], check=True, capture_output=True, timeout=60)
    rows = gemmtune.results(db=db, status="ok", as_dicts=True)
    assert sorted(r["instance"] for r in rows) == ["smem_bs16", "smem_bs24_guarded", "smem_bs32", "smem_bs8"]
    assert {(r["m"], r["layout"], r["batch"], r["gpu"]) for r in rows} == {(1024, "nn", 1, "NVIDIA H100 80GB HBM3")}
    assert gemmtune.results(db=db, family="cutlass", as_dicts=True) == []


def test_results_of_a_missing_database_say_what_to_do(tmp_path):
    with pytest.raises(RuntimeError, match=r"gemmtune results failed \(exit 1\): .*run `gemmtune tune` first"):
        gemmtune.results(db=tmp_path / "none.db")


def test_tune_without_a_gpu_raises_with_the_programs_reason(tmp_path):
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("this machine has a GPU")
    with pytest.raises(RuntimeError, match=r"gemmtune tune failed \(exit \d+\): .*GPU"):
        gemmtune.tune(sizes=[64], db=tmp_path / "t.db", progress=False)


def test_tune_takes_one_of_sizes_shapes_and_mnk():
    with pytest.raises(ValueError, match="give one of sizes, shapes and mnk, not sizes and mnk"):
        gemmtune.tune(sizes=64, mnk="1x2x3")


def test_an_explicit_setting_wins_over_the_packages_pieces():
    kept = {"GEMMTUNE_NVRTC": "/mine/libnvrtc.so", "GEMMTUNE_CUTLASS_DIR": "/mine/include"}
    gemmtune._deps.prepare_environment(kept)
    assert kept == {"GEMMTUNE_NVRTC": "/mine/libnvrtc.so", "GEMMTUNE_CUTLASS_DIR": "/mine/include"}


def test_an_out_overlapping_an_input_is_refused():
    a = view((30, 20), (20, 1), data=1000)
    with pytest.raises(ValueError, match="^out overlaps a in memory"):
        _gemmtune.plan(a, row_major(20, 10), view((30, 10), (10, 1), data=1000 + 4 * 500))
    b = view((20, 10), (10, 1), data=50000)
    with pytest.raises(ValueError, match="^out overlaps b in memory"):
        _gemmtune.plan(view((30, 20), (20, 1), data=1000), b, view((30, 10), (10, 1), data=50000 + 4 * 199))
    # Just past b's last element is fine.
    _gemmtune.plan(view((30, 20), (20, 1), data=1000), b, view((30, 10), (10, 1), data=50000 + 4 * 200))


@pytest.mark.parametrize("batch_stride", [150, 0])
def test_out_batches_that_overlap_one_another_are_the_librarys_invalid_argument(batch_stride):
    """The library checks its arguments before it looks for a GPU, so its refusal reaches Python here."""
    out = view((4, 30, 10), (batch_stride, 10, 1))
    with pytest.raises(ValueError, match=rf"^gemmtune refused the call: strideC = {batch_stride} is less than one C "
                                         r"\(300 floats\)"):
        _gemmtune.gemm("strict", 0, 0, row_major(4, 30, 20), row_major(20, 10), out, 1.0, 0.0)


def test_a_valid_call_without_a_gpu_is_no_gpu_error():
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("this machine has a GPU")
    with pytest.raises(gemmtune.NoGpuError, match="libcuda.so.1 not found"):
        _gemmtune.gemm("strict", 0, 0, row_major(30, 20), row_major(20, 10), row_major(30, 10), 1.0, 0.0)


def test_alpha_zero_and_empty_k_leave_beta_out_to_the_framework():
    """Neither reaches the library (nor the GPU): out = beta·out is all that remains."""
    assert _gemmtune.gemm("strict", 0, 0, row_major(30, 20), row_major(20, 10), row_major(30, 10), 0.0, 1.0) == "scale"
    assert _gemmtune.gemm("strict", 0, 0, view((30, 0), (0, 1)), view((0, 10), (10, 1)), row_major(30, 10),
                          1.0, 0.0) == "scale"
    assert _gemmtune.gemm("strict", 0, 0, row_major(0, 20), row_major(20, 10), row_major(0, 10), 1.0, 0.0) == ""


def test_disjoint_slices_of_one_buffer_are_not_an_overlap():
    """buf[:, :20] read, buf[:, 20:30] written: one buffer, no element in common (as torch.mm allows)."""
    base = 1 << 20
    a = view((30, 20), (64, 1), data=base)              # columns 0..19 of a 30 x 64 buffer
    out = view((30, 10), (64, 1), data=base + 4 * 20)   # columns 20..29
    assert _gemmtune.plan(a, row_major(20, 10), out)["ldc"] == 64
    overlapping = view((30, 10), (64, 1), data=base + 4 * 15)  # columns 15..24 meet a's
    with pytest.raises(ValueError, match="^out overlaps a in memory"):
        _gemmtune.plan(a, row_major(20, 10), overlapping)
    below = view((30, 10), (64, 1), data=base + 4 * (64 * 29 + 20))  # starts in a's last row, past its columns
    _gemmtune.plan(a, row_major(20, 10), below)
    # Columns 60..63 of row 29, then 0..5 of row 30 and on: a 31-row a has those.
    wrapped = view((31, 10), (64, 1), data=base + 4 * (64 * 29 + 60))
    with pytest.raises(ValueError, match="^out overlaps a in memory"):
        _gemmtune.plan(view((31, 20), (64, 1), data=base), row_major(20, 10), wrapped)


def test_matmul_refuses_an_unknown_precision_before_it_runs_anything():
    with pytest.raises(ValueError, match='^precision must be "strict" or "faithful", not "tf32"'):
        _gemmtune.gemm("tf32", 0, 0, row_major(30, 20), row_major(20, 10), row_major(30, 10), 1.0, 0.0)


def test_the_package_is_built_with_jax_support():
    from gemmtune import _gemmtune

    assert _gemmtune.jax_handler() is not None, "built without XLA's FFI headers (scripts/fetch-deps.sh xla-ffi)"


def on_cpu(x):
    import jax

    return jax.device_put(x, jax.devices("cpu")[0])


@pytest.mark.parametrize("call,error,message", [
    (lambda jnp: gemmtune.matmul(on_cpu(jnp.ones((4, 3))), jnp.ones((3, 2))), TypeError,
     r"^a is on cpu; gemmtune runs on CUDA arrays \(use jax.device_put"),
    (lambda jnp: gemmtune.matmul(jnp.ones((4, 3)), jnp.ones((3, 2), jnp.int32)), TypeError,
     r"^b is int32; gemmtune computes in float32 \(use b.astype\(jnp.float32\)\)"),
    (lambda jnp: gemmtune.matmul(jnp.ones((4, 3)), jnp.ones((4, 2))), ValueError, r"a's columns \(3\) must equal b's rows \(4\)"),
    (lambda jnp: gemmtune.matmul(jnp.ones((4, 3)), jnp.ones((3, 2)), out=jnp.ones((4, 2))), TypeError,
     "^out= takes PyTorch and CuPy tensors: JAX arrays are immutable"),
    (lambda jnp: gemmtune.matmul(jnp.ones((4, 3)), jnp.ones((3, 2)), beta=1.0), ValueError, "^beta scales out="),
    (lambda jnp: gemmtune.matmul(jnp.ones((4, 3)), [[1.0]]), TypeError, "^a is a JAX array and b is not"),
    (lambda jnp: gemmtune.matmul(jnp.ones((4, 3)), jnp.ones((3, 2)), precision="fast"), ValueError,
     '^precision must be "strict" or "faithful", not "fast"'),
])
def test_jax_arrays_are_checked_naming_the_argument(call, error, message):
    jnp = pytest.importorskip("jax.numpy")
    with pytest.raises(error, match=message):
        call(jnp)


@pytest.mark.parametrize("a,b,out,want", [
    ((40, 30), (30, 20), (40, 20), dict(calls=1, a=(40, 30), b=(30, 20), out=(40, 20))),
    ((4, 40, 30), (1, 30, 20), (4, 40, 20), dict(calls=1, a=(4, 40, 30), b=(1, 30, 20), out=(4, 40, 20))),
    # jax.vmap of a batched product: the vmapped axes flatten with the call's own batch
    ((3, 4, 40, 30), (3, 4, 30, 20), (3, 4, 40, 20), dict(calls=1, a=(12, 40, 30), b=(12, 30, 20), out=(12, 40, 20))),
    ((1, 1, 40, 30), (3, 4, 30, 20), (3, 4, 40, 20), dict(calls=1, a=(1, 40, 30), b=(12, 30, 20), out=(12, 40, 20))),
    # an operand broadcast along the call's own batch under vmap: one call per vmapped index
    ((3, 4, 40, 30), (3, 1, 30, 20), (3, 4, 40, 20),
     dict(calls=3, stride_a=4 * 40 * 30, stride_b=30 * 20, stride_out=4 * 40 * 20, a=(4, 40, 30), b=(1, 30, 20),
          out=(4, 40, 20))),
])
def test_jax_batches_flatten_or_loop_over_the_vmapped_axes(a, b, out, want):
    from gemmtune import _gemmtune

    got = _gemmtune._stack_batches(a, b, out)
    assert {k: got[k] for k in want} == want


@pytest.mark.parametrize("a,b,out,message", [
    ((2, 4, 40, 30), (3, 4, 30, 20), (3, 4, 40, 20), r"^a's batch dimensions \(2x4\) differ from the result's \(3x4\)"),
    ((3, 4, 40, 30), (3, 2, 30, 20), (3, 4, 40, 20), r"^b's last batch dimension is 2, the result's 4"),
    ((3, 40, 30), (3, 4, 30, 20), (3, 4, 40, 20), r"^a has 3 dimensions and the result 4"),
])
def test_jax_batches_that_do_not_fit_are_refused(a, b, out, message):
    from gemmtune import _gemmtune

    with pytest.raises(ValueError, match=message):
        _gemmtune._stack_batches(a, b, out)


def test_jax_gradients_of_gradients_never_differentiate_the_ffi_call():
    """The custom VJP's forward and backward both go through the differentiable op: a stand-in for
    the FFI call that refuses differentiation (as ffi_call does) is never differentiated."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from gemmtune._jax import _differentiable

    @jax.custom_jvp
    def opaque(a, b):
        return jnp.matmul(a, b)

    @opaque.defjvp
    def _(primals, tangents):
        raise ValueError("the FFI call was differentiated")

    mm = _differentiable(lambda a, b, alpha, precision: alpha * opaque(a, b))
    a, b = jnp.ones((4, 3)), jnp.arange(6.0).reshape(3, 2)

    def penalty(matmul, a, b):
        g = jax.grad(lambda a: matmul(a, b).sum())(a)
        return (g * g).sum()

    got = jax.grad(lambda a, b: penalty(lambda x, y: mm(x, y, 2.0, "strict"), a, b), argnums=(0, 1))(a, b)
    want = jax.grad(lambda a, b: penalty(lambda x, y: 2.0 * (x @ y), a, b), argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        assert jnp.allclose(g, w)
