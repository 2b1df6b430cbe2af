#!/usr/bin/env python3
"""Deterministic generator of realistic API payloads for the ingestion benchmark (issue 5).

Writes `--articles N` articles as batch files `batch-00000.json`, ... of `--batch` (1,000) articles
each; every file is one POST body: `{"articles": [...]}`. An article looks like what a news API
returns: string ids, ISO 8601 dates, a nested author drawn from a small pool (`--authors`, 1,000) and
0-5 nested tags drawn from `--tags` (200):

  {"id": "a_9e3779b97f4a7c15", "title": "...", "body": "...", "published_at": "2021-03-04T05:06:07Z",
   "updated_at": "2021-03-09T11:12:13.456Z", "views": 123456,
   "author": {"id": "u_0042", "name": "Ada Lovelace"}, "tags": [{"id": "t_017", "name": "climate"}, ...]}

Everything derives from `--seed`, and the stream is prefix-stable: the first k batches of a 1M set
are exactly the batches of a k*1000 set, so one generated set serves every size.

`--changed 0.1` writes the re-load set: the same articles, byte for byte, except that in every batch
exactly 10% of them (chosen by the seed) have a newer `updated_at` and a changed title.

`--changed 0.1 --generation 2` writes a second re-load set, meant to follow the first: generation 1's
changes are all in it (so against a store that holds generation 1 they are unchanged), and another,
disjoint 10% of every batch has an `updated_at` newer than anything generation 1 wrote for it (11 to
21 days after the original, where generation 1 moved it by at most 10 days) and a changed title.
Generation 1 (the default) is byte-identical whether or not `--generation` is given.
"""
import argparse
import json
import os
import random
import sys
from datetime import datetime, timedelta, timezone

# The words of titles, bodies and tag names: common nouns, a few more, and some accented ones for
# non-ASCII text (the workload matrix's shapes, bench/matrix/gen_common.py, use COMMON_WORDS + ACCENTED).
COMMON_WORDS = """time year people way day man thing woman life child world school state family student group
country problem hand part place case week company system program question work government number night
point home water room mother area money story fact month lot right study book eye job word business issue
side kind head house service friend father power hour game line end member law car city community name
president team minute idea kid body information back parent face others level office door health person
art war history party result change morning reason research girl guy moment air teacher force education
foot boy age policy process music market sense nation plan college interest death experience effect use
class control care field development role effort rate heart drug show leader light voice wife police mind
price report decision son view relationship town road arm difference value building action model season
society tax director position player record paper space ground form event official matter center couple""".split()
ACCENTED = "café naïve résumé über straße".split()
WORDS = COMMON_WORDS + """site project activity star table need court oil situation cost industry figure street image phone data
picture practice piece land product doctor wall patient worker news test movie north love support
technology step baby computer type attention film tree source organization hair window evidence
population site energy climate""".split() + ACCENTED
FIRST = "Ada Grace Alan Edsger Barbara Donald Margaret Ken Dennis Linus Frances Radia Tim Vint Leslie Niklaus".split()
LAST = "Lovelace Hopper Turing Dijkstra Liskov Knuth Hamilton Thompson Ritchie Torvalds Allen Perlman Berners-Lee Cerf Lamport Wirth".split()

EPOCH = datetime(2015, 1, 1, tzinfo=timezone.utc)
SPAN = 9 * 365 * 86400  # published between 2015 and 2024
MIX = 0x9E3779B97F4A7C15


def article_id(i):
    # A bijection of the index (odd multiplier mod 2^64): unique, but scattered like real ids.
    return "a_%016x" % ((i + 1) * MIX & 0xFFFFFFFFFFFFFFFF)


def iso(seconds, millis=None):
    t = EPOCH + timedelta(seconds=seconds)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    return text + ("Z" if millis is None else ".%03dZ" % millis)


def sentence(rng, lo, hi):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def pools(seed, authors, tags):
    rng = random.Random(seed * 7919 + 1)
    author_pool = [{"id": "u_%04d" % k, "name": "%s %s" % (rng.choice(FIRST), rng.choice(LAST))} for k in range(authors)]
    tag_pool = [{"id": "t_%03d" % k, "name": "%s-%d" % (rng.choice(WORDS), k)} for k in range(tags)]
    return author_pool, tag_pool


