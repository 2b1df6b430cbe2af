"""Shared pieces of the workload matrix's payload generators (bench/matrix/<shape>/generate.py).

Each generator is deterministic (everything derives from --seed) and writes, under --out:
  first/batch-NNNNN.json   the first load, one POST body per file
  reload/batch-NNNNN.json  the same objects with a seeded fraction changed (the re-load; it is also what
                           the re-post of identical data posts again)
  meta.json                {"objects": top-level objects, "changed": changed top-level objects in the
                            re-load, "counts": {entity: objects after the first load}, "bytes": {...}}
"""
import argparse
import importlib.util
import json
import os
import random
import sys


def _load_article_generator():
    # bench/ingest/generate.py by its path: `import generate` could find the running shape's own generate.py.
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ingest", "generate.py")
    spec = importlib.util.spec_from_file_location("ingest_generate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_articles = _load_article_generator()
# The article generator's name pools, dates and words: its common ones and accented ones, not its extra
# ones (a longer list would change every shape's payloads).
FIRST, LAST, SPAN, iso = _articles.FIRST, _articles.LAST, _articles.SPAN, _articles.iso
WORDS = _articles.COMMON_WORDS + _articles.ACCENTED


def parse_arguments(batch):
    """The generators' command line: --objects N (a multiple of `batch`), --out DIR, --seed S (42)."""
    p = argparse.ArgumentParser()
    p.add_argument("--objects", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=42)
    a = p.parse_args()
    if a.objects % batch:
        p.error("--objects must be a multiple of %d" % batch)
    return a


def rngs(seed):
    """The seeded streams (derived as bench/ingest/generate.py derives its own): the objects', the pools'
    and the re-load's changes."""
    return random.Random(seed), random.Random(seed * 7919 + 1), random.Random(seed * 104729 + 3)


def sentence(rng, lo, hi):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def person(rng):
    return "%s %s" % (rng.choice(FIRST), rng.choice(LAST))


class BatchWriter:
    """Writes {key: [objects]} files of `size` objects each into directory `out`."""

    def __init__(self, out, key, size):
        self.out, self.key, self.size = out, key, size
        self.batch, self.number, self.bytes = [], 0, 0
        os.makedirs(out, exist_ok=True)

    def add(self, obj):
        self.batch.append(obj)
        if len(self.batch) == self.size:
            self.flush()

    def flush(self):
        if not self.batch:
            return
        self.write_body({self.key: self.batch})
        self.batch = []

    def write_body(self, body):
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        with open(os.path.join(self.out, "batch-%05d.json" % self.number), "wb") as f:
            f.write(text)
        self.bytes += len(text)
        self.number += 1


def writers(out, key, size):
    """The BatchWriters of the first load (out/first) and of the re-load (out/reload)."""
    return BatchWriter(os.path.join(out, "first"), key, size), BatchWriter(os.path.join(out, "reload"), key, size)


def write_meta(out, objects, changed, counts, writers, note=""):
    meta = {"objects": objects, "changed": changed, "counts": counts,
            "bytes": {name: w.bytes for name, w in writers.items()},
            "batches": {name: w.number for name, w in writers.items()}, "note": note}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("wrote %s: %d objects, %d changed in the re-load, %s; %s" % (
        out, objects, changed, ", ".join("%s %.1f MB in %d batches" % (k, w.bytes / 1e6, w.number) for k, w in writers.items()),
        note), file=sys.stderr)
