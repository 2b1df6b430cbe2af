#!/usr/bin/env python3
"""Fails when a module imports one it must not (docs/architecture.md, "Modules").

The project's modules form one chain, each importing only modules after it; each C library is imported by
one module (zlib by two: HTTP gzips answers, the store deflates archived bodies). Imports are read from the `import` lines of Sources/<module>/**/*.swift (the access-level and
@testable forms included), so a new import that breaks the arrows fails `make test` before review.

Usage: scripts/check-imports.py   (from anywhere; exit 1 and one line per offending import when broken)"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "Sources"
# Each module's own modules it may import; anything not named here is outside the project (Foundation, swift-log, …).
CHAIN = ["cartograph", "CartographHTTP", "CartographStore", "CartographMapping", "CartographPredicate", "CartographCore"]
ALLOWED = {module: set(CHAIN[index + 1:]) for index, module in enumerate(CHAIN)}
ALLOWED["CartographHTTP"] |= {"CMicroHTTPD", "CZlib"}
ALLOWED["CartographStore"] |= {"CSQLite", "CZlib"}  # zlib: the archive's deflated bodies (R-P18)
# Beside the chain: fuzzing harnesses over the pure modules, and the tests' helpers over Core.
ALLOWED["CartographFuzzing"] = {"CartographMapping", "CartographPredicate", "CartographCore"}
ALLOWED["CartographTesting"] = {"CartographCore"}
PROJECT = set(ALLOWED) | {"CMicroHTTPD", "CZlib", "CSQLite"}
IMPORT = re.compile(r"^\s*(?:@testable\s+)?(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)")


def main():
    problems = []
    for module_dir in sorted(p for p in ROOT.iterdir() if p.is_dir()):
        module = module_dir.name
        if module.startswith("C") and not module.startswith("Cartograph"):
            continue  # the C shims import nothing of ours
        if module not in ALLOWED:
            problems.append("%s: a module this check does not know; add it to scripts/check-imports.py and docs/architecture.md" % module)
            continue
        for source in sorted(module_dir.rglob("*.swift")):
            for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
                match = IMPORT.match(line)
                if match and match.group(1) in PROJECT and match.group(1) not in ALLOWED[module]:
                    problems.append("%s:%d: %s imports %s" % (source.relative_to(ROOT.parent), number, module, match.group(1)))
    for problem in problems:
        print(problem)
    if problems:
        print("module arrows broken (docs/architecture.md): %d import(s)" % len(problems))
        sys.exit(1)
    print("module arrows hold: %d modules" % len(ALLOWED))


if __name__ == "__main__":
    main()