def articles(seed, count, author_pool, tag_pool):
    """Yields (index, article) in order; one RNG stream, so any prefix is the same."""
    rng = random.Random(seed)
    for i in range(count):
        published = rng.randrange(SPAN)
        updated = published + rng.randrange(30 * 86400)
        title = sentence(rng, 4, 10).capitalize()
        if rng.random() < 0.05:
            title += ' "%s"' % rng.choice(WORDS)  # escaped quotes now and then
        body = "\n\n".join(sentence(rng, 20, 60).capitalize() + "." for _ in range(rng.randint(1, 3)))
        yield i, {
            "id": article_id(i),
            "title": title,
            "body": body,
            "published_at": iso(published),
            "updated_at": iso(updated, rng.randrange(1000)),
            "views": rng.randrange(1_000_000),
            "author": author_pool[rng.randrange(len(author_pool))],
            "tags": [tag_pool[k] for k in rng.sample(range(len(tag_pool)), rng.randint(0, 5))],
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, required=True, help="number of articles (a multiple of --batch)")
    parser.add_argument("--out", required=True, help="directory for batch-NNNNN.json")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--authors", type=int, default=1000, help="author pool size")
    parser.add_argument("--tags", type=int, default=200, help="tag pool size")
    parser.add_argument("--changed", type=float, default=0.0,
                        help="re-load mode: this fraction of each batch gets a newer updated_at and a new title")
    parser.add_argument("--generation", type=int, default=1, choices=(1, 2),
                        help="with --changed: 2 adds a second, disjoint changed fraction, newer than generation 1's")
    args = parser.parse_args()
    if args.articles % args.batch:
        parser.error("--articles must be a multiple of --batch")
    if args.generation == 2 and not 0 < args.changed <= 0.5:
        parser.error("--generation 2 needs --changed in (0, 0.5]")
    os.makedirs(args.out, exist_ok=True)
    author_pool, tag_pool = pools(args.seed, args.authors, args.tags)
    change_rng = random.Random(args.seed * 104729 + 3)
    # Generation 2's own stream: generation 1's draws from change_rng stay exactly as they were.
    second_rng = random.Random(args.seed * 104729 + 5)
    per_batch = round(args.batch * args.changed)
    batch, changed, changed2, total_bytes, number = [], set(), set(), 0, 0

    def flush():
        nonlocal batch, total_bytes, number
        text = json.dumps({"articles": batch}, ensure_ascii=False, separators=(",", ":")).encode()
        with open(os.path.join(args.out, "batch-%05d.json" % number), "wb") as f:
            f.write(text)
        total_bytes += len(text)
        number += 1
        batch = []

    for i, article in articles(args.seed, args.articles, author_pool, tag_pool):
        if i % args.batch == 0 and per_batch:
            changed = set(change_rng.sample(range(args.batch), per_batch))
            if args.generation == 2:
                changed2 = set(second_rng.sample(sorted(set(range(args.batch)) - changed), per_batch))
        if i % args.batch in changed:
            # Newer by 1 minute to 10 days (always newer, also than the stored milliseconds).
            seconds = int(datetime.fromisoformat(article["updated_at"].replace("Z", "+00:00")).timestamp() - EPOCH.timestamp())
            article["updated_at"] = iso(seconds + 60 + change_rng.randrange(10 * 86400), change_rng.randrange(1000))
            article["title"] = article["title"] + " (updated)"
        elif i % args.batch in changed2:
            # Newer by 11 to 21 days: later than any generation-1 change (at most 10 days + 1 minute).
            seconds = int(datetime.fromisoformat(article["updated_at"].replace("Z", "+00:00")).timestamp() - EPOCH.timestamp())
            article["updated_at"] = iso(seconds + 11 * 86400 + second_rng.randrange(10 * 86400), second_rng.randrange(1000))
            article["title"] = article["title"] + " (updated again)"
        batch.append(article)
        if len(batch) == args.batch:
            flush()
    print("wrote %d batches, %d articles, %.1f MB (largest batch %d bytes)%s" % (
        number, args.articles, total_bytes / 1e6,
        max(os.path.getsize(os.path.join(args.out, "batch-%05d.json" % n)) for n in range(number)),
        (", %.0f%% changed" % (100 * per_batch / args.batch) if per_batch else "")
        + (" (generation 2: another %.0f%% changed, newer than generation 1)" % (100 * per_batch / args.batch)
           if per_batch and args.generation == 2 else "")), file=sys.stderr)


if __name__ == "__main__":
    main()
