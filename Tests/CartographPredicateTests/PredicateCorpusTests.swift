// R-Q1 corpus: predicate strings that must parse and round-trip (format -> AST -> format -> same
// AST), precedence cases (each equal to an explicitly parenthesized form), and syntax errors with
// the exact Character offset and what was expected.
import CartographPredicate
import Testing

@Suite struct PredicateCorpusTests {
    /// Valid predicates, one per line of the language's features.
    static let valid: [String] = [
        // comparisons, every spelling
        "a == 1", "a = 1", "a != 1", "a <> 1", "a < 1", "a <= 1", "a =< 1", "a > 1", "a >= 1", "a => 1",
        "a==1", "a!=1", "a<1", "a<=1", "a>1", "a>=1", "  a   ==   1  ", "\ta\n==\n1", "1 == a", "\"x\" < name",
        // string operators and modifiers
        "name CONTAINS \"x\"", "name BEGINSWITH \"x\"", "name ENDSWITH \"x\"", "name LIKE \"x*y?\"", "name MATCHES \"[a-z]+\"",
        "name CONTAINS[c] \"x\"", "name CONTAINS[d] \"x\"", "name CONTAINS[cd] \"x\"", "name CONTAINS[dc] \"x\"", "name ==[c] \"x\"",
        "name !=[cd] \"x\"", "name <[d] \"x\"", "name BEGINSWITH[C] \"x\"", "name LIKE[cd] \"*É*\"", "name MATCHES[c] \"^a.*$\"",
        "name contains \"x\"", "name Contains \"x\"", "name beginswith 'x'", "name endsWith 'x'", "name like 'x'", "name matches 'x'",
        // BETWEEN and IN
        "a BETWEEN {1, 2}", "a between {1,2}", "a BETWEEN {-1.5, 2e3}", "a BETWEEN $range", "name BETWEEN[c] {\"a\", \"m\"}",
        "a IN {1, 2, 3}", "a IN {}", "a IN {nil}", "a IN {1}", "a in {1, \"2\", YES, nil}", "a IN $list", "\"x\" IN tags.label",
        "a IN {{1, 2}, {3}}", "name IN[c] {\"a\", \"B\"}",
        // logical operators and parentheses
        "a == 1 AND b == 2", "a == 1 && b == 2", "a == 1 and b == 2", "a == 1 OR b == 2", "a == 1 || b == 2", "a == 1 or b == 2",
        "NOT a == 1", "! a == 1", "!a == 1", "not a == 1", "NOT NOT a == 1", "!!a == 1", "NOT (a == 1)", "(a == 1)", "((a == 1))",
        "(a == 1) AND (b == 2)", "a == 1 AND b == 2 AND c == 3", "a == 1 OR b == 2 OR c == 3", "a == 1 AND (b == 2 OR c == 3)",
        "(a == 1 OR b == 2) AND c == 3", "NOT (a == 1 AND b == 2)", "NOT (a == 1 OR b == 2)", "(a == 1 AND b == 2) AND c == 3",
        "a == 1 AND (b == 2 AND c == 3)", "(a == 1 OR b == 2) OR c == 3", "a == 1 OR (b == 2 OR c == 3)", "NOT a == 1 AND NOT b == 2",
        "TRUEPREDICATE", "FALSEPREDICATE", "truepredicate", "TruePredicate", "NOT TRUEPREDICATE", "TRUEPREDICATE AND a == 1",
        "(TRUEPREDICATE) OR (FALSEPREDICATE)",
        // literals
        "a == 0", "a == -0", "a == 42", "a == -42", "a == 3.14", "a == -0.5", "a == 1e10", "a == 1E10", "a == 1e-10", "a == 2.5e+3",
        "a == 0x1F", "a == 0XFF", "a == -0x10", "a == 0b1011", "a == 0o17", "a == 0xFFFFFFFFFFFFFFFF", "a == 12345678901234567.891",
        "a == 007", "a == YES", "a == NO", "a == TRUE", "a == FALSE", "a == yes", "a == true", "a == nil", "a == NULL", "a == Nil",
        "a == null", "a == \"\"", "a == ''", "a == \"it's\"", "a == 'say \"hi\"'", "a == \"a\\\"b\"", "a == 'a\\'b'", "a == \"\\\\\"",
        "a == \"line\\nbreak\"", "a == \"\\t\\r\\0\"", "a == \"\\u00e9\"", "a == \"\\uD83D\\uDE00\"", "a == \"é\"", "a == \"e\u{301}\"",
        "a == \"日本語\"", "a == \"🇫🇷\"", "a == \"a;b\"", "a == \"x' OR '1'='1\"", "a == \"--\"", "a == \"/* */\"", "a == {1, 2}",
        "a == {}", "a == {\"x\", {1, {YES}}}",
        // variables and CAST
        "a == $x", "a == $longer_name_1", "$x == a", "a BETWEEN {$lo, $hi}", "a IN {$x, 2}",
        "when > CAST(\"2024-01-01T00:00:00Z\", \"NSDate\")", "when > CAST(0, \"NSDate\")", "when > cast(725760000.5, 'NSDate')",
        "when BETWEEN {CAST(\"2024-01-01T00:00:00Z\", \"NSDate\"), CAST($end, \"NSDate\")}", "when == CAST($x, \"NSNumber\")",
        // key paths, SELF, escapes
        "a.b == 1", "a.b.c.d == 1", "_private == 1", "a_b2 == 1", "SELF == nil", "self == nil", "SELF.name == 1", "SELF.a.b == 1",
        "#in == 1", "#AND.#or == 1", "a.#between == 1", "#SELF == 1", "#name == 1", "ANY #all.b == 1",
        // aggregates and collection operators
        "ANY tags.label == \"x\"", "SOME tags.label == \"x\"", "ALL tags.count > 1", "NONE tags.label BEGINSWITH[cd] \"x\"",
        "any tags.label == \"x\"", "All tags.count > 1", "none tags.x == 1", "NOT ANY tags.label == \"x\"", "ANY a.b.c IN {1, 2}",
        "tags.@count == 0", "tags.@count > friends.@count", "tags.@sum.weight > 10", "tags.@avg.weight < 1.5", "tags.@min.count == 0",
        "tags.@max.count BETWEEN {1, 3}", "a.tags.@count == 1", "tags.@sum.item.qty > 1", "ALL tags.@count > 1",
        // mixtures
        "name == \"x\" AND (qty > 3 OR price <= 12.50) AND NOT ANY tags.label IN {\"a\", \"b\"}",
        "(name BEGINSWITH[c] 'a' || name ENDSWITH[d] 'z') && !(qty BETWEEN {1, 10})",
        "owner.company.title LIKE[cd] \"*inc*\" OR owner == nil",
        "when >= CAST(\"2024-01-01T00:00:00Z\", \"NSDate\") AND when < \"2024-02-01T00:00:00Z\"",
        "tags.@count > 2 AND ALL tags.count >= 1 AND NONE friends.name == nil",
        "uid == \"0F8FAD5B-D9CB-469F-A165-70867728950E\" OR link BEGINSWITH \"https:\"",
        "NOT (NOT (NOT (a == 1)))", "((((a == 1) AND b == 2) OR c == 3) AND d == 4)",
        "a == 1 AND b == 2 OR c == 3 AND d == 4 OR NOT e == 5",
        "price > 0.1 AND price < 1e2 AND qty IN {0x0A, 0b11, 0o7} AND score != -0.25",
    ]

