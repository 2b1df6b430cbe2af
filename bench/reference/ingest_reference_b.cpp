// The workload matrix's physical limit for shape (b) (bench/matrix/b: integer ids, a comment_ids array,
// an author {id, name, email}, 0-5 tags {id, name}): parses the same batch files the matrix posts to
// Cartograph with simdjson and upserts the same rows into tables laid out as Cartograph lays out the
// `news2` model (Article, Author, Tag with `_id`/`_entity`/`_stub`, dates as milliseconds, commentIDs as
// JSON text, `author` as a foreign-key column, the join table "Article.tags" (source, destination,
// position) and the same indexes), with prepared statements, one transaction per batch file.
//
// Semantics kept equal to the mapping, as ingest_reference.cpp keeps them for shape (a): objects found by
// their integer id (a per-batch memo for authors and tags); an article whose stored `updatedAt` is not
// older is skipped (modificationAttribute); otherwise updated, its tags rewritten only if they differ;
// an author or tag whose values differ is updated. Not done (Cartograph does it): the change feed, stub
// flags, validation, the response.
//
// Build: g++ -O2 -std=c++17 ingest_reference_b.cpp -lsimdjson -lsqlite3
// Usage: ingest_reference_b DB FILE... ; prints one JSON line with counts, seconds and bytes written.
#include "ingest_common.h"

