// A small model (with inheritance, to-one, to-many and many-to-many relationships), in-memory
// objects for the evaluator, and the same objects in a real SQLite database behind a
// `PredicateSQLSchema`, shared by the predicate tests.
import CartographCore
import CartographPredicate
import CartographTesting
import CartographStore
import Foundation

/// A model given as plain dictionaries.
struct TestModel: PredicateModel {
    struct Entity: PredicateEntity {
        var name: String
        var parentEntityName: String?
        var attributes: [String: AttributeType]
        var relationships: [String: PredicateRelationship]
        func attributeType(named name: String) -> AttributeType? { attributes[name] }
        func relationship(named name: String) -> PredicateRelationship? { relationships[name] }
    }

    var entities: [String: Entity]

    func predicateEntity(named name: String) -> (any PredicateEntity)? { entities[name] }

    /// Item (with the sub-entity SpecialItem) has an owner (Person), tags (Tag, inverse to-one)
    /// and friends (Person, many-to-many); a Person works for a Company.
    static let standard = TestModel(entities: [
        "Item": Entity(name: "Item", parentEntityName: nil, attributes: [
            "name": .string, "code": .string, "qty": .integer32, "price": .decimal, "score": .double,
            "active": .boolean, "when": .date, "uid": .uuid, "link": .uri, "blob": .binary, "info": .transformable,
        ], relationships: [
            "owner": PredicateRelationship(destinationEntityName: "Person", isToMany: false),
            "tags": PredicateRelationship(destinationEntityName: "Tag", isToMany: true),
            "friends": PredicateRelationship(destinationEntityName: "Person", isToMany: true),
        ]),
        "SpecialItem": Entity(name: "SpecialItem", parentEntityName: "Item", attributes: ["badge": .string], relationships: [:]),
        "Person": Entity(name: "Person", parentEntityName: nil, attributes: ["name": .string, "age": .integer64, "height": .double],
                         relationships: ["company": PredicateRelationship(destinationEntityName: "Company", isToMany: false)]),
        "Company": Entity(name: "Company", parentEntityName: nil, attributes: ["title": .string, "rating": .decimal], relationships: [:]),
        "Tag": Entity(name: "Tag", parentEntityName: nil, attributes: ["label": .string, "weight": .decimal, "count": .integer16],
                      relationships: ["item": PredicateRelationship(destinationEntityName: "Item", isToMany: false)]),
    ])
}

/// An object of the test graph.
final class TestObject: PredicateObject {
    let id: Int64
    let entity: String
    var attributes: [String: AttributeValue] = [:]
    var toOne: [String: TestObject] = [:]
    var toMany: [String: [TestObject]] = [:]

    init(id: Int64, entity: String) {
        self.id = id
        self.entity = entity
    }

    func attributeValue(named name: String) -> AttributeValue? { attributes[name] }
    func relatedObject(named name: String) -> TestObject? { toOne[name] }
    func relatedObjects(named name: String) -> [TestObject] { toMany[name] ?? [] }
}

/// The test schema's storage: awkward names on purpose (a keyword column, quotes in names) so
/// that quoting is exercised by every query.
struct TestSchema: PredicateSQLSchema {
    static let tables: [String: (table: String, entities: [String])] = [
        "Item": ("Item", ["Item", "SpecialItem"]), "SpecialItem": ("Item", ["SpecialItem"]),
        "Person": ("Person", ["Person"]), "Company": ("Company", ["Company"]), "Tag": ("Tag\"s", ["Tag"]),
    ]
    static let columns: [String: String] = [
        "code": "co\"de", "when": "when", "badge": "badge",
    ]

    func table(forEntity entity: String) -> PredicateSQLTable? {
        Self.tables[entity].map { PredicateSQLTable(name: $0.table, idColumn: "_id", entityColumn: "_entity", entityNames: $0.entities) }
    }

    func column(forAttribute attribute: String, ofEntity entity: String) -> String? {
        guard TestModel.standard.entities.values.contains(where: { $0.attributes[attribute] != nil }) else { return nil }
        return Self.columns[attribute] ?? attribute
    }

    func storage(forRelationship relationship: String, ofEntity entity: String) -> PredicateSQLRelationship? {
        switch relationship {
        case "owner": .foreignKey(column: "owner_id")
        case "company": .foreignKey(column: "company_id")
        case "item": .foreignKey(column: "item_id")
        case "tags": .destinationForeignKey(column: "item_id")
        case "friends": .joinTable(name: "Item friends", sourceColumn: "source_id", destinationColumn: "destination_id")
        default: nil
        }
    }