    /// Precedence: the left side parses to the same tree as the explicitly grouped right side.
    static let precedence: [(String, String)] = [
        ("a == 1 OR b == 2 AND c == 3", "a == 1 OR (b == 2 AND c == 3)"),
        ("a == 1 AND b == 2 OR c == 3", "(a == 1 AND b == 2) OR c == 3"),
        ("NOT a == 1 AND b == 2", "(NOT a == 1) AND b == 2"),
        ("NOT a == 1 OR b == 2", "(NOT (a == 1)) OR b == 2"),
        ("! a == 1 && b == 2 || c == 3", "((NOT a == 1) AND b == 2) OR c == 3"),
        ("a == 1 || b == 2 && c == 3 || d == 4", "a == 1 OR (b == 2 AND c == 3) OR d == 4"),
        ("a == 1 AND b == 2 AND c == 3", "a == 1 AND b == 2 AND c == 3"),
        ("NOT NOT a == 1 AND b == 2", "(NOT (NOT a == 1)) AND b == 2"),
        ("NOT (a == 1 OR b == 2) AND c == 3", "(NOT (a == 1 OR b == 2)) AND c == 3"),
        ("a == 1 OR NOT b == 2 AND c == 3", "a == 1 OR ((NOT b == 2) AND c == 3)"),
        ("TRUEPREDICATE OR FALSEPREDICATE AND a == 1", "TRUEPREDICATE OR (FALSEPREDICATE AND a == 1)"),
        ("ANY t.x == 1 AND b == 2", "(ANY t.x == 1) AND b == 2"),
        ("NOT ANY t.x == 1", "NOT (ANY t.x == 1)"),
        ("a BETWEEN {1, 2} AND b IN {3} OR c == 4", "((a BETWEEN {1, 2}) AND (b IN {3})) OR (c == 4)"),
        ("a == 1 and b == 2 or c == 3 and d == 4", "(a == 1 AND b == 2) OR (c == 3 AND d == 4)"),
        ("((a == 1))", "a == 1"),
        ("(a == 1) AND (b == 2)", "a == 1 AND b == 2"),
        ("a == 1 && (b == 2 || c == 3)", "a == 1 AND (b == 2 OR c == 3)"),
        ("!(a == 1) || !(b == 2)", "(NOT a == 1) OR (NOT b == 2)"),
        ("a = 1 or b <> 2", "a == 1 OR b != 2"),
        ("a =< 1 and b => 2", "a <= 1 AND b >= 2"),
        ("SOME t.x == 1", "ANY t.x == 1"),
        ("SELF.a == 1", "a == 1"),
        ("a == TRUE or b == FALSE", "a == YES OR b == NO"),
        ("a == NULL", "a == nil"),
        ("a == 0x10", "a == 16"),
        ("name contains[DC] 'x'", "name CONTAINS[cd] \"x\""),
        ("#IN == 1", "#IN == 1"),
    ]

