// The `search=` language (R-Q6, docs/queries.md#search): what each form becomes in FTS5, every word
// and phrase quoted, and a malformed search's offset.
import Testing
import CartographPredicate

struct SearchQueryTests {
    @Test(arguments: [
        ("fox", #""fox""#),
        ("red fox", #"("red" AND "fox")"#),
        ("red AND fox", #"("red" AND "fox")"#),
        ("spider*", #""spider" *"#),
        (#""red fox" den"#, #"("red fox" AND "den")"#),
        ("fox OR dog cat", #"("fox" OR ("dog" AND "cat"))"#),
        ("fox NOT dog -cat", #"("fox" NOT ("dog" OR "cat"))"#),
        ("(fox OR dog) den", #"(("fox" OR "dog") AND "den")"#),
        ("e-mail NEAR(x) col:y ^z", #"("e-mail" AND "NEAR" AND "x" AND "col:y" AND "^z")"#),
        ("or not and", #"("or" AND "not" AND "and")"#),
        ("fox-", #""fox-""#),
        ("fox\0den \"a\0b\"", #"("fox" AND "den" AND "a b")"#),
    ])
    func R_Q6_aSearchBecomesAnFTS5QueryOfQuotedTerms(search: String, fts5: String) throws {
        #expect(try SearchQuery(parsing: search).fts5 == fts5)
    }

    @Test(arguments: [
        ("", 0), ("   ", 0), ("\"fox", 0), ("fox \"\"", 4), ("fox OR", 4), ("OR fox", 0), ("fox OR OR dog", 4), ("AND fox", 0),
        ("(fox", 0), ("fox)", 3), ("()", 0), ("NOT fox", 0), ("-fox", 0), ("fox NOT", 4), ("*", 0), ("fox *", 4),
        (String(repeating: "(", count: 40) + "x" + String(repeating: ")", count: 40), 32),
    ])
    func R_Q6_aMalformedSearchFailsAtItsOffset(search: String, offset: Int) {
        #expect(throws: PredicateError.self) { try SearchQuery(parsing: search) }
        do {
            _ = try SearchQuery(parsing: search)
        } catch {
            #expect(error.offset == offset, "\(search): \(error.message)")
            #expect(error.kind == .syntax)
        }
    }
}
