// The workload matrix's physical limit for shape (c) (bench/matrix/c: GitHub-like issue pages, 100 issues per
// file, a nested user, 0-6 labels and 0-3 assignees many-to-many, a nullable milestone, nullable dates):
// parses the same batch files the matrix posts to Cartograph with simdjson and upserts the same rows into
// tables laid out as Cartograph lays out the `github` model (Issue, User, Label, Milestone with
// `_id`/`_entity`/`_stub`, dates as milliseconds, booleans as 0/1, `user` and `milestone` as foreign-key
// columns, the join tables "Issue.labels" and "Issue.assignees" (source, destination, position), and the same
// identity, foreign-key and join-table indexes), with prepared statements, one transaction per batch file.
//
// Semantics kept equal to the mapping: objects found by their identity (an issue, label or milestone by its
// integer id, a user by its login; a per-batch memo for the related ones); an issue whose stored `updatedAt`
// is not older is skipped (modificationAttribute, R-P7); otherwise its row is updated, and its labels and
// assignees are written as differences (only the rows that go deleted, only the new ones inserted,
// JoinRows in ingest_common.h); a user, label or milestone whose values differ is updated. Not done
// (Cartograph does it): the change feed, the scan projection index, stub flags, validation, the response.
//
// Build: g++ -O2 -std=c++17 ingest_reference_c.cpp -lsimdjson -lsqlite3
// Usage: ingest_reference_c DB FILE... ; prints one JSON line with counts, seconds and bytes written.
#include "ingest_common.h"

struct User {
  std::string_view login, avatar, type;
  int64_t id = 0;
  bool siteAdmin = false;
};
struct Label {
  int64_t id = 0;
  std::string_view name, color, description;
  bool isDefault = false, hasDescription = false;
};
struct Milestone {
  int64_t id = 0, number = 0, due = 0;
  std::string_view title, state;
  bool hasDue = false;
};
struct Issue {
  int64_t id = 0, number = 0, comments = 0, created = 0, updated = 0, closed = 0;
  std::string_view title, body, state, association;
  bool locked = false, hasBody = false, hasClosed = false, hasUser = false, hasMilestone = false;
  User user;
  Milestone milestone;
  std::vector<User> assignees;
  std::vector<Label> labels;
};

