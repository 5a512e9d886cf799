"""GPU tests of gemmtune.matmul on JAX arrays (the XLA FFI custom call) against float64 products:
eager, under jax.jit, jax.vmap and jax.grad, batches and broadcast operands, alpha, an empty K.
Run by scripts/gpu-check.sh python."""

import os

import pytest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave the GPU's memory to PyTorch's tests too
jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import gemmtune  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _needs_a_jax_gpu():
    try:
        jax.devices("gpu")
    except RuntimeError:
        pytest.skip("JAX sees no GPU")


def randn(*shape, seed=[0]):
    seed[0] += 1
    return jax.device_put(np.random.default_rng(seed[0]).standard_normal(shape).astype(np.float32), jax.devices("gpu")[0])


def assert_near(got, a, b, alpha=1.0):
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    want = alpha * np.matmul(a64, b64)
    assert got.shape == want.shape and got.dtype == jnp.float32
    scale = np.abs(alpha) * np.matmul(np.abs(a64), np.abs(b64)).max() + 1e-30
    err = np.abs(np.asarray(got, np.float64) - want).max()
    assert err <= (1e-6 * a.shape[-1] + 1e-6) * scale, err / scale


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 33, 130), (130, 7, 33), (257, 129, 65)])
def test_jax_arrays_match_a_float64_product(m, n, k):
    a, b = randn(m, k), randn(k, n)
    assert_near(gemmtune.matmul(a, b), a, b)


@pytest.mark.parametrize("shape_a,shape_b", [((6, 40, 30), (6, 30, 20)), ((40, 30), (6, 30, 20)),
                                             ((6, 40, 30), (1, 30, 20)), ((6, 40, 30), (30, 20))])
def test_jax_batches_and_broadcast_operands(shape_a, shape_b):
    a, b = randn(*shape_a), randn(*shape_b)
    got = gemmtune.matmul(a, b, alpha=0.5)
    assert got.shape == jnp.matmul(a, b).shape
    assert_near(got, a, b, 0.5)


def test_inside_jit_with_jax_operations_around_it():
    a, b, c = randn(100, 70), randn(70, 90), randn(100, 90)
    step = jax.jit(lambda a, b, c: jnp.tanh(gemmtune.matmul(a * 2, b) + c))
    want = np.tanh(2 * np.asarray(a, np.float64) @ np.asarray(b, np.float64) + np.asarray(c, np.float64))
    assert np.abs(np.asarray(step(a, b, c)) - want).max() < 1e-4


def test_vmap_over_matrices_and_over_batches():
    a, b = randn(5, 40, 30), randn(5, 30, 20)
    assert_near(jax.vmap(gemmtune.matmul)(a, b), a, b)
    a4, b4 = randn(3, 4, 40, 30), randn(3, 4, 30, 20)
    assert_near(jax.vmap(gemmtune.matmul)(a4, b4), a4, b4)
    assert_near(jax.vmap(gemmtune.matmul, in_axes=(0, None))(a, b[0]), a, b[0])


@pytest.mark.parametrize("shape_a,shape_b,in_axes", [
    ((3, 4, 40, 30), (30, 20), (0, None)),      # a batched product, b one matrix, vmapped over a only
    ((3, 40, 30), (3, 4, 30, 20), (0, 0)),      # a 2-D per example against a batch
    ((3, 1, 40, 30), (3, 4, 30, 20), (0, 0)),   # a batch of one against a batch
    ((40, 30), (3, 4, 30, 20), (None, 0)),
])
def test_vmap_where_an_operand_is_broadcast(shape_a, shape_b, in_axes):
    a, b = randn(*shape_a), randn(*shape_b)
    got = jax.vmap(gemmtune.matmul, in_axes=in_axes)(a, b)
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    count = a.shape[0] if in_axes[0] == 0 else b.shape[0]
    pick = lambda x, axis, i: x[i] if axis == 0 else x  # noqa: E731
    want = np.stack([np.matmul(pick(a64, in_axes[0], i), pick(b64, in_axes[1], i)) for i in range(count)])
    scale = np.stack([np.matmul(np.abs(pick(a64, in_axes[0], i)), np.abs(pick(b64, in_axes[1], i)))
                      for i in range(count)]).max()
    assert got.shape == want.shape
    assert np.abs(np.asarray(got, np.float64) - want).max() <= (1e-6 * a.shape[-1] + 1e-6) * scale


def test_grad_runs_the_transposed_products():
    a, b, g = randn(3, 50, 40), randn(40, 30), randn(3, 50, 30)
    grad_a, grad_b = jax.grad(lambda a, b: (gemmtune.matmul(a, b, alpha=2.0) * g).sum(), argnums=(0, 1))(a, b)
    g64, a64, b64 = (np.asarray(x, np.float64) for x in (g, a, b))
    assert np.abs(np.asarray(grad_a) - 2 * g64 @ b64.T).max() < 1e-3
    assert grad_b.shape == b.shape
    assert np.abs(np.asarray(grad_b) - 2 * np.einsum("bmk,bmn->kn", a64, g64)).max() < 1e-3


def test_a_gradient_of_a_gradient():
    a, b = randn(20, 10), randn(10, 30)

    def penalty(a, b):  # the squared norm of d/da sum(a @ b), differentiated again
        g = jax.grad(lambda a: gemmtune.matmul(a, b).sum())(a)
        return (g * g).sum()

    got = jax.grad(penalty, argnums=1)(a, b)
    want = jax.grad(lambda a, b: (jax.grad(lambda a: (a @ b).sum())(a) ** 2).sum(), argnums=1)(a, b)
    assert np.abs(np.asarray(got) - np.asarray(want)).max() <= 1e-3 * (np.abs(np.asarray(want)).max() + 1)


def test_alpha_zero_and_an_empty_k_give_zeros():
    a, b = randn(20, 10), randn(10, 30)
    a = a.at[0, 0].set(jnp.nan)
    assert not np.asarray(gemmtune.matmul(a, b, alpha=0.0)).any()
    empty = gemmtune.matmul(jnp.zeros((20, 0), jnp.float32, device=a.device), jnp.zeros((0, 30), jnp.float32, device=a.device))
    assert empty.shape == (20, 30) and not np.asarray(empty).any()


def test_faithful_precision_on_jax_arrays():
    a, b = randn(256, 256), randn(256, 256)
    assert_near(gemmtune.matmul(a, b, precision="faithful"), a, b)
