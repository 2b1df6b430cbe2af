/* The reference for the store section of `make bench`: a minimal libmicrohttpd + SQLite server that
 * answers Cartograph's two read URLs for the bench model from the same store file, with the same JSON
 * bytes, in the same daemon mode as mhd_reference.c (internal polling thread + epoll + thread pool):
 *
 *   GET /v1/tenants/bench/models/articles/entities/Article/objects/<identifier>
 *   GET /v1/tenants/bench/models/articles/entities/Article/objects?where=views > N&orderBy=-publishedAt&limit=L
 *
 * Each pool thread has its own read-only SQLite connection and prepared statements. The bearer token
 * is checked with strcmp. The list answers only `views > N` ordered by `-publishedAt` (anything else
 * is a 400) and, like Cartograph, returns a keyset cursor in `next` when there are more rows. The SQL
 * is what a hand-written server would run: no `_entity` filter (the table holds only articles), ties
 * broken on `_id` in the direction of the last order key, as Cartograph does.
 *
 * Usage: store_reference PORT THREADS DB_PATH TOKEN */
#include <microhttpd.h>
#include <sqlite3.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PREFIX "/v1/tenants/bench/models/articles/entities/Article/objects"

static const char *db_path;
static char bearer[512];

static const char *GET_SQL =
    "SELECT a._id, a._entity, a.identifier, a.title, a.views, a.publishedAt, a.price, au.identifier "
    "FROM Article a LEFT JOIN Author au ON au._id = a.author "
    "WHERE a.identifier = ?1 ORDER BY a._id LIMIT 1";
/* The page is chosen first and only its rows join their author (a join before the sort would look up
 * the author of every match when no index delivers the order). */
static const char *LIST_SQL =
    "SELECT a._id, a._entity, a.identifier, a.title, a.views, a.publishedAt, a.price, au.identifier "
    "FROM (SELECT * FROM Article WHERE views > ?1 ORDER BY publishedAt DESC, _id DESC LIMIT ?2) a "
    "LEFT JOIN Author au ON au._id = a.author ORDER BY a.publishedAt DESC, a._id DESC";

/* One connection and its statements per pool thread. */
static __thread sqlite3 *db;
static __thread sqlite3_stmt *get_stmt, *list_stmt;

static int open_thread_db(void) {
    if (db != NULL) return 0;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) goto fail;
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_prepare_v3(db, GET_SQL, -1, SQLITE_PREPARE_PERSISTENT, &get_stmt, NULL) != SQLITE_OK) goto fail;
    if (sqlite3_prepare_v3(db, LIST_SQL, -1, SQLITE_PREPARE_PERSISTENT, &list_stmt, NULL) != SQLITE_OK) goto fail;
    return 0;
fail:
    fprintf(stderr, "store_reference: %s\n", db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close_v2(db);
    db = NULL;
    return -1;
}

/* A growable output buffer. */
typedef struct { char *p; size_t len, cap; } buf;

static void reserve(buf *b, size_t n) {
    if (b->len + n <= b->cap) return;
    while (b->len + n > b->cap) b->cap = b->cap ? b->cap * 2 : 1024;
    b->p = realloc(b->p, b->cap);
    if (b->p == NULL) abort();
}
static void put(buf *b, const char *s, size_t n) { reserve(b, n); memcpy(b->p + b->len, s, n); b->len += n; }
static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }
static void put_i64(buf *b, sqlite3_int64 v) { char t[32]; put(b, t, (size_t)snprintf(t, sizeof t, "%lld", (long long)v)); }

static void put_json_string(buf *b, const unsigned char *s, int n) {
    static const char hex[] = "0123456789abcdef";
    reserve(b, (size_t)n + 2);
    b->p[b->len++] = '"';
    for (int i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') { char e[2] = {'\\', (char)c}; put(b, e, 2); }
        else if (c == '\n') put(b, "\\n", 2);
        else if (c == '\r') put(b, "\\r", 2);
        else if (c == '\t') put(b, "\\t", 2);
        else if (c < 0x20) { char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]}; put(b, e, 6); }
        else { reserve(b, 1); b->p[b->len++] = (char)c; }
    }
    reserve(b, 1);
    b->p[b->len++] = '"';
}