static User readUser(ondemand::object o) {
  User u;
  for (auto f : o) {
    std::string_view k = f.unescaped_key();
    if (k == "login") u.login = f.value().get_string();
    else if (k == "id") u.id = f.value().get_int64();
    else if (k == "avatar_url") u.avatar = f.value().get_string();
    else if (k == "type") u.type = f.value().get_string();
    else if (k == "site_admin") u.siteAdmin = f.value().get_bool();
  }
  return u;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s DB FILE...\n", argv[0]); return 2; }
  openStore(argv[1]);
  exec(R"(
    CREATE TABLE IF NOT EXISTS "Issue" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "id" INTEGER, "number" INTEGER, "title" TEXT, "body" TEXT, "state" TEXT, "locked" INTEGER, "comments" INTEGER, "authorAssociation" TEXT,
      "createdAt" INTEGER, "updatedAt" INTEGER, "closedAt" INTEGER, "user" INTEGER, "milestone" INTEGER);
    CREATE TABLE IF NOT EXISTS "User" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "login" TEXT, "id" INTEGER, "avatarURL" TEXT, "type" TEXT, "siteAdmin" INTEGER);
    CREATE TABLE IF NOT EXISTS "Label" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "id" INTEGER, "name" TEXT, "color" TEXT, "isDefault" INTEGER, "labelDescription" TEXT);
    CREATE TABLE IF NOT EXISTS "Milestone" ("_id" INTEGER PRIMARY KEY AUTOINCREMENT, "_entity" TEXT NOT NULL, "_stub" INTEGER NOT NULL DEFAULT 0,
      "id" INTEGER, "number" INTEGER, "title" TEXT, "state" TEXT, "dueOn" INTEGER);
    CREATE TABLE IF NOT EXISTS "Issue.assignees" ("source" INTEGER NOT NULL, "destination" INTEGER NOT NULL, "position" INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE IF NOT EXISTS "Issue.labels" ("source" INTEGER NOT NULL, "destination" INTEGER NOT NULL, "position" INTEGER NOT NULL DEFAULT 0);
    CREATE INDEX IF NOT EXISTS "ix:Issue:id" ON "Issue" ("id");
    CREATE INDEX IF NOT EXISTS "ix:Issue:user" ON "Issue" ("user");
    CREATE INDEX IF NOT EXISTS "ix:Issue:milestone" ON "Issue" ("milestone");
    CREATE INDEX IF NOT EXISTS "ix:User:login" ON "User" ("login");
    CREATE INDEX IF NOT EXISTS "ix:Label:id" ON "Label" ("id");
    CREATE INDEX IF NOT EXISTS "ix:Milestone:id" ON "Milestone" ("id");
    CREATE INDEX IF NOT EXISTS "ix:Issue.assignees:source,position" ON "Issue.assignees" ("source", "position");
    CREATE INDEX IF NOT EXISTS "ix:Issue.assignees:destination" ON "Issue.assignees" ("destination");
    CREATE INDEX IF NOT EXISTS "ix:Issue.labels:source,position" ON "Issue.labels" ("source", "position");
    CREATE INDEX IF NOT EXISTS "ix:Issue.labels:destination" ON "Issue.labels" ("destination");
  )");

  Stmt findIssue(R"(SELECT "_id", "updatedAt" FROM "Issue" WHERE "_entity" = 'Issue' AND "id" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertIssue(R"(INSERT INTO "Issue" ("_entity", "id", "number", "title", "body", "state", "locked", "comments", "authorAssociation",
      "createdAt", "updatedAt", "closedAt", "user", "milestone") VALUES ('Issue', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))");
  Stmt updateIssue(R"(UPDATE "Issue" SET "number" = ?, "title" = ?, "body" = ?, "state" = ?, "locked" = ?, "comments" = ?,
      "authorAssociation" = ?, "createdAt" = ?, "updatedAt" = ?, "closedAt" = ?, "user" = ?, "milestone" = ? WHERE "_id" = ?)");
  Stmt findUser(R"(SELECT "_id", "id", "avatarURL", "type", "siteAdmin" FROM "User" WHERE "_entity" = 'User' AND "login" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertUser(R"(INSERT INTO "User" ("_entity", "login", "id", "avatarURL", "type", "siteAdmin") VALUES ('User', ?, ?, ?, ?, ?))");
  Stmt updateUser(R"(UPDATE "User" SET "id" = ?, "avatarURL" = ?, "type" = ?, "siteAdmin" = ? WHERE "_id" = ?)");
  Stmt findLabel(R"(SELECT "_id", "name", "color", "isDefault", "labelDescription" FROM "Label" WHERE "_entity" = 'Label' AND "id" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertLabel(R"(INSERT INTO "Label" ("_entity", "id", "name", "color", "isDefault", "labelDescription") VALUES ('Label', ?, ?, ?, ?, ?))");
  Stmt updateLabel(R"(UPDATE "Label" SET "name" = ?, "color" = ?, "isDefault" = ?, "labelDescription" = ? WHERE "_id" = ?)");
  Stmt findMilestone(R"(SELECT "_id", "number", "title", "state", "dueOn" FROM "Milestone" WHERE "_entity" = 'Milestone' AND "id" = ? ORDER BY "_id" LIMIT 1)");
  Stmt insertMilestone(R"(INSERT INTO "Milestone" ("_entity", "id", "number", "title", "state", "dueOn") VALUES ('Milestone', ?, ?, ?, ?, ?))");
  Stmt updateMilestone(R"(UPDATE "Milestone" SET "number" = ?, "title" = ?, "state" = ?, "dueOn" = ? WHERE "_id" = ?)");
  JoinRows issueLabels("Issue.labels"), issueAssignees("Issue.assignees");
  Counts n;
  std::unordered_map<std::string_view, int64_t> users;      // per batch: login -> _id
  std::unordered_map<int64_t, int64_t> labels, milestones;  // per batch: API id -> _id
  auto user = [&](const User &u) {
    return upsert(users, u.login, findUser,
                  [&](sqlite3_stmt *s) { return sameInt(s, 1, u.id) && sameText(s, 2, u.avatar) && sameText(s, 3, u.type) && sameInt(s, 4, u.siteAdmin); },
                  [&] { insertUser.text(1, u.login).integer(2, u.id).text(3, u.avatar).text(4, u.type).integer(5, u.siteAdmin).run(); },
                  [&](int64_t id) { updateUser.integer(1, u.id).text(2, u.avatar).text(3, u.type).integer(4, u.siteAdmin).integer(5, id).run(); }, n);
  };
  auto label = [&](const Label &l) {
    return upsert(labels, l.id, findLabel,
                  [&](sqlite3_stmt *s) {
                    return sameText(s, 1, l.name) && sameText(s, 2, l.color) && sameInt(s, 3, l.isDefault) &&
                           sameMaybeText(s, 4, l.hasDescription, l.description);
                  },
                  [&] { insertLabel.integer(1, l.id).text(2, l.name).text(3, l.color).integer(4, l.isDefault).maybe(5, l.hasDescription, l.description).run(); },
                  [&](int64_t id) { updateLabel.text(1, l.name).text(2, l.color).integer(3, l.isDefault).maybe(4, l.hasDescription, l.description).integer(5, id).run(); }, n);
  };
  auto milestone = [&](const Milestone &m) {
    return upsert(milestones, m.id, findMilestone,
                  [&](sqlite3_stmt *s) {
                    return sameInt(s, 1, m.number) && sameText(s, 2, m.title) && sameText(s, 3, m.state) && sameMaybeInt(s, 4, m.hasDue, m.due);
                  },
                  [&] { insertMilestone.integer(1, m.id).integer(2, m.number).text(3, m.title).text(4, m.state).maybe(5, m.hasDue, m.due).run(); },
                  [&](int64_t id) { updateMilestone.integer(1, m.number).text(2, m.title).text(3, m.state).maybe(4, m.hasDue, m.due).integer(5, id).run(); }, n);
  };

  ondemand::parser parser;
  auto start = std::chrono::steady_clock::now();
  std::vector<Issue> batch;
  std::vector<int64_t> labelIDs, assigneeIDs;
  for (int f = 2; f < argc; f++) {
    padded_string json;
    if (padded_string::load(argv[f]).get(json)) { fprintf(stderr, "cannot read %s\n", argv[f]); return 1; }
    ondemand::document doc = parser.iterate(json);
    batch.clear();
    for (ondemand::object o : doc["issues"].get_array()) {
      Issue is;
      for (auto field : o) {
        std::string_view key = field.unescaped_key();
        ondemand::value v = field.value();
        if (key == "id") is.id = v.get_int64();
        else if (key == "number") is.number = v.get_int64();
        else if (key == "title") is.title = v.get_string();
        else if (key == "body") { if (!v.is_null()) { is.body = v.get_string(); is.hasBody = true; } }
        else if (key == "state") is.state = v.get_string();
        else if (key == "locked") is.locked = v.get_bool();
        else if (key == "comments") is.comments = v.get_int64();
        else if (key == "author_association") is.association = v.get_string();
        else if (key == "created_at") is.created = date(v);
        else if (key == "updated_at") is.updated = date(v);
        else if (key == "closed_at") { if (!v.is_null()) { is.closed = date(v); is.hasClosed = true; } }
        else if (key == "user") { if (!v.is_null()) { is.user = readUser(v.get_object()); is.hasUser = true; } }
        else if (key == "assignees") { for (ondemand::object a : v.get_array()) is.assignees.push_back(readUser(a)); }
        else if (key == "labels") {
          for (ondemand::object lo : v.get_array()) {
            Label l;
            for (auto lf : lo) {
              std::string_view k = lf.unescaped_key();
              ondemand::value lv = lf.value();
              if (k == "id") l.id = lv.get_int64();
              else if (k == "name") l.name = lv.get_string();
              else if (k == "color") l.color = lv.get_string();
              else if (k == "default") l.isDefault = lv.get_bool();
              else if (k == "description") { if (!lv.is_null()) { l.description = lv.get_string(); l.hasDescription = true; } }
            }
            is.labels.push_back(l);
          }
        } else if (key == "milestone") {
          if (!v.is_null()) {
            Milestone &m = is.milestone;
            for (auto mf : v.get_object()) {
              std::string_view k = mf.unescaped_key();
              ondemand::value mv = mf.value();
              if (k == "id") m.id = mv.get_int64();
              else if (k == "number") m.number = mv.get_int64();
              else if (k == "title") m.title = mv.get_string();
              else if (k == "state") m.state = mv.get_string();
              else if (k == "due_on") { if (!mv.is_null()) { m.due = date(mv); m.hasDue = true; } }
            }
            is.hasMilestone = true;
          }
        }
      }
      batch.push_back(std::move(is));
    }

    exec("BEGIN IMMEDIATE");
    users.clear(); labels.clear(); milestones.clear();
    for (const Issue &is : batch) {
      n.articles++;
      bool current;
      int64_t existing = existingArticle(findIssue, is.id, is.updated, current);
      if (current) { n.articlesUnchanged++; n.unchanged++; continue; }  // modificationAttribute: skipped
      int64_t userID = is.hasUser ? user(is.user) : 0;
      int64_t milestoneID = is.hasMilestone ? milestone(is.milestone) : 0;
      labelIDs.clear();
      for (const Label &l : is.labels) labelIDs.push_back(label(l));
      assigneeIDs.clear();
      for (const User &u : is.assignees) assigneeIDs.push_back(user(u));
      if (existing) {
        updateIssue.integer(1, is.number).text(2, is.title).maybe(3, is.hasBody, is.body).text(4, is.state).integer(5, is.locked)
            .integer(6, is.comments).text(7, is.association).integer(8, is.created).integer(9, is.updated).maybe(10, is.hasClosed, is.closed)
            .maybe(11, is.hasUser, userID).maybe(12, is.hasMilestone, milestoneID).integer(13, existing).run();
        n.articlesUpdated++; n.updated++;
        issueLabels.write(existing, labelIDs);
        issueAssignees.write(existing, assigneeIDs);
      } else {
        insertIssue.integer(1, is.id).integer(2, is.number).text(3, is.title).maybe(4, is.hasBody, is.body).text(5, is.state).integer(6, is.locked)
            .integer(7, is.comments).text(8, is.association).integer(9, is.created).integer(10, is.updated).maybe(11, is.hasClosed, is.closed)
            .maybe(12, is.hasUser, userID).maybe(13, is.hasMilestone, milestoneID).run();
        n.articlesInserted++; n.inserted++;
        int64_t id = sqlite3_last_insert_rowid(db);
        issueLabels.add(id, labelIDs);
        issueAssignees.add(id, assigneeIDs);
      }
    }
    exec("COMMIT");
  }
  finish(n, start, {"Issue", "User", "Label", "Milestone", "Issue.labels", "Issue.assignees"}, "issues");
  return 0;
}
