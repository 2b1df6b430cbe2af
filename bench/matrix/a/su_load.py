#!/usr/bin/env python3
"""Shape (a) loaded by the sqlite-utils loader a competent user writes (issue 29): per page one
transaction; upsert_all for authors, tags and articles (pk = the API's id); the page's article_tags
replaced by one DELETE … WHERE article_id IN (…) and insert_all(ignore=True); dates kept as the API's text.

Usage: su_load.py DB FILE...   (prints one JSON line; see bench/matrix/su_common.py)
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from su_common import main, replace_links  # noqa: E402


def setup(db):
    db["authors"].create({"id": str, "name": str}, pk="id", if_not_exists=True)
    db["tags"].create({"id": str, "name": str}, pk="id", if_not_exists=True)
    db["articles"].create({"id": str, "title": str, "body": str, "published_at": str, "updated_at": str, "views": int,
                           "author_id": str}, pk="id", foreign_keys=[("author_id", "authors", "id")], if_not_exists=True)
    db["article_tags"].create({"article_id": str, "tag_id": str}, pk=("article_id", "tag_id"),
                              foreign_keys=[("article_id", "articles", "id"), ("tag_id", "tags", "id")], if_not_exists=True)
    db["articles"].create_index(["author_id"], if_not_exists=True)
    db["article_tags"].create_index(["tag_id"], if_not_exists=True)


def load(db, page):
    batch = page["articles"]
    authors, tags, rows, links = {}, {}, [], []
    for a in batch:
        author = a.get("author")
        if author:
            authors[author["id"]] = author
        rows.append({"id": a["id"], "title": a["title"], "body": a["body"], "published_at": a["published_at"],
                     "updated_at": a["updated_at"], "views": a["views"], "author_id": author["id"] if author else None})
        for t in a.get("tags") or ():
            tags[t["id"]] = t
            links.append({"article_id": a["id"], "tag_id": t["id"]})
    db["authors"].upsert_all(authors.values(), pk="id")
    db["tags"].upsert_all(tags.values(), pk="id")
    db["articles"].upsert_all(rows, pk="id")
    replace_links(db, "article_tags", "article_id", [a["id"] for a in batch], links)
    return len(batch)


if __name__ == "__main__":
    main(setup, load, ["articles", "authors", "tags", "article_tags"])
