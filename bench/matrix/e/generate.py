#!/usr/bin/env python3
"""Shape (e) of the workload matrix: a deep self-referencing tree. Each POST is one subtree of 1,000
categories, nested as the API returns it (a complete ternary tree: 7 levels below its root):

  {"categories": [{"id": 1, "name": "music-1", "children": [{"id": 2, "name": "…", "children": [ … ]}, …]}]}

Leaves carry "children": []. N counts every category (N/1,000 POSTs). Re-load: in every subtree 10% of
the categories are renamed and 2% (not roots) move, with their own subtrees, under another category of
the same subtree (never one of their descendants).

Usage: generate.py --objects N --out DIR [--seed S]
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gen_common import WORDS, parse_arguments, rngs, write_meta, writers  # noqa: E402

BATCH, BRANCHING = 1000, 3


def nested(j, names, children):
    return {"id": names[j][0], "name": names[j][1], "children": [nested(k, names, children) for k in children[j]]}


def descendants(j, children):
    out, stack = set(), [j]
    while stack:
        n = stack.pop()
        out.add(n)
        stack.extend(children[n])
    return out


def main():
    a = parse_arguments(BATCH)
    sys.setrecursionlimit(10000)
    rng, _, change = rngs(a.seed)
    first, reload = writers(a.out, "categories", BATCH)
    changed_total = moved_total = 0
    for start in range(0, a.objects, BATCH):
        names = [(start + j + 1, "%s-%d" % (rng.choice(WORDS), start + j + 1)) for j in range(BATCH)]
        parent = [None] + [(j - 1) // BRANCHING for j in range(1, BATCH)]
        children = [[] for _ in range(BATCH)]
        for j in range(1, BATCH):
            children[parent[j]].append(j)
        first.write_body({"categories": [nested(0, names, children)]})
        renamed = set(change.sample(range(BATCH), BATCH // 10))
        for j in renamed:
            names[j] = (names[j][0], names[j][1] + " (renamed)")
        moved = set()
        for j in change.sample(range(1, BATCH), BATCH // 50):
            below = descendants(j, children)
            candidates = [k for k in range(BATCH) if k not in below and k != parent[j]]
            target = change.choice(candidates)
            children[parent[j]].remove(j)
            children[target].append(j)
            parent[j] = target
            moved.add(j)
        changed_total += len(renamed | moved)
        moved_total += len(moved)
        reload.write_body({"categories": [nested(0, names, children)]})
    write_meta(a.out, a.objects, changed_total, {"Category": a.objects}, {"first": first, "reload": reload},
               "1,000 categories per POST (one subtree, 7 levels below its root); re-load: %d renamed or moved, %d of them moved"
               % (changed_total, moved_total))


if __name__ == "__main__":
    main()