static void put_int_or_null(buf *b, sqlite3_stmt *s, int col) {
    if (sqlite3_column_type(s, col) == SQLITE_NULL) puts_(b, "null"); else put_i64(b, sqlite3_column_int64(s, col));
}
static void put_text_or_null(buf *b, sqlite3_stmt *s, int col) {
    if (sqlite3_column_type(s, col) == SQLITE_NULL) { puts_(b, "null"); return; }
    const unsigned char *t = sqlite3_column_text(s, col);
    put_json_string(b, t, sqlite3_column_bytes(s, col));
}

/* Milliseconds since 1970 as YYYY-MM-DDTHH:MM:SS.sssZ, as Cartograph renders dates. */
static void put_date(buf *b, sqlite3_stmt *s, int col) {
    if (sqlite3_column_type(s, col) == SQLITE_NULL) { puts_(b, "null"); return; }
    sqlite3_int64 ms = sqlite3_column_int64(s, col);
    time_t secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (sqlite3_int64)secs * 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char t[40];
    put(b, t, (size_t)snprintf(t, sizeof t, "\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
                               tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac));
}

/* The current row as Cartograph's `shape=model` object. */
static void put_object(buf *b, sqlite3_stmt *s) {
    puts_(b, "{\"_id\":"); put_i64(b, sqlite3_column_int64(s, 0));
    puts_(b, ",\"_entity\":"); put_text_or_null(b, s, 1);
    puts_(b, ",\"identifier\":"); put_int_or_null(b, s, 2);
    puts_(b, ",\"title\":"); put_text_or_null(b, s, 3);
    puts_(b, ",\"views\":"); put_int_or_null(b, s, 4);
    puts_(b, ",\"publishedAt\":"); put_date(b, s, 5);
    puts_(b, ",\"price\":"); put_text_or_null(b, s, 6);
    puts_(b, ",\"author\":"); put_int_or_null(b, s, 7);
    puts_(b, "}");
}

/* base64url without padding, as Cartograph's cursors. */
static void put_base64url(buf *b, const char *s, size_t n) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        char e[4] = {a[u[i] >> 2], a[((u[i] & 3) << 4) | (u[i + 1] >> 4)], a[((u[i + 1] & 15) << 2) | (u[i + 2] >> 6)], a[u[i + 2] & 63]};
        put(b, e, 4);
    }
    if (n - i == 1) { char e[2] = {a[u[i] >> 2], a[(u[i] & 3) << 4]}; put(b, e, 2); }
    else if (n - i == 2) { char e[3] = {a[u[i] >> 2], a[((u[i] & 3) << 4) | (u[i + 1] >> 4)], a[(u[i + 1] & 15) << 2]}; put(b, e, 3); }
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned int status, buf *b) {
    struct MHD_Response *r = MHD_create_response_from_buffer(b->len, b->p, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "X-Request-Id", "0123456789-1");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}
static enum MHD_Result respond_text(struct MHD_Connection *c, unsigned int status, const char *body) {
    buf b = {0};
    puts_(&b, body);
    return respond(c, status, &b);
}

static enum MHD_Result get_by_key(struct MHD_Connection *c, const char *key) {
    char *end;
    long long k = strtoll(key, &end, 10);
    if (*key == '\0' || *end != '\0') return respond_text(c, 400, "{\"status\":400}\n");
    sqlite3_reset(get_stmt);
    sqlite3_bind_int64(get_stmt, 1, k);
    int rc = sqlite3_step(get_stmt);
    if (rc == SQLITE_DONE) { sqlite3_reset(get_stmt); return respond_text(c, 404, "{\"status\":404}\n"); }
    if (rc != SQLITE_ROW) { sqlite3_reset(get_stmt); return respond_text(c, 500, "{\"status\":500}\n"); }
    buf b = {0};
    put_object(&b, get_stmt);
    puts_(&b, "\n");
    sqlite3_reset(get_stmt);
    return respond(c, 200, &b);
}

