#!/usr/bin/env python3
"""Test house_rules: the repository keeps the house rules, and the checkers (scripts/check-style.py,
scripts/check-modules.py) find what they are for and nothing else, each on files made to break one
rule, so that the repository passing them means something."""
import contextlib
import importlib.util
import io
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load(name):
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


style = load("check-style")
modules = load("check-modules")


def run(main, root):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(root)
    return code, out.getvalue().splitlines()


def function(head, lines):
    return head + " {\n" + "".join(f"  int v{i} = {i};  // {{ not a brace\n" for i in range(lines - 2)) + "}\n"


class CheckStyle(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp())

    def tearDown(self):
        shutil.rmtree(self.root)

    def write(self, rel, text):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def test_a_function_over_80_lines_is_named_with_its_length(self):
        path = self.write("a/x.cpp", "namespace n {\n" + function("int f(int a)", 80) + function("int g()", 81) + "}\n")
        self.assertEqual([(s, n) for s, n, _ in style.long_functions(path)], [(82, 81)])

    def test_a_constructors_brace_initialiser_is_not_its_body(self):
        text = "struct A { A(int q); int b_, c_; };\n" + function("A::A(int q) : b_{q}, c_(q)", 90)
        path = self.write("a/ctor.cpp", text)
        self.assertEqual([(s, n) for s, n, _ in style.long_functions(path)], [(2, 90)])

    def test_long_files_outside_tests_and_build_trees(self):
        self.write("a/big.cpp", "\n" * 501)
        self.write("tests/big_test.cpp", "\n" * 900)
        self.write("cmake-build-debug/CMakeCache.txt", "")
        self.write("cmake-build-debug/CMakeFiles/id.cpp", "\n" * 900)
        self.write("templates/k.cu", function("__global__ void k()", 200))
        code, lines = run(style.main, self.root)
        self.assertEqual(code, 1)
        self.assertEqual(lines, ["a/big.cpp: 501 lines (at most 500: split it by job)"])

    def test_the_repository_keeps_the_rules(self):
        self.assertEqual(run(style.main, ROOT), (0, []))


class CheckModules(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        for folder in modules.MODULE_DIRS:
            (self.root / folder).mkdir()
            shutil.copy(ROOT / folder / "CMakeLists.txt", self.root / folder)
        (self.root / "docs").mkdir()
        self.design = (ROOT / "docs" / "design.md").read_text()

    def tearDown(self):
        shutil.rmtree(self.root)

    def check(self, design):
        (self.root / "docs" / "design.md").write_text(design)
        return run(modules.main, self.root)

    def test_the_drawn_graph_is_the_linked_one(self):
        self.assertEqual(self.check(self.design), (0, []))

    def test_a_link_the_table_does_not_draw_is_named(self):
        row = next(l for l in self.design.splitlines() if l.startswith("| `device/`"))
        self.assertTrue(row.endswith("| base, problem |"), row)
        code, lines = self.check(self.design.replace(row, row.replace("| base, problem |", "| base |")))
        self.assertEqual(code, 1)
        self.assertEqual(lines, ["device/: CMake links ['base', 'problem'], docs/design.md says ['base']"])

    def test_a_module_without_a_row_is_named(self):
        row = next(l for l in self.design.splitlines() if l.startswith("| `model/`"))
        code, lines = self.check(self.design.replace(row + "\n", ""))
        self.assertEqual(code, 1)
        self.assertEqual(lines, ["model/: links ['db'] in CMake but has no row in docs/design.md's Modules table"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
