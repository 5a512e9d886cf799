#!/usr/bin/env python3
"""The module graph docs/design.md draws must be the one CMake links (test house_rules).

Reads every <folder>/CMakeLists.txt of the modules (add_library names which folder a gemmtune_*
target belongs to; target_link_libraries, PUBLIC, PRIVATE or INTERFACE, which others it links
directly), folds targets into their folders, and compares with the table under "## Modules" in
docs/design.md, whose rows read `| folder/ | what it is | linked folders, comma-separated or — |`.
A difference prints one line per module and exits 1."""
import re
import sys
from pathlib import Path

MODULE_DIRS = ["base", "problem", "generator", "device", "db", "model", "tuner", "serving", "report", "cli",
               "library", "dropin", "python"]
IGNORED_TARGETS = {"gemmtune_warnings"}


def cmake_commands(text, name):
    """The argument text of every `name(...)` call, comments dropped, nested parentheses kept."""
    text = re.sub(r"#[^\n]*", "", text)
    for m in re.finditer(rf"\b{name}\s*\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield text[m.end():i - 1]


def linked_folders(root):
    owner = {}  # target -> folder
    links = {}  # folder -> set of targets linked
    for folder in MODULE_DIRS:
        text = (root / folder / "CMakeLists.txt").read_text()
        for args in cmake_commands(text, "add_library"):
            owner[args.split()[0]] = folder
        for args in cmake_commands(text, "target_link_libraries"):
            words = re.findall(r"gemmtune(?:_\w+|::gemmtune)", args)
            if words and words[0] == args.split()[0]:
                links.setdefault(folder, set()).update(words[1:])
    owner["gemmtune::gemmtune"] = "library"
    graph = {}
    for folder in MODULE_DIRS:
        targets = links.get(folder, set()) - IGNORED_TARGETS
        graph[folder] = {owner.get(t, f"?{t}") for t in targets} - {folder}
    return graph


def documented_folders(design):
    text = design.read_text()
    section = text.split("## Modules", 1)[1] if "## Modules" in text else ""
    graph = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"`?\w+/`?", cells[0]):
            folder = cells[0].strip("`/")
            deps = cells[-1].replace("`", "").replace("/", "")
            graph[folder] = set() if deps in ("—", "-", "") else {d.strip() for d in deps.split(",")}
    return graph


def main(root):
    root = Path(root)
    built, drawn = linked_folders(root), documented_folders(root / "docs" / "design.md")
    problems = []
    for folder in sorted(set(built) | set(drawn)):
        b, d = built.get(folder), drawn.get(folder)
        if d is None:
            problems.append(f"{folder}/: links {sorted(b)} in CMake but has no row in docs/design.md's Modules table")
        elif b is None:
            problems.append(f"{folder}/: in docs/design.md's Modules table but not a module CMake builds")
        elif b != d:
            problems.append(f"{folder}/: CMake links {sorted(b)}, docs/design.md says {sorted(d)}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent))
