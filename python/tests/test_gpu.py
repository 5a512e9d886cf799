"""GPU tests of the Python package against float64 products: every layout a view can have,
padded leading dimensions, batches and broadcast operands, alpha and beta, the framework's current
stream, CuPy, autograd, torch.compile and Linear. Run by scripts/gpu-check.sh python."""

import pytest

torch = pytest.importorskip("torch")
import gemmtune  # noqa: E402
import gemmtune.torch  # noqa: E402

pytestmark = pytest.mark.gpu


def reference(a, b, alpha=1.0, beta=0.0, c=None):
    r = alpha * torch.matmul(a.double(), b.double())
    return r if c is None else r + beta * c.double()


def assert_near(got, want, a, b):
    """Within FP32 rounding of a K-long dot product, scaled by |a|·|b| elementwise."""
    scale = torch.matmul(a.double().abs(), b.double().abs())
    k = a.shape[-1]
    err = (got.double() - want).abs()
    assert err.max() <= (1e-6 * k + 1e-6) * scale.max() + 1e-30, float((err / scale.clamp_min(1e-30)).max())


def stored(rows, cols, transposed, pad=0):
    """A rows x cols matrix, stored as is or transposed, with `pad` extra elements per line."""
    if transposed:
        return torch.randn(cols, rows + pad, device="cuda")[:, :rows].T
    return torch.randn(rows, cols + pad, device="cuda")[:, :cols]


@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 33, 130), (130, 7, 33), (257, 129, 65)])
@pytest.mark.parametrize("pad", [0, 3])
def test_every_layout_matches_a_float64_product(layout, m, n, k, pad):
    a = stored(m, k, layout[0] == "t", pad)
    b = stored(k, n, layout[1] == "t", pad)
    assert_near(gemmtune.matmul(a, b), reference(a, b), a, b)


def test_alpha_beta_and_a_column_major_out():
    a, b = torch.randn(70, 50, device="cuda"), torch.randn(50, 90, device="cuda")
    out = torch.randn(90, 70, device="cuda").T  # column-major 70 x 90
    before = out.clone()
    got = gemmtune.matmul(a, b, out=out, alpha=0.5, beta=-2.0)
    assert got is out
    assert_near(out, reference(a, b, 0.5, -2.0, before), a, b)


@pytest.mark.parametrize("shape_a,shape_b", [((6, 40, 30), (6, 30, 20)), ((40, 30), (6, 30, 20)),
                                             ((6, 40, 30), (1, 30, 20)), ((1, 40, 30), (1, 30, 20))])
def test_batches_and_broadcast_operands(shape_a, shape_b):
    a, b = torch.randn(shape_a, device="cuda"), torch.randn(shape_b, device="cuda")
    got = gemmtune.matmul(a, b)
    assert got.shape == torch.matmul(a, b).shape
    assert_near(got, reference(a, b), a, b)


def test_an_empty_batch_against_one_matrix_gives_an_empty_batch():
    got = gemmtune.matmul(torch.empty(0, 5, 4, device="cuda"), torch.randn(4, 6, device="cuda"))
    assert got.shape == torch.matmul(torch.empty(0, 5, 4), torch.empty(4, 6)).shape == (0, 5, 6)


def test_transposed_batches():
    a = torch.randn(5, 30, 40, device="cuda").mT  # 5 x 40 x 30, each matrix transposed
    b = torch.randn(5, 20, 30, device="cuda").mT
    assert_near(gemmtune.matmul(a, b), reference(a, b), a, b)


def test_an_empty_k_scales_out_by_beta():
    a, b = torch.empty(4, 0, device="cuda"), torch.empty(0, 3, device="cuda")
    out = torch.ones(4, 3, device="cuda")
    assert torch.equal(gemmtune.matmul(a, b, out=out, beta=3.0), torch.full((4, 3), 3.0, device="cuda"))
    assert gemmtune.matmul(torch.empty(0, 5, device="cuda"), torch.empty(5, 3, device="cuda")).shape == (0, 3)


def test_the_current_stream_orders_the_work_without_synchronising():
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        a = torch.randn(512, 512, device="cuda")
        b = torch.randn(512, 512, device="cuda")
        a.mul_(2.0)  # still queued on `side` when matmul is called
        c = gemmtune.matmul(a, b)
        want = reference(a, b)
    side.synchronize()
    assert_near(c, want, a, b)