struct Author { int64_t id = 0; std::string_view name, email; };
struct Tag { int64_t id = 0; std::string_view name; };
struct Article {
  int64_t id = 0, published = 0, updated = 0, views = 0;
  std::string_view title, body;
  std::string comments;  // the comment_ids array as JSON text
  Author author;
  bool hasAuthor = false;
  std::vector<Tag> tags;
};

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s DB FILE...\n", argv[0]); return 2; }
  openStore(argv[1]);
  exec(R"(
    CREATE TABLE IF NOT EXISTS "Article" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "body" TEXT, "commentIDs" TEXT, "id" INTEGER, "publishedAt" INTEGER, "title" TEXT, "updatedAt" INTEGER, "views" INTEGER, "author" INTEGER);
    CREATE TABLE IF NOT EXISTS "Author" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "email" TEXT, "id" INTEGER, "name" TEXT);
    CREATE TABLE IF NOT EXISTS "Tag" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "id" INTEGER, "name" TEXT);
    CREATE TABLE IF NOT EXISTS "Article.tags" ("source" INTEGER NOT NULL, "destination" INTEGER NOT NULL, "position" INTEGER NOT NULL DEFAULT 0);
    CREATE INDEX IF NOT EXISTS "ix:Article:id" ON "Article" ("id");
    CREATE INDEX IF NOT EXISTS "ix:Article:author" ON "Article" ("author");
    CREATE INDEX IF NOT EXISTS "ix:Author:id" ON "Author" ("id");
    CREATE INDEX IF NOT EXISTS "ix:Tag:id" ON "Tag" ("id");
    CREATE INDEX IF NOT EXISTS "ix:Article.tags:source,position" ON "Article.tags" ("source", "position");
    CREATE INDEX IF NOT EXISTS "ix:Article.tags:destination" ON "Article.tags" ("destination");
  )");

  Stmt findArticle(R"(SELECT "_id", "updatedAt" FROM "Article" WHERE "_entity" = 'Article' AND "id" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertArticle(R"(INSERT INTO "Article" ("_entity", "id", "body", "commentIDs", "publishedAt", "title", "updatedAt", "views", "author") VALUES ('Article', ?, ?, ?, ?, ?, ?, ?, ?))");
  Stmt updateArticle(R"(UPDATE "Article" SET "body" = ?, "commentIDs" = ?, "publishedAt" = ?, "title" = ?, "updatedAt" = ?, "views" = ?, "author" = ? WHERE "_id" = ?)");
  Stmt findAuthor(R"(SELECT "_id", "name", "email" FROM "Author" WHERE "_entity" = 'Author' AND "id" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertAuthor(R"(INSERT INTO "Author" ("_entity", "id", "name", "email") VALUES ('Author', ?, ?, ?))");
  Stmt updateAuthor(R"(UPDATE "Author" SET "name" = ?, "email" = ? WHERE "_id" = ?)");
  Stmt findTag(R"(SELECT "_id", "name" FROM "Tag" WHERE "_entity" = 'Tag' AND "id" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertTag(R"(INSERT INTO "Tag" ("_entity", "id", "name") VALUES ('Tag', ?, ?))");
  Stmt updateTag(R"(UPDATE "Tag" SET "name" = ? WHERE "_id" = ?)");
  ArticleTags articleTags;
  Counts n;
  std::unordered_map<int64_t, int64_t> authors, tags;  // per batch: API id -> _id
  auto author = [&](const Author &a) {
    return upsert(authors, a.id, findAuthor, [&](sqlite3_stmt *s) { return sameText(s, 1, a.name) && sameText(s, 2, a.email); },
                  [&] { insertAuthor.integer(1, a.id).text(2, a.name).text(3, a.email).run(); },
                  [&](int64_t id) { updateAuthor.text(1, a.name).text(2, a.email).integer(3, id).run(); }, n);
  };
  auto tag = [&](const Tag &t) {
    return upsert(tags, t.id, findTag, [&](sqlite3_stmt *s) { return sameText(s, 1, t.name); },
                  [&] { insertTag.integer(1, t.id).text(2, t.name).run(); }, [&](int64_t id) { updateTag.text(1, t.name).integer(2, id).run(); }, n);
  };

  ondemand::parser parser;
  auto start = std::chrono::steady_clock::now();
  std::vector<Article> batch;
  std::vector<int64_t> tagIDs;
  for (int f = 2; f < argc; f++) {
    padded_string json;
    if (padded_string::load(argv[f]).get(json)) { fprintf(stderr, "cannot read %s\n", argv[f]); return 1; }
    ondemand::document doc = parser.iterate(json);
    batch.clear();
    for (ondemand::object o : doc["articles"].get_array()) {
      Article art;
      for (auto field : o) {
        std::string_view key = field.unescaped_key();
        if (key == "id") art.id = field.value().get_int64();
        else if (key == "title") art.title = field.value().get_string();
        else if (key == "body") art.body = field.value().get_string();
        else if (key == "published_at") art.published = date(field.value());
        else if (key == "updated_at") art.updated = date(field.value());
        else if (key == "views") art.views = field.value().get_int64();
        else if (key == "comment_ids") {
          art.comments = "[";
          for (int64_t c : field.value().get_array()) {
            if (art.comments.size() > 1) art.comments += ',';
            art.comments += std::to_string(c);
          }
          art.comments += ']';
        } else if (key == "author") {
          for (auto af : field.value().get_object()) {
            std::string_view k = af.unescaped_key();
            if (k == "id") art.author.id = af.value().get_int64();
            else if (k == "name") art.author.name = af.value().get_string();
            else if (k == "email") art.author.email = af.value().get_string();
          }
          art.hasAuthor = true;
        } else if (key == "tags") {
          for (ondemand::object t : field.value().get_array()) {
            Tag tg;
            for (auto tf : t) {
              std::string_view k = tf.unescaped_key();
              if (k == "id") tg.id = tf.value().get_int64(); else if (k == "name") tg.name = tf.value().get_string();
            }
            art.tags.push_back(tg);
          }
        }
      }
      batch.push_back(std::move(art));
    }

    exec("BEGIN IMMEDIATE");
    authors.clear(); tags.clear();
    for (const Article &art : batch) {
      n.articles++;
      bool current;
      int64_t existing = existingArticle(findArticle, art.id, art.updated, current);
      if (current) { n.articlesUnchanged++; n.unchanged++; continue; }
      int64_t authorID = art.hasAuthor ? author(art.author) : 0;
      tagIDs.clear();
      for (const Tag &t : art.tags) tagIDs.push_back(tag(t));
      if (existing) {
        updateArticle.text(1, art.body).text(2, art.comments).integer(3, art.published).text(4, art.title).integer(5, art.updated).integer(6, art.views);
        if (art.hasAuthor) updateArticle.integer(7, authorID); else sqlite3_bind_null(updateArticle.s, 7);
        updateArticle.integer(8, existing).run();
        n.articlesUpdated++; n.updated++;
        articleTags.replace(existing, tagIDs);
      } else {
        insertArticle.integer(1, art.id).text(2, art.body).text(3, art.comments).integer(4, art.published).text(5, art.title).integer(6, art.updated).integer(7, art.views);
        if (art.hasAuthor) insertArticle.integer(8, authorID); else sqlite3_bind_null(insertArticle.s, 8);
        insertArticle.run();
        n.articlesInserted++; n.inserted++;
        articleTags.add(sqlite3_last_insert_rowid(db), tagIDs);
      }
    }
    exec("COMMIT");
  }
  finish(n, start, {"Article", "Author", "Tag", "Article.tags"});
  return 0;
}
