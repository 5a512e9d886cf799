"""Where the installed package's run-time pieces are, told to gemmtune's core through the
environment variables it already reads (an explicit setting always wins):

- GEMMTUNE_NVRTC: NVRTC 13.5 from the nvidia-cuda-nvrtc wheel, a dependency of this package.
- GEMMTUNE_CUTLASS_DIR: the pinned CUTLASS headers installed inside this package.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CLI_PROGRAM = PACKAGE_DIR / "bin" / "gemmtune"


def pinned_nvrtc() -> Path | None:
    """libnvrtc.so.13 of the nvidia-cuda-nvrtc wheel, when it is installed."""
    try:
        spec = importlib.util.find_spec("nvidia.cu13")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / "lib" / "libnvrtc.so.13"
        if candidate.is_file():
            return candidate
    return None


def bundled_cutlass() -> Path | None:
    include = PACKAGE_DIR / "cutlass" / "include"
    return include if (include / "cutlass" / "version.h").is_file() else None


def prepare_environment(environ: dict | None = None) -> None:
    """Sets GEMMTUNE_NVRTC and GEMMTUNE_CUTLASS_DIR where they are unset and the package has them."""
    env = os.environ if environ is None else environ
    nvrtc = pinned_nvrtc()
    if nvrtc and not env.get("GEMMTUNE_NVRTC"):
        env["GEMMTUNE_NVRTC"] = str(nvrtc)
    cutlass = bundled_cutlass()
    if cutlass and not env.get("GEMMTUNE_CUTLASS_DIR"):
        env["GEMMTUNE_CUTLASS_DIR"] = str(cutlass)
