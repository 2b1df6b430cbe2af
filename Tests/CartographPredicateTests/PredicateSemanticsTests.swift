// Checking against a model (key paths, inheritance, R-P3 coercion of literals, semantic errors
// with offsets) and Foundation's evaluation semantics (nil, [c]/[d], ALL over nothing, MATCHES).
import CartographCore
import CartographPredicate
import Testing

@Suite struct PredicateSemanticsTests {
    let model = TestModel.standard

    func item(_ attributes: [String: AttributeValue] = [:], entity: String = "Item") -> TestObject {
        let object = TestObject(id: 1, entity: entity)
        object.attributes = attributes
        return object
    }

    func matches(_ format: String, _ object: TestObject, entity: String = "Item", variables: [String: JSONValue] = [:]) throws -> Bool {
        try CheckedPredicate(format: format, entity: entity, model: model, variables: variables).evaluate(object)
    }

    func semanticError(_ format: String, entity: String = "Item", variables: [String: JSONValue] = [:]) -> PredicateError? {
        do {
            _ = try CheckedPredicate(format: format, entity: entity, model: model, variables: variables)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Semantic errors

    @Test(arguments: [
        ("nmae == 1", 0, "nmae"),
        ("qty > 1 AND owner.nmae == \"x\"", 12, "owner.nmae"),
        ("tags.label == \"x\"", 0, "tags.label"),
        ("NOT (friends.age > 3)", 5, "friends.age"),
        ("qty == \"12x\"", 7, nil),
        ("name.length == 1", 0, "name.length"),
        ("ANY qty == 1", 4, "qty"),
        ("ANY owner.name == \"x\"", 4, "owner.name"),
        ("tags.@sum.label > 1", 0, "tags.@sum.label"),
        ("qty.@count == 1", 0, "qty.@count"),
        ("friends.tags.@count == 1", 0, nil),
        ("name CONTAINS 5", 14, nil),
        ("qty CONTAINS \"1\"", 0, "qty"),
        ("name == qty", 8, "qty"),
        ("owner == \"x\"", 9, nil),
        ("info == \"x\"", 0, "info"),
        ("owner < nil", 0, nil),
        ("uid == \"not-a-uuid\"", 7, nil),
        ("when > \"yesterday\"", 7, nil),
        ("qty BETWEEN {1}", 12, nil),
        ("qty IN 3", 7, nil),
        ("qty == $missing", 7, nil),
        ("badge == \"x\"", 0, "badge"),
        ("name MATCHES \"(unclosed\"", 13, nil),
        ("when > CAST(\"x\", \"NSDate\")", 12, nil),
        ("when > CAST(1, \"NSString\")", 7, nil),
        ("price == 1234567890123456789012345678901234567890", 9, nil),
        ("qty IN {name}", 8, "name"),
    ] as [(String, Int, String?)])
    func R_Q2_semanticErrorNamesKeyPathAndOffset(_ format: String, _ offset: Int, _ keyPath: String?) {
        let error = semanticError(format)
        #expect(error?.kind == .semantic, "«\(format)» should be rejected")
        #expect(error?.offset == offset, "«\(format)»: \(error?.message ?? "accepted")")
        if let keyPath { #expect(error?.keyPath == keyPath, "«\(format)»: \(error?.message ?? "")") }
    }

    @Test func R_Q1_unknownEntityIsASemanticError() {
        #expect(semanticError("TRUEPREDICATE", entity: "Nope")?.message.contains("Nope") == true)
    }

    @Test func R_M3_subEntitySeesInheritedAndOwnProperties() throws {
        let special = item(["name": .string("x"), "badge": .string("gold")], entity: "SpecialItem")
        #expect(try matches("name == \"x\" AND badge == \"gold\"", special, entity: "SpecialItem"))
        #expect(semanticError("badge == \"gold\"", entity: "Item")?.keyPath == "badge")
    }

    // MARK: Coercion of literals (R-P3, R-I2)

    @Test func R_I2_stringLiteralFindsIntegerAndDate() throws {
        let object = item(["qty": .integer(42), "when": .date(millisecondsSince1970: 1_704_067_200_000)])
        #expect(try matches("qty == \"42\"", object))
        #expect(try matches("qty == 42.0", object))
        #expect(try matches("when == \"2024-01-01T00:00:00Z\"", object))
        #expect(try matches("when == \"2024-01-01T01:00:00.000+01:00\"", object))
        #expect(try matches("when == 1704067200", object))
        #expect(try matches("when == $when", object, variables: ["when": "2024-01-01T00:00:00Z"]))
        #expect(try matches("when == CAST(\"2024-01-01T00:00:00Z\", \"NSDate\")", object))
        // Foundation's CAST of a number counts from the reference date 2001-01-01.
        #expect(try matches("when == CAST(725760000, \"NSDate\")", object))
    }

    @Test func R_P3_literalsCoerceToTheAttributeType() throws {
        let object = item(["active": .boolean(true), "price": .decimal(NumberText("12345678901234567.891")!.decimalValue!),
                           "uid": .uuid("0f8fad5b-d9cb-469f-a165-70867728950e"), "score": .double(2.5)])
        #expect(try matches("active == \"yes\"", object))
        #expect(try matches("active == 1", object))
        #expect(try matches("active == 5", object))
        #expect(try matches("price == 12345678901234567.891", object))
        #expect(try !matches("price == 12345678901234567.89", object))
        #expect(try matches("price == \"12345678901234567.891\"", object))
        #expect(try matches("uid == \"0F8FAD5B-D9CB-469F-A165-70867728950E\"", object))
        #expect(try matches("score == \"2.5\" AND score == 2.50 AND score > 2", object))
    }

    // MARK: Foundation semantics

    @Test func R_Q1_nilSemanticsFollowFoundation() throws {
        let empty = item()
        #expect(try matches("name == nil", empty))
        #expect(try matches("name != \"x\"", empty))
        #expect(try !matches("name == \"x\"", empty))
        #expect(try !matches("qty < 5", empty))
        #expect(try !matches("qty >= 5", empty))
        #expect(try matches("NOT qty < 5", empty))
        #expect(try !matches("qty BETWEEN {nil, 5}", item(["qty": .integer(1)])))
        #expect(try matches("qty IN {1, nil}", empty))
        #expect(try !matches("name CONTAINS \"\"", item(["name": .string("abc")])))
        #expect(try !matches("name CONTAINS nil", item(["name": .string("abc")])))
        #expect(try matches("owner == nil AND owner.name == nil", empty))
    }

    @Test func R_Q1_betweenIsInclusive() throws {
        #expect(try matches("qty BETWEEN {1, 3}", item(["qty": .integer(1)])))
        #expect(try matches("qty BETWEEN {1, 3}", item(["qty": .integer(3)])))
        #expect(try !matches("qty BETWEEN {1, 3}", item(["qty": .integer(4)])))
        #expect(try !matches("qty BETWEEN {3, 1}", item(["qty": .integer(2)])))
    }

    @Test func R_Q1_caseAndDiacriticFolding() throws {
        let object = item(["name": .string("Crème Brûlée")])
        #expect(try matches("name ==[c] \"crème brûlée\"", object))
        #expect(try !matches("name ==[c] \"creme brulee\"", object))
        #expect(try matches("name ==[d] \"Creme Brulee\"", object))
        #expect(try matches("name ==[cd] \"CREME BRULEE\"", object))
        #expect(try matches("name BEGINSWITH[cd] \"CREME\" AND name ENDSWITH[c] \"BRÛLÉE\"", object))
        #expect(try matches("name CONTAINS[cd] \"e b\"", object))
        #expect(try !matches("name CONTAINS \"e b\"", object))
        #expect(try matches("name LIKE[cd] \"creme*\"", object))
        #expect(try matches("name ==[c] \"cre\\u0300me brûlée\"", object))
        #expect(try matches("name ==[c] \"STRASSE\"", item(["name": .string("Straße")])))
        // Without modifiers strings compare by code point: precomposed and decomposed differ.
        #expect(try !matches("name == \"Cre\\u0300me Brûlée\"", object))
    }

    @Test func R_Q1_likeWildcards() throws {
        let object = item(["name": .string("a*b?c")])
        #expect(try matches("name LIKE \"a*\"", object))
        #expect(try matches("name LIKE \"?\\\\*b\\\\?c\"", object))
        #expect(try matches("name LIKE \"a*?c\"", object))
        #expect(try !matches("name LIKE \"a?c*\"", object))
        #expect(try !matches("name LIKE \"A*\"", object))
        #expect(try matches("name LIKE[c] \"A*\"", object))
    }

    @Test func R_Q1_matchesIsAWholeStringMatch() throws {
        let object = item(["name": .string("abc")])
        #expect(try matches("name MATCHES \"a.c\"", object))
        #expect(try !matches("name MATCHES \"b\"", object))
        #expect(try !matches("name MATCHES \"ab\"", object))
        #expect(try matches("name MATCHES \"a|abc\"", object))
        #expect(try matches("name MATCHES[c] \"ABC\"", object))
        #expect(try matches("name MATCHES \".{3}\"", item(["name": .string("e\u{301}x")])))
    }

    @Test func R_Q1_numbersCompareAcrossIntegerDecimalAndDouble() throws {
        let object = item(["qty": .integer(3), "price": .decimal(NumberText("3")!.decimalValue!), "score": .double(3)])
        #expect(try matches("qty == price AND price == score AND score == qty", object))
        #expect(try matches("qty < 3.5 AND qty > 2.5 AND price < 3.0000000000000000001", object))
        #expect(try matches("qty == 3.0 AND score == \"3\"", object))
    }

    @Test func R_Q1_aggregateOperators() throws {
        let object = item()
        let tags = [(5, "x"), (1, "y"), (3, "x")].enumerated().map { index, pair in
            let tag = TestObject(id: Int64(10 + index), entity: "Tag")
            tag.attributes = ["count": .integer(Int64(pair.0)), "label": .string(pair.1)]
            return tag
        }
        object.toMany["tags"] = tags
        #expect(try matches("tags.@count == 3 AND tags.@sum.count == 9 AND tags.@max.count == 5 AND tags.@min.count == 1", object))
        #expect(try matches("tags.@avg.count == 3", object))
        #expect(try matches("ANY tags.label == \"y\" AND NONE tags.label == \"z\" AND ALL tags.count >= 1", object))
        #expect(try !matches("ALL tags.label == \"x\"", object))
        #expect(try matches("\"y\" IN tags.label AND tags.label CONTAINS \"x\"", object))
        // ALL over an empty to-many is true, ANY false, NONE true.
        let bare = item()
        #expect(try matches("ALL tags.label == \"x\" AND NOT ANY tags.label == \"x\" AND NONE tags.label == \"x\"", bare))
        #expect(try matches("tags.@count == 0 AND tags.@sum.count == 0 AND tags.@max.count == nil", bare))
    }

    @Test func R_Q1_keywordsAreCaseInsensitive() throws {
        let object = item(["qty": .integer(2), "name": .string("Ab")])
        #expect(try matches("qty between {1, 3} and not name beginswith[C] 'b' or FalsePredicate", object))
    }
}
