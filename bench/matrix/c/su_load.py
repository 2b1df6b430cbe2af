#!/usr/bin/env python3
"""Shape (c) loaded by the sqlite-utils loader a competent user writes (issue 29): per page one
transaction; upsert_all for users (authors and assignees, pk = login), labels, milestones and issues;
the page's issue_labels and issue_assignees replaced by one DELETE … WHERE issue_id IN (…) each and
insert_all(ignore=True); dates and nulls as the API gives them.

Usage: su_load.py DB FILE...   (prints one JSON line; see bench/matrix/su_common.py)
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from su_common import main, replace_links  # noqa: E402

USER = ("login", "id", "avatar_url", "type", "site_admin")
LABEL = ("id", "name", "color", "default", "description")
MILESTONE = ("id", "number", "title", "state", "due_on")
ISSUE = ("id", "number", "title", "body", "state", "locked", "comments", "author_association", "created_at", "updated_at", "closed_at")


def setup(db):
    db["users"].create({"login": str, "id": int, "avatar_url": str, "type": str, "site_admin": int}, pk="login", if_not_exists=True)
    db["labels"].create({"id": int, "name": str, "color": str, "default": int, "description": str}, pk="id", if_not_exists=True)
    db["milestones"].create({"id": int, "number": int, "title": str, "state": str, "due_on": str}, pk="id", if_not_exists=True)
    db["issues"].create({"id": int, "number": int, "title": str, "body": str, "state": str, "locked": int, "comments": int,
                         "author_association": str, "created_at": str, "updated_at": str, "closed_at": str,
                         "user_login": str, "milestone_id": int}, pk="id",
                        foreign_keys=[("user_login", "users", "login"), ("milestone_id", "milestones", "id")], if_not_exists=True)
    db["issue_labels"].create({"issue_id": int, "label_id": int}, pk=("issue_id", "label_id"), if_not_exists=True)
    db["issue_assignees"].create({"issue_id": int, "user_login": str}, pk=("issue_id", "user_login"), if_not_exists=True)
    db["issues"].create_index(["user_login"], if_not_exists=True)
    db["issues"].create_index(["milestone_id"], if_not_exists=True)
    db["issue_labels"].create_index(["label_id"], if_not_exists=True)
    db["issue_assignees"].create_index(["user_login"], if_not_exists=True)


def load(db, page):
    batch = page["issues"]
    users, labels, milestones, rows, label_rows, assignee_rows = {}, {}, {}, [], [], []
    for issue in batch:
        row = {k: issue.get(k) for k in ISSUE}
        user, milestone = issue.get("user"), issue.get("milestone")
        if user:
            users[user["login"]] = {k: user.get(k) for k in USER}
        if milestone:
            milestones[milestone["id"]] = {k: milestone.get(k) for k in MILESTONE}
        row["user_login"] = user["login"] if user else None
        row["milestone_id"] = milestone["id"] if milestone else None
        rows.append(row)
        for label in issue.get("labels") or ():
            labels[label["id"]] = {k: label.get(k) for k in LABEL}
            label_rows.append({"issue_id": issue["id"], "label_id": label["id"]})
        for assignee in issue.get("assignees") or ():
            users[assignee["login"]] = {k: assignee.get(k) for k in USER}
            assignee_rows.append({"issue_id": issue["id"], "user_login": assignee["login"]})
    db["users"].upsert_all(users.values(), pk="login")
    db["labels"].upsert_all(labels.values(), pk="id")
    db["milestones"].upsert_all(milestones.values(), pk="id")
    db["issues"].upsert_all(rows, pk="id")
    ids = [issue["id"] for issue in batch]
    replace_links(db, "issue_labels", "issue_id", ids, label_rows)
    replace_links(db, "issue_assignees", "issue_id", ids, assignee_rows)
    return len(batch)


if __name__ == "__main__":
    main(setup, load, ["issues", "users", "labels", "milestones", "issue_labels", "issue_assignees"])