    /// Syntax errors: input, Character offset, and a fragment of what was expected.
    static let errors: [(String, Int, String)] = [
        ("", 0, "a key path, a literal"), ("   ", 3, "a key path, a literal"), ("a", 1, "a comparison operator"),
        ("a ==", 4, "a key path, a literal"), ("== 1", 0, "a key path, a literal"), ("a == 1 AND", 10, "a key path, a literal"),
        ("a == 1 OR", 9, "a key path"), ("a == 1 b == 2", 7, "AND, OR or the end"), ("(a == 1", 7, "')', AND or OR"),
        ("a == 1)", 6, "AND, OR or the end"), ("((a == 1)", 9, "')', AND or OR"), ("()", 1, "a key path, a literal"),
        ("NOT", 3, "a key path"), ("a === 1", 4, "a key path, a literal"), ("a = = 1", 4, "a key path, a literal"),
        ("a ! 1", 2, "a comparison operator"), ("a & b", 2, "a key path, a literal, an operator"), ("a | b", 2, "an operator"),
        ("a == 'unterminated", 5, "a closing '"), ("a == \"unterminated", 5, "a closing \""), ("a == \"bad \\q escape\"", 10, "an escape"),
        ("a == \"\\u12\"", 6, "four hexadecimal digits"), ("a == \"\\uD800\"", 6, "a low surrogate"), ("a == \"\\uDC00\"", 6, "a Unicode scalar"),
        ("a == 12abc", 7, "the end of the number"), ("a == 1.2.3", 8, "the end of the number"), ("a == 1e", 7, "exponent digits"),
        ("a == 1e+", 8, "exponent digits"), ("a == 0x", 7, "base-16 digits"), ("a == 0xZZ", 7, "base-16 digits"), ("a == 0b2", 7, "base-2 digits"),
        ("a == 0x1FFFFFFFFFFFFFFFF", 5, "fits in 64 bits"), ("a == 1.", 6, "AND, OR or the end"), ("a == -", 5, "a key path, a literal"),
        ("a == --1", 5, "a key path, a literal"), ("a == $", 6, "a name after '$'"), ("a == $1", 6, "a name after '$'"),
        ("# == 1", 1, "a name after '#'"), ("a.@ == 1", 3, "a name after '@'"), ("a.@foo == 1", 2, "@count, @sum"),
        ("@count == 1", 0, "a key path, a literal"), ("a. == 1", 3, "a key path component"), ("a.1 == 1", 2, "a key path component"),
        ("a.. == 1", 2, "a key path component"), ("a.in == 1", 2, "a key path component"), ("in == 1", 0, "a key path, a literal"),
        ("AND == 1", 0, "a key path, a literal"), ("a == AND", 5, "a key path, a literal"), ("a CONTAINS[x] 'b'", 11, "c, d or cd"),
        ("a CONTAINS[] 'b'", 11, "c, d or cd"), ("a CONTAINS[c 'b'", 13, "']'"), ("a CONTAINS[cx] 'b'", 11, "c, d or cd"),
        ("a BETWEEN", 9, "a key path, a literal"), ("a IN {1, 2", 10, "',' or '}'"), ("a IN {1 2}", 8, "',' or '}'"),
        ("a IN {1,}", 8, "a key path, a literal"), ("a IN {,}", 6, "a key path, a literal"), ("a == CAST", 9, "'('"),
        ("a == CAST(1)", 11, "','"), ("a == CAST(1, NSDate)", 13, "a class name string"), ("a == CAST(1, \"NSDate\"", 21, "')'"),
        ("ANY", 3, "a key path, a literal"), ("ANY == 1", 4, "a key path, a literal"), ("ALL ALL a == 1", 4, "a key path, a literal"),
        ("a == 1 AND AND b == 2", 11, "a key path, a literal"), ("a == 1 && || b", 10, "a key path"), ("TRUEPREDICATE == 1", 14, "AND, OR or the end"),
        ("a == TRUEPREDICATE", 5, "a key path, a literal"), ("a == 1 NOT b == 2", 7, "AND, OR or the end"), ("a == [1]", 6, "c, d or cd"),
        ("a == {1} {2}", 9, "AND, OR or the end"), ("a == ;", 5, "a key path, a literal"), ("a == 1; DROP TABLE x", 6, "a key path, a literal"),
        ("a == 1 -- comment", 7, "an operator or a parenthesis"), ("a == 1 /* c */", 7, "a key path, a literal"), ("nаme == 1", 1, "a key path, a literal"),
        ("a == ａ", 5, "a key path, a literal"), ("é == 1", 0, "a key path, a literal"), ("\"é\" == \"x\" ?", 11, "an operator or a parenthesis"),
        ("e\u{301}\u{301} == 1", 0, "an operator or a parenthesis"), ("\"e\u{301}\" == x y", 9, "AND, OR or the end"), ("🇫🇷 == 1", 0, "a key path, a literal"),
        ("a == \"x\" AND 🇫🇷", 13, "a key path, a literal"), ("\r\na", 2, "a comparison operator"), ("SELF.", 5, "a name after 'SELF.'"),
        ("SELF.@count == 1", 5, "a name after 'SELF.'"), ("a == $x.y", 7, "AND, OR or the end"), ("a == 'x' 'y'", 9, "AND, OR or the end"),
        ("a BEGINSWITH", 12, "a key path, a literal"), ("a LIKE[c]", 9, "a key path, a literal"), ("(((", 3, "a key path, a literal"),
    ]

