// Shared by the ingestion bench's C references (ingest_reference.cpp: bench/ingest's articles, shape (a) of
// the workload matrix; ingest_reference_b.cpp: the matrix's shape (b); ingest_reference_c.cpp: its shape
// (c)): SQLite helpers (one connection, prepared statements), the bytes the process wrote, ISO 8601 dates
// to milliseconds, and the steps they take alike: opening the store, the memoized upsert of a related
// object, finding a root object, rewriting an article's "Article.tags" rows (a, b) or writing a join
// table's rows as a difference (c), the counts they print.
#pragma once
#include <simdjson.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

using namespace simdjson;

static sqlite3 *db;

static void check(int rc, const char *what) {
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
    fprintf(stderr, "sqlite: %s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
  }
}

static void exec(const char *sql) {
  char *error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    fprintf(stderr, "sqlite: %s: %s\n", sql, error);
    exit(1);
  }
}

struct Stmt {
  sqlite3_stmt *s = nullptr;
  explicit Stmt(const char *sql) { check(sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr), sql); }
  Stmt &text(int i, std::string_view v) { sqlite3_bind_text(s, i, v.data(), (int)v.size(), SQLITE_STATIC); return *this; }
  Stmt &integer(int i, sqlite3_int64 v) { sqlite3_bind_int64(s, i, v); return *this; }
  Stmt &bind(int i, std::string_view v) { return text(i, v); }
  Stmt &bind(int i, int64_t v) { return integer(i, v); }
  Stmt &null(int i) { sqlite3_bind_null(s, i); return *this; }
  // A nullable value: bound when `has`, NULL otherwise.
  template <class T> Stmt &maybe(int i, bool has, T v) { return has ? bind(i, v) : null(i); }
  bool step() { int rc = sqlite3_step(s); check(rc, sqlite3_sql(s)); return rc == SQLITE_ROW; }
  void reset() { sqlite3_reset(s); }
  void run() { step(); reset(); }
};

// Bytes this process has written with write(2) and friends (`wchar` of /proc/self/io): the WAL,
// checkpoints into the database file. -1 where /proc is missing.
static long long bytesWritten() {
  FILE *io = fopen("/proc/self/io", "r");
  if (!io) return -1;
  char line[128];
  long long value = -1;
  while (fgets(line, sizeof line, io)) {
    if (sscanf(line, "wchar: %lld", &value) == 1) break;
  }
  fclose(io);
  return value;
}

// "YYYY-MM-DD", "YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]" -> milliseconds since 1970 (UTC).
static bool iso8601_ms(std::string_view t, int64_t &out) {
  auto num = [&](size_t at, size_t n, int &v) {
    if (at + n > t.size()) return false;
    v = 0;
    for (size_t i = at; i < at + n; i++) {
      if (t[i] < '0' || t[i] > '9') return false;
      v = v * 10 + (t[i] - '0');
    }
    return true;
  };
  int y, mo, d, h = 0, mi = 0, s = 0, ms = 0;
  if (!num(0, 4, y) || t.size() < 10 || t[4] != '-' || !num(5, 2, mo) || t[7] != '-' || !num(8, 2, d)) return false;
  size_t p = 10;
  int offset = 0;
  if (p < t.size()) {
    if ((t[p] != 'T' && t[p] != 't' && t[p] != ' ') || !num(p + 1, 2, h) || t[p + 3] != ':' || !num(p + 4, 2, mi) ||
        t[p + 6] != ':' || !num(p + 7, 2, s))
      return false;
    p += 9;
    if (p < t.size() && t[p] == '.') {
      p++;
      int digits = 0;
      while (p < t.size() && t[p] >= '0' && t[p] <= '9') {
        if (digits < 3) ms = ms * 10 + (t[p] - '0');
        digits++, p++;
      }
      if (digits == 0) return false;
      for (; digits < 3; digits++) ms *= 10;
    }
    if (p < t.size() && (t[p] == 'Z' || t[p] == 'z')) {
      p++;
    } else if (p < t.size() && (t[p] == '+' || t[p] == '-')) {
      int oh, om;
      if (!num(p + 1, 2, oh) || t[p + 3] != ':' || !num(p + 4, 2, om)) return false;
      offset = (t[p] == '+' ? 1 : -1) * (oh * 60 + om);
      p += 6;
    } else {
      return false;
    }
    if (p != t.size()) return false;
  }
  // Days from civil (Howard Hinnant).
  y -= mo <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = (unsigned)(y - era * 400);
  const unsigned doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = (int64_t)era * 146097 + (int64_t)doe - 719468;
  out = ((days * 86400 + h * 3600 + mi * 60 + s) - offset * 60) * 1000 + ms;
  return true;
}

