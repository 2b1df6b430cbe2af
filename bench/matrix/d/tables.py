#!/usr/bin/env python3
"""What shape (d)'s tables cost, whoever writes them: the first load's rows written through Python's
sqlite3 (`executemany`, so SQLite's C code does nearly all the work) into sqlite-utils' one table, and
into Cartograph's tables for the same objects — the entity table with its identity index, then with the
scan projection (docs/storage.md, "Scans"), the change feed with its sequence index, and both — one
transaction per page of 5,000 as both loaders commit, the identities looked up per page as the engine
does. Process CPU (min of RUNS) per object and the database's size after a checkpoint. Issue 29 asks a
first load of (d) for 1.5x sqlite-utils' rate: this shows how much of that the tables leave.

Usage: tables.py DATA_DIR [RUNS]   (DATA_DIR: what generate.py wrote; prints one line per variant)
"""
import json, os, sqlite3, sys, tempfile, time

CARTOGRAPH_ITEM = ('CREATE TABLE "Item" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, '
                   '"_stub" INTEGER NOT NULL DEFAULT 0, "id" INTEGER, "v" INTEGER, "s" TEXT)')


def pages(data):
    folder = os.path.join(data, "first")
    return [json.load(open(os.path.join(folder, name)))["items"] for name in sorted(os.listdir(folder))]


def load(variant, pages, path):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if variant == "sqlite-utils":
        db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, v INTEGER, s TEXT)")
    else:
        db.execute(CARTOGRAPH_ITEM)
        db.execute('CREATE INDEX "ix:Item:id" ON "Item" ("id")')
        if "projection" in variant:
            db.execute('CREATE INDEX "ix:Item:_id,id,v" ON "Item" ("_id", "id", "v")')
        if "feed" in variant:
            db.execute('CREATE TABLE "_cartograph_feed" (object_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, '
                       'entity TEXT NOT NULL, key TEXT, deleted_at INTEGER)')
            db.execute('CREATE UNIQUE INDEX "_cartograph_feed_by_seq" ON "_cartograph_feed" (seq)')
    started = time.process_time()
    written = 0
    for page in pages:
        db.execute("BEGIN")
        if variant == "sqlite-utils":
            db.executemany("INSERT INTO items (id, v, s) VALUES (?, ?, ?) "
                           "ON CONFLICT(id) DO UPDATE SET v = excluded.v, s = excluded.s",
                           [(o["id"], o["v"], o["s"]) for o in page])
        else:
            ids = [o["id"] for o in page]
            db.execute('SELECT "_id", "id" FROM "Item" WHERE "id" IN (%s)' % ",".join("?" * len(ids)), ids).fetchall()
            rows = [(written + i + 1, o) for i, o in enumerate(page)]
            db.executemany('INSERT INTO "Item" ("_id", "_entity", "_stub", "id", "v", "s") VALUES (?, ?, 0, ?, ?, ?)',
                           [(row, "Item", o["id"], o["v"], o["s"]) for row, o in rows])
            if "feed" in variant:
                db.executemany('INSERT INTO "_cartograph_feed" (object_id, seq, entity, key) VALUES (?, ?, ?, ?)',
                               [(row, row, "Item", str(o["id"])) for row, o in rows])
        db.execute("COMMIT")
        written += len(page)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cpu = time.process_time() - started
    db.close()
    return cpu, os.path.getsize(path), written


def main():
    data = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    loaded = pages(data)
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "tables.sqlite")
        base = None
        for variant in ("sqlite-utils", "cartograph entity table", "+ projection", "+ feed", "+ projection + feed"):
            name = variant if not variant.startswith("+") else "cartograph entity table " + variant
            results = [load(name, loaded, path) for _ in range(runs)]
            cpu = min(r[0] for r in results)
            objects = results[0][2]
            base = base or cpu
            print("TABLES shape=d %-46s cpu %.2f us/object (%.2fx sqlite-utils')  %.1f MB" % (
                name, cpu * 1e6 / objects, cpu / base, results[0][1] / 1e6))


if __name__ == "__main__":
    main()