static enum MHD_Result list(struct MHD_Connection *c) {
    const char *where = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "where");
    const char *order = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "orderBy");
    const char *limit_text = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
    long long threshold;
    char rest;
    if (where == NULL || sscanf(where, " views > %lld %c", &threshold, &rest) != 1 || order == NULL || strcmp(order, "-publishedAt") != 0)
        return respond_text(c, 400, "{\"status\":400}\n");
    long limit = limit_text ? strtol(limit_text, NULL, 10) : 50;
    if (limit < 1 || limit > 1000) return respond_text(c, 400, "{\"status\":400}\n");
    sqlite3_reset(list_stmt);
    sqlite3_bind_int64(list_stmt, 1, threshold);
    sqlite3_bind_int64(list_stmt, 2, limit + 1);
    buf b = {0};
    puts_(&b, "{\"items\":[");
    long rows = 0;
    sqlite3_int64 last_id = 0, last_date = 0;
    int last_date_null = 1, rc;
    while ((rc = sqlite3_step(list_stmt)) == SQLITE_ROW) {
        if (++rows > limit) break;
        if (rows > 1) puts_(&b, ",");
        put_object(&b, list_stmt);
        last_id = sqlite3_column_int64(list_stmt, 0);
        last_date_null = sqlite3_column_type(list_stmt, 5) == SQLITE_NULL;
        last_date = sqlite3_column_int64(list_stmt, 5);
    }
    sqlite3_reset(list_stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) { free(b.p); return respond_text(c, 500, "{\"status\":500}\n"); }
    puts_(&b, "],\"next\":");
    if (rows > limit) {
        char cursor[160];
        int n = last_date_null
            ? snprintf(cursor, sizeof cursor, "{\"o\":\"-publishedAt\",\"v\":[null],\"id\":%lld}", (long long)last_id)
            : snprintf(cursor, sizeof cursor, "{\"o\":\"-publishedAt\",\"v\":[{\"i\":\"%lld\"}],\"id\":%lld}", (long long)last_date,
                       (long long)last_id);
        puts_(&b, "\"");
        put_base64url(&b, cursor, (size_t)n);
        puts_(&b, "\"");
    } else {
        puts_(&b, "null");
    }
    puts_(&b, "}\n");
    return respond(c, 200, &b);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **req) {
    (void)cls; (void)version; (void)data; (void)size;
    if (*req == NULL) { *req = (void *)1; return MHD_YES; }
    if (strcmp(method, "GET") != 0) return respond_text(c, 405, "{\"status\":405}\n");
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (auth == NULL || strcmp(auth, bearer) != 0) return respond_text(c, 401, "{\"status\":401}\n");
    if (strncmp(url, PREFIX, strlen(PREFIX)) != 0) return respond_text(c, 404, "{\"status\":404}\n");
    if (open_thread_db() != 0) return respond_text(c, 500, "{\"status\":500}\n");
    const char *rest = url + strlen(PREFIX);
    if (*rest == '\0') return list(c);
    if (*rest == '/') return get_by_key(c, rest + 1);
    return respond_text(c, 404, "{\"status\":404}\n");
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: %s PORT THREADS DB_PATH TOKEN\n", argv[0]); return 2; }
    db_path = argv[3];
    snprintf(bearer, sizeof bearer, "Bearer %s", argv[4]);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, (uint16_t)atoi(argv[1]), NULL, NULL,
        handler, NULL, MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)atoi(argv[2]),
        MHD_OPTION_CONNECTION_LIMIT, 1024u, MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
    if (d == NULL) { fprintf(stderr, "cannot start\n"); return 1; }
    sigset_t set; sigemptyset(&set); sigaddset(&set, SIGTERM); sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig; sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
