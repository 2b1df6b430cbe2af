#!/usr/bin/env python3
"""Shape (c) of the workload matrix: GitHub-like issue pages, 100 issues per POST (GitHub's largest page):

  {"issues": [{"id": 1000000017, "node_id": "I_…", "number": 18, "title": "...", "body": "...",
    "state": "closed", "locked": false, "comments": 4, "author_association": "MEMBER",
    "created_at": "2019-…Z", "updated_at": "2019-…Z", "closed_at": "2019-…Z" | null,
    "user": {"login": "ada-lovelace-12", "id": 512, "node_id": "U_…", "avatar_url": "https://…", "type": "User", "site_admin": false},
    "labels": [{"id": 208, "node_id": "L_…", "name": "bug-8", "color": "d73a4a", "default": false, "description": "…"}, …],   (0-6)
    "assignees": [user, …],   (0-3, from the same user pool)
    "milestone": {"id": 3003, "number": 3, "title": "v1.3", "state": "open", "due_on": "…" | null} | null}, …]}

Users come from a pool of max(100, N/20) (identified by login), labels from 60, milestones from 40 (null on 40% of issues).
Re-load: in every page 10% of the issues change state (open <-> closed, closed_at set or cleared), their
labels and assignees (different sets) and updated_at (newer).

Usage: generate.py --objects N --out DIR [--seed S]
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gen_common import SPAN, WORDS, iso, parse_arguments, person, rngs, sentence, write_meta, writers  # noqa: E402

BATCH = 100


def main():
    a = parse_arguments(BATCH)
    rng, pool, change = rngs(a.seed)
    users = []
    for k in range(max(100, a.objects // 20)):
        login = "%s-%d" % (person(pool).lower().replace(" ", "-"), k)
        users.append({"login": login, "id": 500 + k, "node_id": "U_kgDO%08d" % k,
                      "avatar_url": "https://avatars.example.com/u/%d?v=4" % (500 + k), "type": "User", "site_admin": False})
    colors = ["d73a4a", "0075ca", "cfd3d7", "a2eeef", "7057ff", "008672", "e4e669", "d876e3"]
    labels = [{"id": 200 + k, "node_id": "LA_kwDO%06d" % k, "name": "%s-%d" % (pool.choice(WORDS), k), "color": pool.choice(colors),
               "default": k < 8, "description": sentence(pool, 2, 6)} for k in range(60)]
    milestones = [{"id": 3000 + k, "number": k + 1, "title": "v1.%d" % k, "state": "open" if k % 3 else "closed",
                   "due_on": iso(pool.randrange(SPAN)) if k % 2 else None} for k in range(40)]
    first, reload = writers(a.out, "issues", BATCH)
    used = {"User": set(), "Label": set(), "Milestone": set()}
    changed_total = 0

    def pick(r, population, lo, hi, avoid=None):
        while True:
            chosen = r.sample(range(len(population)), r.randint(lo, hi))
            if avoid is None or sorted(chosen) != sorted(avoid):
                return chosen

    for start in range(0, a.objects, BATCH):
        changed = set(change.sample(range(BATCH), BATCH // 10))
        for j in range(BATCH):
            i = start + j
            created = rng.randrange(SPAN)
            updated = created + rng.randrange(60 * 86400)
            closed = rng.random() < 0.6
            label_ids, assignee_ids = pick(rng, labels, 0, 6), pick(rng, users, 0, 3)
            author = rng.randrange(len(users))
            milestone = milestones[rng.randrange(len(milestones))] if rng.random() < 0.6 else None
            issue = {"id": 1_000_000_000 + i, "node_id": "I_kwDO%010d" % i, "number": i + 1,
                     "title": sentence(rng, 3, 12).capitalize(),
                     "body": "\n\n".join(sentence(rng, 10, 50).capitalize() + "." for _ in range(rng.randint(0, 3))) or None,
                     "state": "closed" if closed else "open", "locked": False, "comments": rng.randrange(30),
                     "author_association": rng.choice(["MEMBER", "CONTRIBUTOR", "NONE", "OWNER"]),
                     "created_at": iso(created), "updated_at": iso(updated),
                     "closed_at": iso(updated) if closed else None,
                     "user": users[author], "labels": [labels[k] for k in label_ids],
                     "assignees": [users[k] for k in assignee_ids], "milestone": milestone}
            first.add(issue)
            used["User"].add(author); used["User"].update(assignee_ids); used["Label"].update(label_ids)
            if milestone:
                used["Milestone"].add(milestone["id"])
            if j in changed:
                changed_total += 1
                now = updated + 60 + change.randrange(10 * 86400)
                closing = issue["state"] == "open"
                issue = dict(issue, state="closed" if closing else "open", closed_at=iso(now) if closing else None,
                             updated_at=iso(now),
                             labels=[labels[k] for k in pick(change, labels, 0, 6, label_ids)],
                             assignees=[users[k] for k in pick(change, users, 0, 3, assignee_ids)])
            reload.add(issue)
    first.flush(); reload.flush()
    write_meta(a.out, a.objects, changed_total,
               {"Issue": a.objects, "User": len(used["User"]), "Label": len(used["Label"]), "Milestone": len(used["Milestone"])},
               {"first": first, "reload": reload}, "user pool %d, 60 labels, 40 milestones, 100 issues per POST" % len(users))


if __name__ == "__main__":
    main()
