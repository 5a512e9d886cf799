#!/usr/bin/env python3
"""House rules the code review keeps asking for, checked from the sources (test house_rules):
no source file over 500 lines outside tests/, and no function over 80 lines outside templates/.

A function is a brace block opened at namespace or class level whose head (the text since the
previous ';', '{' or '}') holds a parameter list: lambdas inside it count toward its length.
Comments, strings and character literals are blanked first so their braces do not count."""
import re
import sys
from pathlib import Path

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc"}
SKIPPED_DIRS = {"templates", "out"}  # and hidden or build* folders (.devdeps, build-gpu): not ours
SCOPE_HEADS = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")
# A constructor's member initialiser with braces (`: a_(1), b_{2}`): the brace is no body.
BRACE_INITIALISER = re.compile(r"\)\s*(noexcept\s*)?:(?!:).*[\w>]\s*$", re.S)


def blank_literals(text):
    """Comments, strings and char literals become spaces (newlines kept: line numbers hold)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|R"(?P<d>[^(]*)\(.*?\)(?P=d)"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                         re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def long_functions(path):
    text = blank_literals(path.read_text(errors="replace"))
    found = []
    scopes = []  # per open brace: True where it opens a function body (outermost only)
    head_start = 0
    line = 1
    open_line = {}
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "{":
            head = text[head_start:i]
            inside_function = any(s is True for s in scopes)
            if not inside_function and BRACE_INITIALISER.search(head):
                scopes.append("init")  # the head goes on after its closing brace
                continue
            is_function = (not inside_function and ")" in head and not SCOPE_HEADS.search(head.strip())
                           and not head.rstrip().endswith("="))
            scopes.append(is_function)
            if is_function:
                open_line[len(scopes)] = (line, " ".join(head.split())[-90:])
            head_start = i + 1
        elif ch == "}":
            if scopes and scopes[-1] == "init":
                scopes.pop()
                continue  # the constructor's head goes on
            if scopes and scopes[-1] is True:
                start, name = open_line.pop(len(scopes))
                if line - start + 1 > MAX_FUNCTION_LINES:
                    found.append((start, line - start + 1, name))
            if scopes:
                scopes.pop()
            head_start = i + 1
        elif ch == ";":
            head_start = i + 1
    return found


def build_trees(root):
    """Folders holding a CMakeCache.txt: build trees (cmake-build-debug, ...), whatever their name."""
    return {cache.parent for cache in Path(root).rglob("CMakeCache.txt")}


def main(root):
    problems = []
    trees = build_trees(root)
    for path in sorted(Path(root).rglob("*")):
        rel = path.relative_to(root)
        if any(tree in path.parents for tree in trees):
            continue
        top = rel.parts[0]
        if (not path.is_file() or top in SKIPPED_DIRS or top.startswith((".", "build"))
                or path.suffix not in SOURCE_SUFFIXES):
            continue
        lines = path.read_text(errors="replace").count("\n")
        if lines > MAX_FILE_LINES and rel.parts[0] != "tests":
            problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES}: split it by job)")
        for start, length, name in long_functions(path):
            problems.append(f"{rel}:{start}: function of {length} lines (at most {MAX_FUNCTION_LINES}): {name}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent))
