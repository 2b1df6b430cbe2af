// Shared by the ingestion bench's C references (ingest_reference.cpp: bench/ingest's articles, shape (a) of
// the workload matrix; ingest_reference_b.cpp: the matrix's shape (b)): SQLite helpers (one connection,
// prepared statements), the bytes the process wrote, and ISO 8601 dates to milliseconds.
#pragma once
#include <simdjson.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

