"""The gemmtune program from Python: the `gemmtune` command itself (main), and tune() and
results(), which run it and read its --json output. The tuning engine runs in that program as it
does from a shell: its workers, its progress display, its Ctrl-C handling and its database."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable

from ._deps import CLI_PROGRAM, prepare_environment


def main() -> None:
    """The `gemmtune` command installed by pip: the C++ program with the package's NVRTC and CUTLASS."""
    prepare_environment()
    if not CLI_PROGRAM.is_file():
        sys.exit(f"gemmtune: the program {CLI_PROGRAM} is missing; reinstall the package (pip install .)")
    os.execv(CLI_PROGRAM, [str(CLI_PROGRAM), *sys.argv[1:]])


def _listed(name: str, value) -> str | None:
    """A CLI list argument from a Python value: '1024,2048' from [1024, 2048] or from '1024,2048'."""
    if value is None:
        return None
    if isinstance(value, (str, int)):
        return str(value)
    if isinstance(value, Iterable):
        return ",".join(str(v) for v in value)
    raise TypeError(f"{name} must be a string, an int or a list of them, not {type(value).__name__}")


def _run_json(args: list[str], show_progress: bool):
    """Runs the program with --json; returns the parsed output. Ctrl-C stops the program after the
    candidate in flight (as in a shell: everything measured is kept) and is raised here after it."""
    prepare_environment()
    command = [str(CLI_PROGRAM), *args, "--json"]
    stderr = None if show_progress else subprocess.PIPE
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        out, err = process.communicate()
    except KeyboardInterrupt:
        process.send_signal(signal.SIGINT)  # the terminal may have sent it already: a second is harmless
        process.communicate()
        raise
    if process.returncode != 0:
        message = (err or "").strip().splitlines()
        raise RuntimeError(f"gemmtune {args[0]} failed (exit {process.returncode})"
                           + (f": {message[-1]}" if message else ""))
    return json.loads(out) if out.strip() else None


def tune(sizes=None, *, shapes=None, mnk=None, layouts=None, batch=None, families=None, precision=None,
         db=None, gpu="auto", fresh=False, no_basis=False, extra_args=(), progress=True):
    """Tunes on this machine's GPU, as `gemmtune tune` does, and returns its summary (the --json
    document). sizes: "1024..8192", 4096 or [1024, 2048]; shapes: a workload file; families,
    layouts: names or lists. progress=True shows the program's progress on stderr."""
    chosen = [name for name, value in (("sizes", sizes), ("shapes", shapes), ("mnk", mnk)) if value is not None]
    if len(chosen) > 1:
        raise ValueError(f"give one of sizes, shapes and mnk, not {' and '.join(chosen)}")
    args = ["tune", "--gpu", str(gpu)]
    for flag, value in (("--sizes", _listed("sizes", sizes)), ("--shapes", shapes), ("--mnk", mnk),
                        ("--layouts", _listed("layouts", layouts)), ("--batch", batch),
                        ("--families", _listed("families", families)), ("--precision", precision), ("--db", db)):
        if value is not None:
            args += [flag, os.fspath(value) if hasattr(value, "__fspath__") else str(value)]
    if fresh:
        args.append("--fresh")
    if no_basis:
        args.append("--no-basis")
    args += list(extra_args)
    return _run_json(args, show_progress=progress)


def results(*, db=None, gpu=None, size=None, layout=None, batch=None, family=None, status=None, as_dicts=False):
    """Measured rows, failures included, as `gemmtune results --json` lists them: a pandas
    DataFrame when pandas is installed (and as_dicts is False), else a list of dicts."""
    args = ["results"]
    for flag, value in (("--db", db), ("--gpu", gpu), ("--size", size), ("--layout", layout), ("--batch", batch),
                        ("--family", family), ("--status", status)):
        if value is not None:
            args += [flag, os.fspath(value) if hasattr(value, "__fspath__") else str(value)]
    rows = _run_json(args, show_progress=False) or []
    if as_dicts:
        return rows
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)
