#!/usr/bin/env python3
"""Checks that the repository's references to its own documentation hold:

1. every rule id (R-P6, or R_P6_ in a test name) cited in the sources, tests, scripts, the spec, the
   docs and the README is defined in docs/rules.md;
2. nothing cites the design contract the repository does not contain ("DESIGN §3", "DESIGN.md");
3. every pointer to a document of docs/ resolves: relative Markdown links in the documents, and
   `docs/<name>.md#<anchor>` written in code and comments, name a file that exists and a heading in it.

Usage: scripts/check-docs.py [repository root]. Exits 1 listing every problem."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
SCANNED = ["Sources", "Tests", "scripts", "docs", "Fuzz", "bench", "deploy",
           "openapi.yaml", "README.md", "SECURITY.md", "Makefile", "Dockerfile"]
TEXT_SUFFIXES = {".swift", ".md", ".py", ".sh", ".yaml", ".yml", ".c", ".h", ".toml", ".dict", ".json", ".service", ""}

RULE_ID = re.compile(r"(?<![A-Za-z0-9])R[-_]([A-Z])([0-9]+)(?![0-9])")
DEFINITION = re.compile(r"^\| (R-[A-Z][0-9]+) \|", re.MULTILINE)
DESIGN_CITATION = re.compile(r"DESIGN(?:\.md| §| \d|:)|\bDesign\d+_")
DOC_POINTER = re.compile(r"(?<![\w/.])docs/([A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def files():
    for name in SCANNED:
        path = root / name
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
        for file in candidates:
            if file.suffix in TEXT_SUFFIXES and "/Corpus/" not in str(file) and "/Crashers/" not in str(file):
                yield file


def anchors(markdown):
    """GitHub's heading anchors: lowercase, punctuation dropped, spaces to '-', repeats numbered."""
    found, counts, fenced = set(), {}, False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        heading = line.lstrip("#").strip()
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        number = counts.get(slug, 0)
        counts[slug] = number + 1
        found.add(slug if number == 0 else f"{slug}-{number}")
    return found


def main():
    problems = []
    rules = (root / "docs/rules.md").read_text()
    defined = set(DEFINITION.findall(rules))
    docs = {p.name: anchors(p.read_text()) for p in (root / "docs").glob("*.md")}

    def check_target(source, line, document, anchor):
        if document not in docs:
            problems.append(f"{source}:{line}: docs/{document} does not exist")
        elif anchor and anchor not in docs[document]:
            problems.append(f"{source}:{line}: docs/{document} has no heading for #{anchor}")

    for file in files():
        relative = file.relative_to(root)
        try:
            text = file.read_text()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for letter, digits in RULE_ID.findall(line):
                rule = f"R-{letter}{digits}"
                if rule not in defined:
                    problems.append(f"{relative}:{number}: {rule} is cited but not defined in docs/rules.md")
            if DESIGN_CITATION.search(line) and file.name != "check-docs.py":
                problems.append(f"{relative}:{number}: cites DESIGN, a document outside the repository; point at docs/ instead")
            if file.suffix != ".md":
                for document, anchor in DOC_POINTER.findall(line):
                    check_target(relative, number, document, anchor)
            else:
                for target in MARKDOWN_LINK.findall(line):
                    if re.match(r"[a-z]+:", target):
                        continue
                    path, _, anchor = target.partition("#")
                    resolved = (file.parent / path).resolve() if path else file.resolve()
                    if not resolved.exists():
                        problems.append(f"{relative}:{number}: the link {target} leads nowhere")
                    elif resolved.parent == (root / "docs").resolve() and resolved.suffix == ".md":
                        check_target(relative, number, resolved.name, anchor)
    for problem in problems:
        print(problem)
    print(f"check-docs: {len(defined)} rule ids defined, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
