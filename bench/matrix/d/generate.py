#!/usr/bin/env python3
"""Shape (d) of the workload matrix: tiny objects, 5,000 per POST: {"id": 17, "v": 52311, "s": "k3f"}
(an integer identity, a small integer and a short string). Re-load: in every POST 10% of the objects get
another v.

Usage: generate.py --objects N --out DIR [--seed S]
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gen_common import parse_arguments, rngs, write_meta, writers  # noqa: E402

BATCH = 5000


def main():
    a = parse_arguments(BATCH)
    rng, _, change = rngs(a.seed)
    first, reload = writers(a.out, "items", BATCH)
    changed_total = 0
    for start in range(0, a.objects, BATCH):
        changed = set(change.sample(range(BATCH), BATCH // 10))
        for j in range(BATCH):
            item = {"id": start + j + 1, "v": rng.randrange(100_000), "s": "k%x" % rng.randrange(4096)}
            first.add(item)
            if j in changed:
                changed_total += 1
                item = dict(item, v=item["v"] + 1 + change.randrange(1000))
            reload.add(item)
    first.flush(); reload.flush()
    write_meta(a.out, a.objects, changed_total, {"Item": a.objects}, {"first": first, "reload": reload}, "5,000 objects per POST")


if __name__ == "__main__":
    main()
