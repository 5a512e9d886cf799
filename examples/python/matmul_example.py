# The README's Python example: tune two sizes, run gemmtune's kernels on PyTorch tensors.
import torch

import gemmtune
import gemmtune.torch

gemmtune.tune(sizes=[1024, 2048], families=["warppipe", "cutlass"], no_basis=True)  # once per GPU
a = torch.randn(2048, 2048, device="cuda")
b = torch.randn(2048, 2048, device="cuda")
c = gemmtune.matmul(a, b)                            # the tuned kernel, on torch's current stream
gemmtune.matmul(a.T, b, out=c, alpha=2.0, beta=1.0)  # transposed views are read, not copied
print(gemmtune.best(2048, 2048, 2048))               # what ran, and how it was measured
layer = gemmtune.torch.Linear(2048, 512).cuda()      # nn.Linear whose GEMMs are gemmtune's
print(layer(a).sum().item(), (c - (a @ b + 2 * a.T @ b)).abs().max().item())