static int64_t date(ondemand::value v) {
  std::string_view text = v.get_string();
  int64_t ms;
  if (!iso8601_ms(text, ms)) { fprintf(stderr, "bad date %.*s\n", (int)text.size(), text.data()); exit(1); }
  return ms;
}

static bool sameText(sqlite3_stmt *s, int column, std::string_view v) {
  const char *t = (const char *)sqlite3_column_text(s, column);
  return t && std::string_view(t, sqlite3_column_bytes(s, column)) == v;
}

static inline bool sameInt(sqlite3_stmt *s, int column, int64_t v) {
  return sqlite3_column_type(s, column) != SQLITE_NULL && sqlite3_column_int64(s, column) == v;
}

// A nullable column against a value that may be absent (`has` false: the column must be NULL).
static inline bool sameMaybeText(sqlite3_stmt *s, int column, bool has, std::string_view v) {
  return has ? sameText(s, column, v) : sqlite3_column_type(s, column) == SQLITE_NULL;
}
static inline bool sameMaybeInt(sqlite3_stmt *s, int column, bool has, int64_t v) {
  return has ? sameInt(s, column, v) : sqlite3_column_type(s, column) == SQLITE_NULL;
}

// Opens the store with a Cartograph store's settings (ModelStore: WAL, NORMAL, a 32 MiB page cache), so the
// reference is the physical limit of the same store, not one handicapped by a 2 MiB default cache.
static void openStore(const char *path) {
  check(sqlite3_open(path, &db), "open");
  exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-32768;");
}

struct Counts {
  long articles = 0, inserted = 0, updated = 0, unchanged = 0, articlesInserted = 0, articlesUpdated = 0, articlesUnchanged = 0;
};

// Finds an author or tag by its API id (`find` selects "_id" and then the columns `same` compares), updates
// it when `same` says its stored values differ, or inserts it; returns its "_id". Memoized per batch.
template <class Key, class Same, class Insert, class Update>
static int64_t upsert(std::unordered_map<Key, int64_t> &memo, Key key, Stmt &find, Same same, Insert insert, Update update,
                      Counts &n) {
  auto hit = memo.find(key);
  if (hit != memo.end()) return hit->second;
  int64_t id;
  find.bind(1, key);
  if (find.step()) {
    id = sqlite3_column_int64(find.s, 0);
    bool unchanged = same(find.s);
    find.reset();
    if (!unchanged) { update(id); n.updated++; } else { n.unchanged++; }
  } else {
    find.reset();
    insert();
    id = sqlite3_last_insert_rowid(db);
    n.inserted++;
  }
  memo.emplace(key, id);
  return id;
}

// The "_id" of the article `find` finds by its API id (it selects "_id", "updatedAt"), 0 when there is none;
// `current`: its stored updatedAt is not older than `updated` (modificationAttribute: it is skipped).
template <class Key>
static int64_t existingArticle(Stmt &find, Key key, int64_t updated, bool &current) {
  current = false;
  find.bind(1, key);
  if (!find.step()) { find.reset(); return 0; }
  int64_t id = sqlite3_column_int64(find.s, 0);
  current = sqlite3_column_type(find.s, 1) != SQLITE_NULL && sqlite3_column_int64(find.s, 1) >= updated;
  find.reset();
  return id;
}

// The join table "Article.tags" (source, destination, position): an article's tags in order.
struct ArticleTags {
  Stmt of{R"(SELECT "destination" FROM "Article.tags" WHERE "source" = ? ORDER BY "position", rowid)"};
  Stmt clear{R"(DELETE FROM "Article.tags" WHERE "source" = ?)"};
  Stmt insert{R"(INSERT INTO "Article.tags" ("source", "destination", "position") VALUES (?, ?, ?))"};
  std::vector<int64_t> old;

  // Rewrites an existing article's rows unless they already are `tags` (in order).
  void replace(int64_t article, const std::vector<int64_t> &tags) {
    old.clear();
    of.integer(1, article);
    while (of.step()) old.push_back(sqlite3_column_int64(of.s, 0));
    of.reset();
    if (old == tags) return;
    clear.integer(1, article).run();
    add(article, tags);
  }
  void add(int64_t article, const std::vector<int64_t> &tags) {
    for (size_t i = 0; i < tags.size(); i++) insert.integer(1, article).integer(2, tags[i]).integer(3, (int64_t)i).run();
  }
};

