#!/usr/bin/env python3
"""Shape (d) loaded by the sqlite-utils loader a competent user writes: per page one transaction, one
upsert_all of the rows as they come (pk = id).

Usage: su_load.py DB FILE...   (prints one JSON line; see bench/matrix/su_common.py)
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from su_common import main  # noqa: E402


def setup(db):
    db["items"].create({"id": int, "v": int, "s": str}, pk="id", if_not_exists=True)


def load(db, page):
    items = page["items"]
    db["items"].upsert_all(items, pk="id")
    return len(items)


if __name__ == "__main__":
    main(setup, load, ["items"])
