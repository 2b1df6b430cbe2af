#!/usr/bin/env python3
"""The ingestion bench's sqlite-utils path (issue 5): loads the same batch files the bench posts to
Cartograph into equivalent tables with `Table.upsert_all`, as a sqlite-utils user would:

  authors(id TEXT PK, name), tags(id TEXT PK, name),
  articles(id TEXT PK, title, body, published_at INTEGER ms, updated_at INTEGER ms, views,
           author_id -> authors.id), article_tags(article_id, tag_id, position; PK (article_id, tag_id))

with indexes on the foreign keys, WAL and synchronous=NORMAL (Cartograph's settings). Dates are
converted to milliseconds as Cartograph stores them. sqlite-utils has no modification attribute, so
a re-load upserts every row again. Prints one JSON line: counts and seconds (files read, parsed and
upserted; table creation excluded).

Usage: sqlite_utils_load.py DB FILE...
"""
import json
import sys
import time
from datetime import datetime, timezone

import sqlite_utils

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def ms(text):
    # Python 3.11+ reads "…Z" and fractions; milliseconds exactly, as integers.
    delta = datetime.fromisoformat(text) - EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


def main():
    db = sqlite_utils.Database(sys.argv[1])
    db.enable_wal()
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA cache_size=-32768")  # as a Cartograph store: the same page cache for every loader
    db["authors"].create({"id": str, "name": str}, pk="id", if_not_exists=True)
    db["tags"].create({"id": str, "name": str}, pk="id", if_not_exists=True)
    db["articles"].create({"id": str, "title": str, "body": str, "published_at": int, "updated_at": int, "views": int,
                           "author_id": str}, pk="id", foreign_keys=[("author_id", "authors", "id")], if_not_exists=True)
    db["article_tags"].create({"article_id": str, "tag_id": str, "position": int}, pk=("article_id", "tag_id"),
                              foreign_keys=[("article_id", "articles", "id"), ("tag_id", "tags", "id")], if_not_exists=True)
    db["articles"].create_index(["author_id"], if_not_exists=True)
    db["article_tags"].create_index(["tag_id"], if_not_exists=True)

    articles = links = 0
    start = time.perf_counter()
    for path in sys.argv[2:]:
        with open(path, "rb") as f:
            batch = json.load(f)["articles"]
        authors, tags, rows, tag_rows = {}, {}, [], []
        for a in batch:
            author = a.get("author")
            if author:
                authors[author["id"]] = author
            rows.append({"id": a["id"], "title": a["title"], "body": a["body"], "published_at": ms(a["published_at"]),
                         "updated_at": ms(a["updated_at"]), "views": a["views"], "author_id": author["id"] if author else None})
            for position, tag in enumerate(a.get("tags") or []):
                tags[tag["id"]] = tag
                tag_rows.append({"article_id": a["id"], "tag_id": tag["id"], "position": position})
        with db.conn:  # one transaction per batch file
            db["authors"].upsert_all(authors.values(), pk="id", batch_size=1000)
            db["tags"].upsert_all(tags.values(), pk="id", batch_size=1000)
            db["articles"].upsert_all(rows, pk="id", batch_size=1000)
            db["article_tags"].upsert_all(tag_rows, pk=("article_id", "tag_id"), batch_size=1000)
        articles += len(rows)
        links += len(tag_rows)
    seconds = time.perf_counter() - start
    print(json.dumps({"articles": articles, "tagLinks": links, "seconds": round(seconds, 6)}))


if __name__ == "__main__":
    main()
