// The ingestion bench's physical limit (issue 5): parses the same batch files the bench posts to
// Cartograph (`{"articles": [...]}`, see bench/ingest/generate.py) with simdjson and upserts the
// same rows into tables laid out as Cartograph lays out the `news` model (Article, Author, Tag with
// `_id`/`_entity`/`_stub`, dates as milliseconds, `author` as a foreign-key column, the join table
// "Article.tags" (source, destination, position), and the same indexes), with prepared statements,
// one transaction per batch file (as Cartograph runs one transaction per POST).
//
// Semantics kept equal to the mapping: objects are found by their string id (per batch, a memo
// stands in for the engine's identity merging); an existing article whose stored `updatedAt` is not
// older than the incoming one is unchanged and skipped (modificationAttribute); otherwise its row
// is updated and its tags rewritten only if they differ. Not done here (Cartograph does it): the
// change feed, stub flags, validation, building the response.
//
// Build: g++ -O2 -std=c++17 ingest_reference.cpp -lsimdjson -lsqlite3
// Usage: ingest_reference DB FILE... ; prints one JSON line with counts, seconds and bytes written.
#include "ingest_common.h"

struct Named { std::string_view id, name; };
struct Article {
  std::string_view id, title, body;
  int64_t published = 0, updated = 0, views = 0;
  Named author;
  bool hasAuthor = false;
  std::vector<Named> tags;
};

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s DB FILE...\n", argv[0]); return 2; }
  openStore(argv[1]);
  exec(R"(
    CREATE TABLE IF NOT EXISTS "Article" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "articleID" TEXT, "body" TEXT, "publishedAt" INTEGER, "title" TEXT, "updatedAt" INTEGER, "views" INTEGER, "author" INTEGER);
    CREATE TABLE IF NOT EXISTS "Author" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "authorID" TEXT, "name" TEXT);
    CREATE TABLE IF NOT EXISTS "Tag" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "tagID" TEXT, "name" TEXT);
    CREATE TABLE IF NOT EXISTS "Article.tags" ("source" INTEGER NOT NULL, "destination" INTEGER NOT NULL, "position" INTEGER NOT NULL DEFAULT 0);
    CREATE INDEX IF NOT EXISTS "ix:Article:articleID" ON "Article" ("articleID");
    CREATE INDEX IF NOT EXISTS "ix:Article:author" ON "Article" ("author");
    CREATE INDEX IF NOT EXISTS "ix:Author:authorID" ON "Author" ("authorID");
    CREATE INDEX IF NOT EXISTS "ix:Tag:tagID" ON "Tag" ("tagID");
    CREATE INDEX IF NOT EXISTS "ix:Article.tags:source,position" ON "Article.tags" ("source", "position");
    CREATE INDEX IF NOT EXISTS "ix:Article.tags:destination" ON "Article.tags" ("destination");
  )");

  Stmt findArticle(R"(SELECT "_id", "updatedAt" FROM "Article" WHERE "_entity" = 'Article' AND "articleID" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertArticle(R"(INSERT INTO "Article" ("_entity", "articleID", "body", "publishedAt", "title", "updatedAt", "views", "author") VALUES ('Article', ?, ?, ?, ?, ?, ?, ?))");
  Stmt updateArticle(R"(UPDATE "Article" SET "body" = ?, "publishedAt" = ?, "title" = ?, "updatedAt" = ?, "views" = ?, "author" = ? WHERE "_id" = ?)");
  Stmt findAuthor(R"(SELECT "_id", "name" FROM "Author" WHERE "_entity" = 'Author' AND "authorID" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertAuthor(R"(INSERT INTO "Author" ("_entity", "authorID", "name") VALUES ('Author', ?, ?))");
  Stmt updateAuthor(R"(UPDATE "Author" SET "name" = ? WHERE "_id" = ?)");
  Stmt findTag(R"(SELECT "_id", "name" FROM "Tag" WHERE "_entity" = 'Tag' AND "tagID" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertTag(R"(INSERT INTO "Tag" ("_entity", "tagID", "name") VALUES ('Tag', ?, ?))");
  Stmt updateTag(R"(UPDATE "Tag" SET "name" = ? WHERE "_id" = ?)");
  ArticleTags articleTags;
  Counts n;

  // An author or tag: found by its id, its name updated when it differs.
  auto upsertNamed = [&n](Stmt &find, Stmt &insert, Stmt &update, const Named &v, std::unordered_map<std::string_view, int64_t> &memo) {
    return upsert(memo, v.id, find, [&](sqlite3_stmt *s) { return sameText(s, 1, v.name); },
                  [&] { insert.text(1, v.id).text(2, v.name).run(); }, [&](int64_t id) { update.text(1, v.name).integer(2, id).run(); }, n);
  };

  ondemand::parser parser;
  auto start = std::chrono::steady_clock::now();
  std::vector<Article> batch;
  for (int f = 2; f < argc; f++) {
    padded_string json;
    if (padded_string::load(argv[f]).get(json)) { fprintf(stderr, "cannot read %s\n", argv[f]); return 1; }
    ondemand::document doc = parser.iterate(json);
    batch.clear();
    for (ondemand::object a : doc["articles"].get_array()) {
      Article art;
      for (auto field : a) {
        std::string_view key = field.unescaped_key();
        if (key == "id") art.id = field.value().get_string();
        else if (key == "title") art.title = field.value().get_string();
        else if (key == "body") art.body = field.value().get_string();
        else if (key == "published_at") art.published = date(field.value());
        else if (key == "updated_at") art.updated = date(field.value());
        else if (key == "views") art.views = field.value().get_int64();
        else if (key == "author") {
          for (auto af : field.value().get_object()) {
            std::string_view k = af.unescaped_key();
            if (k == "id") art.author.id = af.value().get_string(); else if (k == "name") art.author.name = af.value().get_string();
          }
          art.hasAuthor = true;
        } else if (key == "tags") {
          for (ondemand::object t : field.value().get_array()) {
            Named tag;
            for (auto tf : t) {
              std::string_view k = tf.unescaped_key();
              if (k == "id") tag.id = tf.value().get_string(); else if (k == "name") tag.name = tf.value().get_string();
            }
            art.tags.push_back(tag);
          }
        }
      }
      batch.push_back(std::move(art));
    }

    exec("BEGIN IMMEDIATE");
    std::unordered_map<std::string_view, int64_t> authors, tags;
    std::vector<int64_t> tagIDs;
    for (const Article &art : batch) {
      n.articles++;
      bool current;
      int64_t existing = existingArticle(findArticle, art.id, art.updated, current);
      if (current) { n.articlesUnchanged++; n.unchanged++; continue; }  // modificationAttribute: skipped
      int64_t author = art.hasAuthor ? upsertNamed(findAuthor, insertAuthor, updateAuthor, art.author, authors) : 0;
      tagIDs.clear();
      for (const Named &t : art.tags) tagIDs.push_back(upsertNamed(findTag, insertTag, updateTag, t, tags));
      if (existing) {
        updateArticle.text(1, art.body).integer(2, art.published).text(3, art.title).integer(4, art.updated).integer(5, art.views);
        if (art.hasAuthor) updateArticle.integer(6, author); else sqlite3_bind_null(updateArticle.s, 6);
        updateArticle.integer(7, existing).run();
        n.articlesUpdated++; n.updated++;
        articleTags.replace(existing, tagIDs);
      } else {
        insertArticle.text(1, art.id).text(2, art.body).integer(3, art.published).text(4, art.title).integer(5, art.updated).integer(6, art.views);
        if (art.hasAuthor) insertArticle.integer(7, author); else sqlite3_bind_null(insertArticle.s, 7);
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