    static let createStatements = """
        CREATE TABLE "Item" ("_id" INTEGER PRIMARY KEY, "_entity" TEXT NOT NULL, "name" TEXT, "co""de" TEXT, "qty" INTEGER,
            "price" TEXT, "score" REAL, "active" INTEGER, "when" INTEGER, "uid" TEXT, "link" TEXT, "blob" BLOB, "info" TEXT,
            "badge" TEXT, "owner_id" INTEGER);
        CREATE TABLE "Person" ("_id" INTEGER PRIMARY KEY, "_entity" TEXT NOT NULL, "name" TEXT, "age" INTEGER, "height" REAL,
            "company_id" INTEGER);
        CREATE TABLE "Company" ("_id" INTEGER PRIMARY KEY, "_entity" TEXT NOT NULL, "title" TEXT, "rating" TEXT);
        CREATE TABLE "Tag""s" ("_id" INTEGER PRIMARY KEY, "_entity" TEXT NOT NULL, "label" TEXT, "weight" TEXT, "count" INTEGER,
            "item_id" INTEGER);
        CREATE TABLE "Item friends" ("source_id" INTEGER NOT NULL, "destination_id" INTEGER NOT NULL, "position" INTEGER);
        """
}

extension SQLiteValue {
    /// The storage form of an attribute value (see `PredicateSQLSchema`).
    init(_ value: AttributeValue?) { self = value.map { SQLiteValue($0.storedForm) } ?? .null }
}

/// A random object graph and the same graph in an in-memory SQLite database.
struct TestDataset {
    var items: [TestObject] = []
    var people: [TestObject] = []
    var companies: [TestObject] = []
    var tags: [TestObject] = []
    let database: SQLiteConnection

    static let names: [String?] = [
        "Émile", "emile", "EMILE", "Zoë", "zoe", "Ångström", "angstrom", "café", "cafe\u{301}", "CAFÉ", "Straße", "STRASSE",
        "naïve", "Naive", "abc", "ABC", "a*b", "a?c", "x_y%z", "", "O'Brien", "quote\"d", "日本語", "ﬁle", "İstanbul", "a\\b",
        "Ab", "ab", "b", "Z", nil, nil,
    ]
    static let decimals: [String?] = ["12.50", "12.5", "0.1", "-3.25", "100", "12345678901234567.891", "0", "7", "2.75", nil]
    static let dates: [String?] = ["2024-01-01T00:00:00Z", "2024-03-15T12:30:00.250Z", "2023-12-31T23:59:59.999Z",
                                   "1969-07-20T20:17:40Z", "2024-01-01T01:00:00+01:00", nil]
    static let uuids: [String?] = ["0f8fad5b-d9cb-469f-a165-70867728950e", "7c9e6679-7425-40de-944b-e07fc1f90ae7", nil]
    static let links: [String?] = ["https://example.com/a", "https://example.com/b?q=1", "mailto:x@example.com", nil]

    init(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        database = try SQLiteConnection(path: ":memory:")
        try database.registerPredicateFunctions()
        try database.execute(TestSchema.createStatements)
        var nextID: Int64 = 1
        func make(_ entity: String) -> TestObject {
            defer { nextID += 1 }
            return TestObject(id: nextID, entity: entity)
        }
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        func decimal(_ text: String?) -> AttributeValue? { text.flatMap { NumberText($0)?.decimalValue }.map { .decimal($0) } }

        for _ in 0..<4 {
            let company = make("Company")
            company.attributes["title"] = pick(Self.names).map { .string($0) }
            company.attributes["rating"] = decimal(pick(Self.decimals))
            companies.append(company)
        }
        for _ in 0..<8 {
            let person = make("Person")
            person.attributes["name"] = pick(Self.names).map { .string($0) }
            person.attributes["age"] = random.next() % 6 == 0 ? nil : .integer(Int64(random.next() % 80))
            person.attributes["height"] = random.next() % 6 == 0 ? nil : .double(Double(random.next() % 800) / 4)
            person.toOne["company"] = random.next() % 4 == 0 ? nil : pick(companies)
            people.append(person)
        }
        for index in 0..<30 {
            let item = make(index % 3 == 0 ? "SpecialItem" : "Item")
            item.attributes["name"] = pick(Self.names).map { .string($0) }
            item.attributes["code"] = pick(Self.names).map { .string($0) }
            item.attributes["qty"] = random.next() % 5 == 0 ? nil : .integer(Int64(random.next() % 40) - 5)
            item.attributes["price"] = decimal(pick(Self.decimals))
            item.attributes["score"] = random.next() % 5 == 0 ? nil : .double(Double(Int64(random.next() % 200) - 50) / 4)
            item.attributes["active"] = random.next() % 4 == 0 ? nil : .boolean(random.next() % 2 == 0)
            item.attributes["when"] = pick(Self.dates).flatMap(ISO8601Instant.milliseconds(from:)).map { .date(millisecondsSince1970: $0) }
            item.attributes["uid"] = pick(Self.uuids).map { .uuid($0) }
            item.attributes["link"] = pick(Self.links).map { .uri($0) }
            item.attributes["blob"] = random.next() % 3 == 0 ? nil : .binary((0..<Int(random.next() % 3)).map { _ in UInt8(random.next() % 4) })
            item.attributes["info"] = random.next() % 2 == 0 ? nil : .json(["k": .number(JSONNumber(Int(random.next() % 3)))])
            if item.entity == "SpecialItem" { item.attributes["badge"] = pick(Self.names).map { .string($0) } }
            item.toOne["owner"] = random.next() % 4 == 0 ? nil : pick(people)
            item.toMany["friends"] = (0..<Int(random.next() % 4)).map { _ in pick(people) }
            items.append(item)
        }
        for _ in 0..<45 {
            let tag = make("Tag")
            tag.attributes["label"] = pick(Self.names).map { .string($0) }
            tag.attributes["weight"] = decimal(pick(Self.decimals))
            tag.attributes["count"] = random.next() % 5 == 0 ? nil : .integer(Int64(random.next() % 6))
            // About a third of the tags belong to no item.
            if random.next() % 3 != 0 {
                let item = pick(items)
                tag.toOne["item"] = item
                item.toMany["tags", default: []].append(tag)
            }
            tags.append(tag)
        }
        try store()
    }

