#!/usr/bin/env python3
"""Modules over 400 lines and functions over 60 lines (the budget CONTRIBUTING.md sets),
outside migrations and tests. A function may be longer when a comment within its first lines says
why ("# long: ..."). Prints what is over; exits 1 when anything is.

    python3 scripts/sizes.py [--modules N] [--functions N]
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "dashboards", "ingest", "perfdb", "bench")


def _sources() -> list[Path]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                found.append(path)
    return found


def _says_why(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    start = node.lineno - 1
    head = lines[start : start + 8]
    return any("# long:" in line for line in head)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=400)
    parser.add_argument("--functions", type=int, default=60)
    args = parser.parse_args()
    over = []
    for path in _sources():
        text = path.read_text()
        lines = text.splitlines()
        name = path.relative_to(ROOT)
        if len(lines) > args.modules:
            over.append(f"{name}: {len(lines)} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > args.functions and not _says_why(lines, node):
                    over.append(f"{name}:{node.lineno} {node.name}(): {length} lines")
    print("\n".join(over) or "everything within budget")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