def test_faithful_precision_runs_and_is_accurate():
    a, b = torch.randn(256, 256, device="cuda"), torch.randn(256, 256, device="cuda")
    assert_near(gemmtune.matmul(a, b, precision="faithful"), reference(a, b), a, b)


@pytest.mark.parametrize("make,message,error", [
    (lambda: (torch.randn(4, 4, device="cuda", dtype=torch.float64), torch.randn(4, 4, device="cuda")), "^a is torch.float64", TypeError),
    (lambda: (torch.randn(4, 4, device="cuda"), torch.randn(4, 4)), "^b is on cpu", TypeError),
    (lambda: (torch.randn(4, 8, device="cuda")[:, ::2], torch.randn(4, 4, device="cuda")), "^a .* is neither row- nor column-contiguous", ValueError),
    (lambda: (torch.randn(4, 5, device="cuda"), torch.randn(4, 4, device="cuda")), r"a's columns \(5\) must equal b's rows \(4\)", ValueError),
])
def test_bad_tensors_are_refused_naming_the_argument(make, message, error):
    a, b = make()
    with pytest.raises(error, match=message):
        gemmtune.matmul(a, b)


def test_an_out_of_the_wrong_shape_is_refused():
    a, b = torch.randn(4, 4, device="cuda"), torch.randn(4, 4, device="cuda")
    with pytest.raises(ValueError, match="^out has shape 4x5, expected 4x4"):
        gemmtune.matmul(a, b, out=torch.empty(4, 5, device="cuda"))


def test_cupy_arrays_on_cupys_current_stream():
    cupy = pytest.importorskip("cupy")
    stream = cupy.cuda.Stream()
    with stream:
        a = cupy.random.standard_normal((65, 33), dtype=cupy.float32)
        b = cupy.random.standard_normal((17, 33), dtype=cupy.float32).T  # 33 x 17, read transposed
        a *= 2  # still queued on `stream` when matmul is called
        c = gemmtune.matmul(a, b)
    stream.synchronize()
    assert isinstance(c, cupy.ndarray) and c.shape == (65, 17)
    ta, tb = torch.from_dlpack(a), torch.from_dlpack(b)
    assert_near(torch.from_dlpack(c), reference(ta, tb), ta, tb)


def test_backward_takes_gradients_of_any_strides():
    """Autograd hands the op expanded gradients (strides 0): the op copies what it cannot read."""
    a = torch.randn(8, 16, device="cuda", requires_grad=True)
    b = torch.randn(16, 4, device="cuda", requires_grad=True)
    gemmtune.matmul(a, b).sum().backward()
    torch.testing.assert_close(a.grad, torch.ones(8, 4, device="cuda") @ b.detach().T)


def test_autograd_gradients_match_float64():
    a = torch.randn(3, 17, 9, device="cuda", requires_grad=True)
    b = torch.randn(9, 11, device="cuda", requires_grad=True)
    weights = torch.randn(3, 17, 11, device="cuda")
    (gemmtune.matmul(a, b, alpha=0.5) * weights).sum().backward()
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    (0.5 * torch.matmul(a64, b64) * weights.double()).sum().backward()
    torch.testing.assert_close(a.grad.double(), a64.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(b.grad.double(), b64.grad, rtol=1e-5, atol=1e-5)


def test_the_op_passes_torch_library_opcheck():
    a, b = torch.randn(8, 16, device="cuda", requires_grad=True), torch.randn(16, 4, device="cuda", requires_grad=True)
    torch.library.opcheck(torch.ops.gemmtune.mm.default, (a, b, 1.0, "strict"))


def test_torch_compile_traces_matmul_without_graph_breaks():
    def f(x, w):
        return torch.relu(gemmtune.matmul(x, w.T)) * 2

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    x, w = torch.randn(64, 32, device="cuda"), torch.randn(48, 32, device="cuda")
    torch.testing.assert_close(compiled(x, w), f(x, w))


def test_linear_is_a_drop_in_for_nn_linear():
    torch.manual_seed(0)
    ours = gemmtune.torch.Linear(96, 40).cuda()
    theirs = torch.nn.Linear(96, 40).cuda()
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(2, 25, 96, device="cuda")
    with torch.backends.cudnn.flags(allow_tf32=False):
        torch.backends.cuda.matmul.allow_tf32 = False
        y_ours, y_theirs = ours(x), theirs(x)
        torch.testing.assert_close(y_ours, y_theirs, rtol=1e-5, atol=1e-5)
        y_ours.square().sum().backward()
        y_theirs.square().sum().backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4)


