"""The shared frame of the workload matrix's sqlite-utils loaders (bench/matrix/<shape>/su_load.py): the
loader a competent sqlite-utils user writes — one transaction per page (one POST body), upsert_all per
entity table with pk = the API's identity, a page's to-many join rows replaced by one
DELETE … WHERE <source> IN (…) and insert_all(rows, ignore=True), the API's values kept as they come
(dates as text), WAL and synchronous=NORMAL with a 32 MiB page cache (a Cartograph store's settings).

Timed in-process: the wall time of the loop over the page files (files read and parsed inside it;
table creation outside), and the process's CPU time over the same loop (resource.getrusage).
Prints one JSON line: {"objects": top-level objects loaded, "seconds", "cpuSeconds", "pages",
"counts": {table: rows}}.
"""
import json
import resource
import sys
import time

import sqlite_utils


def replace_links(db, table, source_column, source_ids, rows):
    """A page's join rows: those of its sources deleted in one statement, the page's inserted."""
    if source_ids:
        db.execute('DELETE FROM [%s] WHERE [%s] IN (%s)' % (table, source_column, ",".join("?" * len(source_ids))),
                   list(source_ids))
    if rows:
        db[table].insert_all(rows, ignore=True)


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(setup, load, tables):
    """setup(db) creates the tables; load(db, page) loads one parsed page and returns its top-level objects."""
    db = sqlite_utils.Database(sys.argv[1])
    db.enable_wal()
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA cache_size=-32768")
    setup(db)
    objects = pages = 0
    cpu0, start = cpu(), time.perf_counter()
    for path in sys.argv[2:]:
        with open(path, "rb") as f:
            page = json.load(f)
        with db.atomic():  # one transaction per page (nested writes become savepoints)
            objects += load(db, page)
        pages += 1
    seconds, cpu_seconds = time.perf_counter() - start, cpu() - cpu0
    counts = {t: db[t].count for t in tables}
    print(json.dumps({"objects": objects, "seconds": round(seconds, 6), "cpuSeconds": round(cpu_seconds, 6),
                      "pages": pages, "counts": counts}))
