"""Shared pieces of the workload matrix's payload generators (bench/matrix/<shape>/generate.py).

Each generator is deterministic (everything derives from --seed) and writes, under --out:
  first/batch-NNNNN.json   the first load, one POST body per file
  reload/batch-NNNNN.json  the same objects with a seeded fraction changed (the re-load; it is also what
                           the re-post of identical data posts again)
  meta.json                {"objects": top-level objects, "changed": changed top-level objects in the
                            re-load, "counts": {entity: objects after the first load}, "bytes": {...}}
"""
import json
import os
import sys
from datetime import datetime, timedelta, timezone

WORDS = """time year people way day man thing woman life child world school state family student group
country problem hand part place case week company system program question work government number night
point home water room mother area money story fact month lot right study book eye job word business issue
side kind head house service friend father power hour game line end member law car city community name
president team minute idea kid body information back parent face others level office door health person
art war history party result change morning reason research girl guy moment air teacher force education
foot boy age policy process music market sense nation plan college interest death experience effect use
class control care field development role effort rate heart drug show leader light voice wife police mind
price report decision son view relationship town road arm difference value building action model season
society tax director position player record paper space ground form event official matter center couple
café naïve résumé über straße""".split()
FIRST = "Ada Grace Alan Edsger Barbara Donald Margaret Ken Dennis Linus Frances Radia Tim Vint Leslie Niklaus".split()
LAST = "Lovelace Hopper Turing Dijkstra Liskov Knuth Hamilton Thompson Ritchie Torvalds Allen Perlman Berners-Lee Cerf Lamport Wirth".split()

EPOCH = datetime(2015, 1, 1, tzinfo=timezone.utc)
SPAN = 9 * 365 * 86400


def iso(seconds, millis=None):
    text = (EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    return text + ("Z" if millis is None else ".%03dZ" % millis)


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


def write_meta(out, objects, changed, counts, writers, note=""):
    meta = {"objects": objects, "changed": changed, "counts": counts,
            "bytes": {name: w.bytes for name, w in writers.items()},
            "batches": {name: w.number for name, w in writers.items()}, "note": note}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("wrote %s: %d objects, %d changed in the re-load, %s; %s" % (
        out, objects, changed, ", ".join("%s %.1f MB in %d batches" % (k, w.bytes / 1e6, w.number) for k, w in writers.items()),
        note), file=sys.stderr)