    @Test(arguments: valid)
    func R_Q1_validPredicateRoundTrips(_ format: String) throws {
        let parsed = try Predicate(format: format)
        let canonical = parsed.format
        let reparsed = try Predicate(format: canonical)
        #expect(reparsed == parsed, "«\(format)» -> «\(canonical)»")
        #expect(reparsed.format == canonical)
    }

    @Test(arguments: precedence)
    func R_Q1_precedenceMatchesExplicitGrouping(_ implicit: String, _ explicit: String) throws {
        #expect(try Predicate(format: implicit) == Predicate(format: explicit))
    }

    @Test(arguments: errors)
    func R_Q1_syntaxErrorCarriesOffsetAndExpectation(_ format: String, _ offset: Int, _ expected: String) {
        #expect {
            try Predicate(format: format)
        } throws: { error in
            guard let error = error as? PredicateError else { return false }
            return error.kind == .syntax && error.offset == offset && (error.expected ?? "").contains(expected) && error.message.contains(expected)
        }
        do {
            _ = try Predicate(format: format)
        } catch {
            #expect(error.offset == offset, "«\(format)»: \(error.message)")
        }
    }

    @Test func R_Q1_corpusHasAtLeastThreeHundredPredicates() {
        #expect(Self.valid.count + Self.precedence.count + Self.errors.count >= 300)
    }

    @Test func R_Q1_groupingIsVisibleInTheTree() throws {
        let parsed = try Predicate(format: "a == 1 OR b == 2 AND c == 3")
        guard case .or(let operands) = parsed else {
            Issue.record("expected OR at the top, got \(parsed)")
            return
        }
        #expect(operands.count == 2)
        guard case .and(let inner) = operands[1] else {
            Issue.record("expected AND inside, got \(operands[1])")
            return
        }
        #expect(inner.count == 2)
        #expect(try Predicate(format: "(a == 1 OR b == 2) AND c == 3") != parsed)
    }

    @Test func R_Q1_formatIsCanonical() throws {
        let cases: [(String, String)] = [
            ("a = 1 && !(b <> 'x') || c =< 2", "a == 1 AND NOT b != \"x\" OR c <= 2"),
            ("name contains[dc] 'é'", "name CONTAINS[cd] \"é\""),
            ("some t.x == 0x1F", "ANY t.x == 31"),
            ("#in == nil", "#in == nil"),
            ("a == 'tab\\there \"q\"'", "a == \"tab\\there \\\"q\\\"\""),
            ("(a == 1 OR b == 2) AND c == 3", "(a == 1 OR b == 2) AND c == 3"),
            ("a == 1 AND (b == 2 AND c == 3)", "a == 1 AND (b == 2 AND c == 3)"),
            ("NOT (a == 1 AND b == 2)", "NOT (a == 1 AND b == 2)"),
            ("a == \"\\u0001\"", "a == \"\\u0001\""),
        ]
        for (input, canonical) in cases {
            #expect(try Predicate(format: input).format == canonical)
        }
    }

    @Test func R_Q1_nestingDeeperThanTheLimitIsAnErrorNotACrash() throws {
        let limit = Predicate.maximumNestingDepth
        _ = try Predicate(format: String(repeating: "(", count: limit) + "a == 1" + String(repeating: ")", count: limit))
        for piece in ["(", "NOT ", "!", "{", "CAST(", "a IN {"] {
            let format = String(repeating: piece, count: 100_000) + "a == 1"
            // The parser stops at the limit instead of reading (or recursing through) all 100,000 levels:
            // the error is reported where the limit is crossed (no timing in a unit test).
            let error = #expect(throws: PredicateError.self) { try Predicate(format: format) }
            #expect((error?.offset ?? .max) <= (limit + 2) * piece.count, "\(piece)")
        }
        do {
            _ = try Predicate(format: String(repeating: "(", count: limit + 1) + "a == 1" + String(repeating: ")", count: limit + 1))
            Issue.record("nesting beyond the limit parsed")
        } catch {
            #expect(error.offset == limit)
            #expect(error.message.contains("nested more than \(limit)"))
        }
    }

    @Test func R_Q1_longFlatChainsParseInLinearTime() throws {
        let clauses = 50_000
        let format = (0..<clauses).map { "a == \($0)" }.joined(separator: " AND ")
        let start = ContinuousClock.now
        guard case .and(let operands) = try Predicate(format: format) else {
            Issue.record("expected one AND chain")
            return
        }
        #expect(operands.count == clauses)
        #expect(ContinuousClock.now - start < .seconds(10))
    }
}
