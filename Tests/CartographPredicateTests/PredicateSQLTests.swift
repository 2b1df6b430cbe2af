// R-Q2: compiled SQL is parameterized (no literal and no predicate name in its text), quotes every
// identifier from the schema, and injection attempts either fail to parse/check or match literally.
import CartographCore
import CartographPredicate
import CartographStore
import Testing

@Suite struct PredicateSQLTests {
    let model = TestModel.standard

    func compile(_ format: String, variables: [String: JSONValue] = [:]) throws -> SQLPredicate {
        try CheckedPredicate(format: format, entity: "Item", model: model, variables: variables).sql(schema: TestSchema())
    }

    @Test func R_Q2_valuesAreBoundNeverSpliced() throws {
        let compiled = try compile("name == \"Robert'); DROP TABLE Item;--\" AND qty > 41 AND price == 12.50 AND when > \"2024-01-01T00:00:00Z\"")
        #expect(!compiled.whereClause.contains("Robert"))
        #expect(!compiled.whereClause.contains("41"))
        #expect(!compiled.whereClause.contains("12.5"))
        #expect(compiled.bindings.contains(.text("Robert'); DROP TABLE Item;--")))
        #expect(compiled.bindings.contains(.integer(41)))
        #expect(compiled.bindings.contains(.text("12.5")))
        #expect(compiled.bindings.contains(.integer(1_704_067_200_000)))
        #expect(compiled.fromClause == "\"Item\" AS \"t0\"")
    }

    @Test func R_Q2_identifiersComeFromTheSchemaQuoted() throws {
        let compiled = try compile("code == \"x\" AND when > 0 AND ANY tags.label == \"y\"")
        #expect(compiled.whereClause.contains("\"t0\".\"co\"\"de\""))
        #expect(compiled.whereClause.contains("\"t0\".\"when\""))
        #expect(compiled.whereClause.contains("\"Tag\"\"s\" AS"))
        #expect(compiled.whereClause.contains("\"t0\".\"_entity\" IN (?"))
    }

    @Test func R_Q2_parametersAreNumberedFromTheRequestedIndex() throws {
        let checked = try CheckedPredicate(format: "qty == 1", entity: "Item", model: model)
        let compiled = try checked.sql(schema: TestSchema(), firstParameter: 5)
        #expect(compiled.whereClause.contains("?5"))
        #expect(compiled.whereClause.contains("?7"))
        #expect(!compiled.whereClause.contains("?4"))
        #expect(compiled.bindings == [.integer(1), .text("Item"), .text("SpecialItem")])
    }

    /// Inputs that try to break out of a string or a name: each is a syntax error, a semantic
    /// error, or a literal match; the database is unchanged either way.
    static let injections: [String] = [
        "name == \"x\" OR 1=1 --\"", "name == 'x'' OR ''1''=''1'", "name == \"x\"; DROP TABLE \"Item\"; --",
        "name == \"x\\\" OR \\\"1\\\"=\\\"1\"", "name == \"x'); DELETE FROM \\\"Item\\\"; --\"", "name == \"/* */ OR 1=1\"",
        "\"name\" == \"x\"", "`name` == 1", "name; == 1", "name == 1; DROP TABLE Item", "name\" == 1", "na\"me == 1",
        "nаme == \"x\"", "name == \"x\u{FF07} OR 1=1\"", "name == \"\u{0}\"", "name == \"x\" OR name == \"\u{2028}--\"",
        "#DROP == 1", "owner.name; == 1", "tags.@count) OR (1 == 1", "name IN {\"a\", \"b\") OR (\"c\"}",
        "name MATCHES \"x' OR '1'='1\"", "name LIKE \"%' OR 1=1 --\"", "name == $evil", "qty IN $evil",
    ]

    @Test(arguments: injections)
    func R_Q2_injectionAttemptsNeverChangeTheSQL(_ format: String) throws {
        let dataset = try TestDataset(seed: 11)
        let evil: JSONValue = "x\"); DROP TABLE \"Item\"; --"
        guard let checked = try? CheckedPredicate(format: format, entity: "Item", model: model, variables: ["evil": evil]) else {
            return  // rejected: nothing reached SQL
        }
        let compiled = try checked.sql(schema: TestSchema())
        for forbidden in ["DROP", "DELETE", "--", "1=1", "'"] {
            #expect(!compiled.whereClause.contains(forbidden), "«\(format)» -> \(compiled.whereClause)")
        }
        #expect(try dataset.query(checked) == dataset.evaluate(checked))
        #expect(try dataset.database.rows(#"SELECT COUNT(*) FROM "Item""#) == [[.integer(Int64(dataset.items.count))]])
    }

    @Test func R_Q2_injectedTextMatchesLiterally() throws {
        let dataset = try TestDataset(seed: 3)
        let evil = "x' OR '1'='1"
        dataset.items[0].attributes["name"] = .string(evil)
        try dataset.database.run(#"UPDATE "Item" SET "name" = ? WHERE "_id" = ?"#, [.text(evil), .integer(dataset.items[0].id)])
        let checked = try CheckedPredicate(format: "name == $n", entity: "Item", model: model, variables: ["n": .string(evil)])
        #expect(try dataset.query(checked) == [dataset.items[0].id])
        #expect(dataset.evaluate(checked) == [dataset.items[0].id])
    }

    @Test func R_Q2_schemaIdentifiersThatSQLiteCannotHoldAreRejected() throws {
        struct NulSchema: PredicateSQLSchema {
            func table(forEntity entity: String) -> PredicateSQLTable? {
                PredicateSQLTable(name: "It\0em", idColumn: "_id", entityColumn: nil, entityNames: [entity])
            }
            func column(forAttribute attribute: String, ofEntity entity: String) -> String? { attribute }
            func storage(forRelationship relationship: String, ofEntity entity: String) -> PredicateSQLRelationship? { nil }
        }
        let checked = try CheckedPredicate(format: "qty == 1", entity: "Item", model: model)
        #expect(throws: PredicateError.self) { try checked.sql(schema: NulSchema()) }
    }
}