// A join table (source, destination, position) of an unordered to-many written as Cartograph writes it
// (docs/storage.md, "Tables"): a difference. An existing source's rows whose destination is no longer in
// the list are deleted, only destinations not already there are inserted (at their index in the written
// list), and the rows that stay keep their position. A destination named twice is stored once. A row goes by
// its rowid: `WHERE source = ? AND destination = ?` is planned on the destination index (no statistics; SQLite
// 3.40), which for a label shared by thousands of issues reads thousands of entries per deleted row.
struct JoinRows {
  Stmt of, remove, insert;
  std::vector<int64_t> old, oldRows, wanted;
  explicit JoinRows(const std::string &table)
      : of(("SELECT \"destination\", rowid FROM \"" + table + "\" WHERE \"source\" = ?").c_str()),
        remove(("DELETE FROM \"" + table + "\" WHERE rowid = ?").c_str()),
        insert(("INSERT INTO \"" + table + "\" (\"source\", \"destination\", \"position\") VALUES (?, ?, ?)").c_str()) {}

  static bool has(const std::vector<int64_t> &v, int64_t x) {
    for (int64_t y : v) if (y == x) return true;
    return false;
  }
  // An existing source: returns the rows deleted + inserted (0 when its set is unchanged).
  long write(int64_t source, const std::vector<int64_t> &destinations) {
    old.clear(); oldRows.clear();
    of.integer(1, source);
    while (of.step()) { old.push_back(sqlite3_column_int64(of.s, 0)); oldRows.push_back(sqlite3_column_int64(of.s, 1)); }
    of.reset();
    long rows = 0;
    for (size_t i = 0; i < old.size(); i++)
      if (!has(destinations, old[i])) { remove.integer(1, oldRows[i]).run(); rows++; }
    wanted.clear();
    for (size_t i = 0; i < destinations.size(); i++) {
      int64_t d = destinations[i];
      if (has(old, d) || has(wanted, d)) continue;
      wanted.push_back(d);
      insert.integer(1, source).integer(2, d).integer(3, (int64_t)i).run();
      rows++;
    }
    return rows;
  }
  // A new source: every row inserted.
  void add(int64_t source, const std::vector<int64_t> &destinations) {
    wanted.clear();
    for (size_t i = 0; i < destinations.size(); i++) {
      if (has(wanted, destinations[i])) continue;
      wanted.push_back(destinations[i]);
      insert.integer(1, source).integer(2, destinations[i]).integer(3, (int64_t)i).run();
    }
  }
};

// Prints the one JSON line, with "counts": each table of `tables` counted once the load is done (so a reference
// that wrote fewer rows cannot look fast: bench/matrix/run.py checks the entities' counts against the generated
// data). Every statement is finalized first, so the close runs the last checkpoint and its bytes count in
// bytesWritten, as a Cartograph store's checkpoint counts in the server's. `root` names the root objects' keys
// ("articles", "articlesInserted", …); another name than "articles" also prints their count as "objects" (what
// bench/matrix/run.py reads).
static void finish(const Counts &n, std::chrono::steady_clock::time_point start, std::initializer_list<const char *> tables = {},
                   const char *root = "articles") {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string counts;
  for (const char *table : tables) {
    Stmt count(("SELECT COUNT(*) FROM \"" + std::string(table) + "\"").c_str());
    count.step();
    counts += (counts.empty() ? "" : ", ") + ("\"" + std::string(table) + "\": ") + std::to_string(sqlite3_column_int64(count.s, 0));
  }
  while (sqlite3_stmt *statement = sqlite3_next_stmt(db, nullptr)) sqlite3_finalize(statement);
  check(sqlite3_close(db), "close");
  if (strcmp(root, "articles") != 0) printf("{\"objects\": %ld, ", n.articles); else printf("{");
  printf("\"%s\": %ld, \"%sInserted\": %ld, \"%sUpdated\": %ld, \"%sUnchanged\": %ld, "
         "\"inserted\": %ld, \"updated\": %ld, \"unchanged\": %ld, \"seconds\": %.6f, \"bytesWritten\": %lld, \"counts\": {%s}}\n",
         root, n.articles, root, n.articlesInserted, root, n.articlesUpdated, root, n.articlesUnchanged, n.inserted, n.updated,
         n.unchanged, seconds, bytesWritten(), counts.c_str());
}
