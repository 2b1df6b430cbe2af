#!/usr/bin/env python3
"""Shape (e) loaded by the sqlite-utils loader a competent user writes: per page (one subtree) one
transaction; the tree flattened into rows {id, name, parent_id} and one upsert_all (pk = id), parent_id
indexed. A moved category gets its new parent_id; nothing else to do.

Usage: su_load.py DB FILE...   (prints one JSON line; see bench/matrix/su_common.py)
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from su_common import main  # noqa: E402


def setup(db):
    db["categories"].create({"id": int, "name": str, "parent_id": int}, pk="id",
                            foreign_keys=[("parent_id", "categories", "id")], if_not_exists=True)
    db["categories"].create_index(["parent_id"], if_not_exists=True)


def load(db, page):
    rows, stack = [], [(node, None) for node in page["categories"]]
    while stack:
        node, parent = stack.pop()
        rows.append({"id": node["id"], "name": node["name"], "parent_id": parent})
        stack.extend((child, node["id"]) for child in node.get("children") or ())
    db["categories"].upsert_all(rows, pk="id")
    return len(rows)


if __name__ == "__main__":
    main(setup, load, ["categories"])