def test_a_faithful_linear_matches_float64_forward_and_backward():
    torch.manual_seed(0)
    layer = gemmtune.torch.Linear(256, 128, precision="faithful").cuda()
    assert "precision=faithful" in repr(layer)
    x = torch.randn(192, 256, device="cuda", requires_grad=True)
    y = layer(x)
    w64, x64 = layer.weight.double(), x.detach().double()
    assert_near(y - layer.bias, x64 @ w64.t(), x.detach(), layer.weight.detach().t())
    y.sum().backward()
    ones = torch.ones(192, 128, device="cuda", dtype=torch.float64)
    torch.testing.assert_close(x.grad.double(), ones @ w64, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(layer.weight.grad.double(), ones.t() @ x64, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(layer.bias.grad.double(), ones.sum(0), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match='precision must be "strict" or "faithful", not "fast"'):
        gemmtune.torch.Linear(4, 4, precision="fast")


def test_the_gradient_of_a_transposed_weight_is_contiguous():
    """nn.Linear's layout: y = x·Wᵀ; W's gradient comes out contiguous, like W."""
    x = torch.randn(32, 24, device="cuda", requires_grad=True)
    w = torch.randn(40, 24, device="cuda", requires_grad=True)
    gemmtune.matmul(x, w.t()).square().sum().backward()
    assert w.grad.is_contiguous() and x.grad.is_contiguous()
    x64, w64 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    (x64 @ w64.t()).square().sum().backward()
    torch.testing.assert_close(w.grad.double(), w64.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(x.grad.double(), x64.grad, rtol=1e-4, atol=1e-4)


def test_torch_compile_with_inductor_and_backward():
    model = torch.nn.Sequential(gemmtune.torch.Linear(64, 48), torch.nn.ReLU(), gemmtune.torch.Linear(48, 8)).cuda()
    x = torch.randn(16, 64, device="cuda")
    compiled = torch.compile(model, fullgraph=True)
    y, want = compiled(x), model(x)
    torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)
    y.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


FIRST_CUDA_WORK_IS_A_BACKWARD = """
import torch, gemmtune
a = torch.randn(64, 32, device="cuda", requires_grad=True)
b = torch.randn(32, 16, device="cuda")
y = gemmtune.matmul(a, b)
y.backward(torch.ones(64, 16, device="cuda"))  # autograd's worker thread has had no CUDA call yet
torch.testing.assert_close(a.grad, torch.ones(64, 16, device="cuda") @ b.T)
print("ok")
"""


def test_a_backward_that_is_the_threads_first_cuda_work_runs():
    """Autograd's device thread has no current context until some CUDA call makes one: the module
    makes the primary context current instead of failing with NoGpuError."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", FIRST_CUDA_WORK_IS_A_BACKWARD], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-2000:]


def test_a_new_thread_runs_matmul():
    import threading

    a, b, c = torch.randn(96, 80, device="cuda"), torch.randn(80, 40, device="cuda"), torch.empty(96, 40, device="cuda")
    torch.cuda.synchronize()
    errors = []
    thread = threading.Thread(target=lambda: errors.append(None) if gemmtune.matmul(a, b, out=c) is c else None)
    thread.start()
    thread.join()
    torch.cuda.synchronize()
    assert errors == [None]
    assert_near(c, reference(a, b), a, b)


def test_an_out_aliasing_an_input_is_refused():
    a = torch.randn(256, 256, device="cuda")
    with pytest.raises(ValueError, match="^out overlaps a in memory"):
        gemmtune.matmul(a, torch.randn(256, 256, device="cuda"), out=a)


def test_out_bumps_the_autograd_version_like_torch_out_ops():
    x = torch.randn(8, 8, device="cuda", requires_grad=True)
    w = torch.randn(8, 8, device="cuda")
    y = (x * w).sum()  # saves w for the backward
    gemmtune.matmul(torch.randn(8, 8, device="cuda"), torch.randn(8, 8, device="cuda"), out=w)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_an_out_that_requires_grad_is_refused():
    out = torch.zeros(4, 4, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="^out requires grad"):
        gemmtune.matmul(torch.randn(4, 4, device="cuda"), torch.randn(4, 4, device="cuda"), out=out)


def test_alpha_zero_reads_neither_operand():
    a = torch.full((16, 8), float("nan"), device="cuda")
    out = torch.ones(16, 4, device="cuda")
    gemmtune.matmul(a, torch.randn(8, 4, device="cuda"), out=out, alpha=0.0, beta=2.0)
    assert torch.equal(out, torch.full((16, 4), 2.0, device="cuda"))


@pytest.mark.parametrize("batch", [None, 3])
def test_a_cuda_graph_capture_runs_and_replays_correctly(batch):
    """A shape the library has not prepared on the capturing stream is declined with out untouched;
    the call then runs through PyTorch's own matmul, so capturing works either way."""
    shape_a, shape_b = ((batch, 48, 40), (40, 24)) if batch else ((48, 40), (40, 24))
    a, b = torch.randn(shape_a, device="cuda"), torch.randn(shape_b, device="cuda")
    out = torch.zeros(torch.matmul(a, b).shape, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        gemmtune.matmul(a, b, out=out, alpha=2.0)
    a.copy_(torch.randn(shape_a, device="cuda"))
    graph.replay()
    torch.cuda.synchronize()
    assert_near(out, reference(a, b, 2.0), a, b)


def test_the_linear_function_matches_float64_with_its_three_gradients():
    """gemmtune.torch.Linear's own path (taken where gemmtune's forward choice is not cuBLAS)."""
    x = torch.randn(70, 48, device="cuda", requires_grad=True)
    w = torch.randn(36, 48, device="cuda", requires_grad=True)
    bias = torch.randn(36, device="cuda", requires_grad=True)
    weights = torch.randn(70, 36, device="cuda")
    (gemmtune.torch._LinearFunction.apply(x, w, bias, "strict") * weights).sum().backward()
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, bias))
    (torch.nn.functional.linear(x64, w64, b64) * weights.double()).sum().backward()
    for ours, want in ((x.grad, x64.grad), (w.grad, w64.grad), (bias.grad, b64.grad)):
        torch.testing.assert_close(ours.double(), want, rtol=1e-5, atol=1e-4)
    assert w.grad.is_contiguous()


def test_double_backward_differentiates_the_gradients():
    """A gradient penalty: create_graph=True makes the backward's GEMMs differentiable again."""
    torch.manual_seed(3)
    x = torch.randn(12, 10, device="cuda", requires_grad=True)
    w = torch.randn(8, 10, device="cuda", requires_grad=True)
    grads = {}
    for name, product in (("ours", lambda: gemmtune.matmul(x, w.t())),
                          ("layer", lambda: gemmtune.torch._LinearFunction.apply(x, w, None, "strict")),
                          ("torch", lambda: torch.matmul(x, w.t()))):
        x.grad = w.grad = None
        (gx,) = torch.autograd.grad(product().square().sum(), x, create_graph=True)
        gx.square().sum().backward()
        grads[name] = w.grad.clone()
    torch.testing.assert_close(grads["ours"], grads["torch"], rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(grads["layer"], grads["torch"], rtol=1e-4, atol=1e-3)


def test_linear_on_an_empty_batch_returns_an_empty_result():
    layer = gemmtune.torch.Linear(8, 4).cuda()
    assert layer(torch.empty(0, 8, device="cuda")).shape == (0, 4)


def test_disjoint_column_slices_of_one_buffer_may_be_out():
    buf = torch.randn(64, 48, device="cuda")
    a, out = buf[:, :32], buf[:, 32:]
    b = torch.randn(32, 16, device="cuda")
    want = reference(a, b)
    gemmtune.matmul(a, b, out=out)
    assert_near(out, want, a, b)
