import pytest


def pytest_collection_modifyitems(config, items):
    """GPU tests (marker gpu) run where PyTorch sees a CUDA GPU and are skipped elsewhere."""
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if has_gpu:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU and PyTorch (scripts/gpu-check.sh python)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