    private func store() throws {
        for company in companies {
            try database.run(#"INSERT INTO "Company" VALUES (?, ?, ?, ?)"#,
                             [.integer(company.id), .text(company.entity), SQLiteValue(company.attributes["title"]), SQLiteValue(company.attributes["rating"])])
        }
        for person in people {
            try database.run(#"INSERT INTO "Person" VALUES (?, ?, ?, ?, ?, ?)"#, [
                .integer(person.id), .text(person.entity), SQLiteValue(person.attributes["name"]), SQLiteValue(person.attributes["age"]),
                SQLiteValue(person.attributes["height"]), person.toOne["company"].map { .integer($0.id) } ?? .null,
            ])
        }
        for item in items {
            let columns = ["name", "code", "qty", "price", "score", "active", "when", "uid", "link", "blob", "info", "badge"]
            try database.run(#"INSERT INTO "Item" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"#,
                             [.integer(item.id), .text(item.entity)] + columns.map { SQLiteValue(item.attributes[$0]) }
                                 + [item.toOne["owner"].map { .integer($0.id) } ?? .null])
            for (position, friend) in (item.toMany["friends"] ?? []).enumerated() {
                try database.run(#"INSERT INTO "Item friends" VALUES (?, ?, ?)"#, [.integer(item.id), .integer(friend.id), .integer(Int64(position))])
            }
        }
        for tag in tags {
            try database.run(#"INSERT INTO "Tag""s" VALUES (?, ?, ?, ?, ?, ?)"#, [
                .integer(tag.id), .text(tag.entity), SQLiteValue(tag.attributes["label"]), SQLiteValue(tag.attributes["weight"]),
                SQLiteValue(tag.attributes["count"]), tag.toOne["item"].map { .integer($0.id) } ?? .null,
            ])
        }
    }

    /// The objects of `entity` (and its sub-entities) the evaluator selects.
    func evaluate(_ predicate: CheckedPredicate) -> Set<Int64> {
        let candidates: [TestObject] = switch predicate.entityName {
        case "Item": items
        case "SpecialItem": items.filter { $0.entity == "SpecialItem" }
        case "Person": people
        case "Company": companies
        default: tags
        }
        return Set(candidates.filter { predicate.evaluate($0) }.map(\.id))
    }

    /// The objects the compiled SQL selects (compiled as a query that reads every match would be, with
    /// `everyMatch`: `@count` grouped once rather than per row).
    func query(_ predicate: CheckedPredicate, everyMatch: Bool = false) throws -> Set<Int64> {
        let compiled = try predicate.sql(schema: TestSchema(), everyMatch: everyMatch)
        let sql = "SELECT \(compiled.alias).\"_id\" FROM \(compiled.fromClause) WHERE \(compiled.whereClause)"
        let rows = try database.prepare(sql).rows(compiled.bindings.map(SQLiteValue.init))
        return Set(rows.compactMap { $0.first?.integerValue })
    }
}
