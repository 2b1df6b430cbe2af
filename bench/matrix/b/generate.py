#!/usr/bin/env python3
"""Shape (b) of the workload matrix (issue 29's "second article shape"): integer identities; an array
attribute (comment_ids, 0-8 integers, mapped to a transformable); an author {id, name, email} from a pool
of 1% of the articles; 0-5 tags {id, name} from a pool of 200. 1,000 articles per POST.

  {"id": 17, "title": "...", "body": "...", "published_at": "2019-…Z", "updated_at": "2019-….123Z",
   "views": 5120, "comment_ids": [3, 99], "author": {"id": 42, "name": "Ada Lovelace", "email": "ada.lovelace42@example.com"},
   "tags": [{"id": 7, "name": "climate-7"}, ...]}

Re-load: in every batch 10% of the articles change title, body, views, updated_at (newer) and their tag
set (always a different set), and half of those also change author (another author of the pool).

Usage: generate.py --objects N --out DIR [--seed S]
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gen_common import SPAN, WORDS, iso, parse_arguments, person, rngs, sentence, write_meta, writers  # noqa: E402

BATCH = 1000


def main():
    a = parse_arguments(BATCH)
    rng, pool_rng, change = rngs(a.seed)
    authors = []
    for k in range(max(1, a.objects // 100)):
        name = person(pool_rng)
        authors.append({"id": 1000 + k, "name": name, "email": "%s%d@example.com" % (name.lower().replace(" ", "."), k)})
    tags = [{"id": k + 1, "name": "%s-%d" % (pool_rng.choice(WORDS), k + 1)} for k in range(200)]
    first, reload = writers(a.out, "articles", BATCH)
    used_authors, used_tags, changed_total = set(), set(), 0
    for start in range(0, a.objects, BATCH):
        changed = set(change.sample(range(BATCH), BATCH // 10))
        author_changed = set(change.sample(sorted(changed), len(changed) // 2))
        for j in range(BATCH):
            i = start + j
            published = rng.randrange(SPAN)
            updated = published + rng.randrange(30 * 86400)
            tag_ids = rng.sample(range(len(tags)), rng.randint(0, 5))
            art = {"id": i + 1, "title": sentence(rng, 4, 10).capitalize(),
                   "body": "\n\n".join(sentence(rng, 20, 60).capitalize() + "." for _ in range(rng.randint(1, 3))),
                   "published_at": iso(published), "updated_at": iso(updated, rng.randrange(1000)),
                   "views": rng.randrange(1_000_000),
                   "comment_ids": sorted(rng.sample(range(1, 10_000_000), rng.randint(0, 8))),
                   "author": authors[rng.randrange(len(authors))],
                   "tags": [tags[k] for k in tag_ids]}
            first.add(art)
            used_authors.add(art["author"]["id"])
            used_tags.update(tags[k]["id"] for k in tag_ids)
            if j in changed:
                changed_total += 1
                art = dict(art, title=art["title"] + " (updated)", body=art["body"] + " Updated.",
                           views=art["views"] + 1 + change.randrange(1000),
                           updated_at=iso(updated + 60 + change.randrange(10 * 86400), change.randrange(1000)))
                new_tags = tag_ids
                while sorted(new_tags) == sorted(tag_ids):
                    new_tags = change.sample(range(len(tags)), change.randint(0, 5))
                art["tags"] = [tags[k] for k in new_tags]
                if j in author_changed and len(authors) > 1:
                    other = change.randrange(len(authors) - 1)
                    art["author"] = authors[other if authors[other]["id"] != art["author"]["id"] else len(authors) - 1]
            reload.add(art)
    first.flush(); reload.flush()
    write_meta(a.out, a.objects, changed_total, {"Article": a.objects, "Author": len(used_authors), "Tag": len(used_tags)},
               {"first": first, "reload": reload}, "author pool %d, tag pool 200, 1,000 articles per POST" % len(authors))


if __name__ == "__main__":
    main()
