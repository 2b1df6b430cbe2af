// The `search=` language (R-Q6, docs/queries.md "Search"): words, "phrases", prefix*, OR, NOT (or a
// leading -), AND (the same as a space) and parentheses, translated to an FTS5 query in which every
// word and phrase is a quoted string. FTS5's own syntax is not passed through: its column filters,
// NEAR and `^` are not offered, its errors carry no offset, and characters such as `-` or `:` inside a
// word (`e-mail`, `10:30`) are syntax errors there; quoted, they are only where the tokenizer splits.
// A malformed search is a `PredicateError` at its character offset, as a bad `where` is.

/// A checked search, and the FTS5 query it means.
public struct SearchQuery: Sendable, Equatable {
    /// The FTS5 query expression, bound as a parameter of `MATCH`.
    public let fts5: String

    /// Parentheses nest at most this deep.
    public static let maximumDepth = 32

    /// Parses `text`; throws a syntax `PredicateError` at the offset (in Characters) of the problem.
    public init(parsing text: String) throws(PredicateError) {
        var parser = SearchParser(Array(text))
        fts5 = try parser.query()
    }
}

private struct SearchParser {
    enum Token: Equatable {
        case word(String, prefix: Bool)
        case phrase(String, prefix: Bool)
        case or, and, not, open, close
    }

    let characters: [Character]
    var position = 0
    /// The current token and its offset, nil at the end.
    var token: (kind: Token, offset: Int)?
    var depth = 0

    init(_ characters: [Character]) { self.characters = characters }

    static func error(_ offset: Int, _ message: String, expected: String? = nil) -> PredicateError {
        PredicateError(kind: .syntax, offset: offset, message: message, expected: expected)
    }

    mutating func query() throws(PredicateError) -> String {
        try advance()
        guard token != nil else { throw Self.error(0, "the search is empty: give a word to look for", expected: "a word") }
        let result = try orExpression()
        if let (kind, offset) = token {
            throw Self.error(offset, kind == .close ? "')' closes no '('" : "unexpected \(Self.describe(kind))")
        }
        return result
    }

    /// Terms joined by OR.
    mutating func orExpression() throws(PredicateError) -> String {
        var terms = [try andExpression()]
        while let (kind, offset) = token, kind == .or {
            try advance()
            guard let next = token, next.kind != .or, next.kind != .close, next.kind != .and else {
                throw Self.error(offset, "OR needs a term on each side", expected: "a term after OR")
            }
            terms.append(try andExpression())
        }
        return terms.count == 1 ? terms[0] : "(" + terms.joined(separator: " OR ") + ")"
    }

    /// Terms side by side (or joined by AND), some excluded by NOT: what the others find, less what any
    /// excluded term finds.
    mutating func andExpression() throws(PredicateError) -> String {
        var found: [String] = [], excluded: [(term: String, offset: Int)] = []
        while let (kind, offset) = token, kind != .or, kind != .close {
            switch kind {
            case .and:
                try advance()
                guard found.count + excluded.count > 0, let next = token, next.kind != .or, next.kind != .close, next.kind != .and else {
                    throw Self.error(offset, "AND needs a term on each side", expected: "a term")
                }
            case .not:
                try advance()
                guard let next = token, next.kind != .or, next.kind != .close, next.kind != .and, next.kind != .not else {
                    throw Self.error(offset, "NOT needs a term after it", expected: "a term after NOT")
                }
                excluded.append((try primary(), offset))
            case .word, .phrase, .open:
                found.append(try primary())
            case .or, .close:
                break
            }
        }
        guard !found.isEmpty else {
            guard let first = excluded.first else {
                let offset = token?.offset ?? characters.count
                throw Self.error(offset, "expected a word, a \"phrase\" or '(' here", expected: "a term")
            }
            throw Self.error(first.offset, "NOT only excludes from what other terms find: give a term to look for beside it")
        }
        let kept = found.count == 1 ? found[0] : "(" + found.joined(separator: " AND ") + ")"
        guard !excluded.isEmpty else { return kept }
        let dropped = excluded.count == 1 ? excluded[0].term : "(" + excluded.map(\.term).joined(separator: " OR ") + ")"
        return "(\(kept) NOT \(dropped))"
    }

    /// A word, a phrase, or a parenthesised search.
    mutating func primary() throws(PredicateError) -> String {
        guard let (kind, offset) = token else { throw Self.error(characters.count, "expected a term", expected: "a term") }
        switch kind {
        case .word(let text, let prefix), .phrase(let text, let prefix):
            try advance()
            // A quoted FTS5 string is a phrase of whatever tokens the tokenizer finds in it; `"` doubled (a
            // word holds none), NUL (a phrase may) made a space.
            return "\"" + text.replacing("\"", with: "\"\"").replacing("\0", with: " ") + "\"" + (prefix ? " *" : "")
        case .open:
            depth += 1
            guard depth <= SearchQuery.maximumDepth else {
                throw Self.error(offset, "parentheses nest more than \(SearchQuery.maximumDepth) deep")
            }
            try advance()
            guard token != nil, token?.kind != .close else { throw Self.error(offset, "'(' holds no term", expected: "a term") }
            let inner = try orExpression()
            guard token?.kind == .close else { throw Self.error(offset, "this '(' is not closed", expected: "')'") }
            depth -= 1
            try advance()
            return inner
        case .or, .and, .not, .close:
            throw Self.error(offset, "unexpected \(Self.describe(kind))", expected: "a term")
        }
    }

    static func describe(_ token: Token) -> String {
        switch token {
        case .word(let text, _): "word '\(text)'"
        case .phrase: "phrase"
        case .or: "OR"
        case .and: "AND"
        case .not: "NOT"
        case .open: "'('"
        case .close: "')'"
        }
    }

    /// NUL counts as a space: FTS5 reads its query as a C string, and would stop at it.
    static func isSpace(_ character: Character) -> Bool { character.isWhitespace || character == "\0" }
    /// Characters that end a word.
    static func endsWord(_ character: Character) -> Bool { isSpace(character) || "\"()*".contains(character) }

    /// Reads the next token into `token`.
    mutating func advance() throws(PredicateError) {
        while position < characters.count, Self.isSpace(characters[position]) { position += 1 }
        guard position < characters.count else {
            token = nil
            return
        }
        let start = position
        let character = characters[position]
        switch character {
        case "(":
            position += 1
            token = (.open, start)
        case ")":
            position += 1
            token = (.close, start)
        case "*":
            throw Self.error(start, "'*' ends a word to find every word it begins (spider*); it cannot stand alone")
        case "\"":
            guard let end = characters[(start + 1)...].firstIndex(of: "\"") else {
                throw Self.error(start, "this phrase's '\"' is not closed", expected: "'\"'")
            }
            let text = String(characters[(start + 1)..<end])
            guard text.contains(where: { !Self.isSpace($0) }) else { throw Self.error(start, "the phrase is empty", expected: "a word") }
            position = end + 1
            token = (.phrase(text, prefix: takePrefixStar()), start)
        case "-" where position + 1 < characters.count && !Self.isSpace(characters[position + 1]) && !"*)".contains(characters[position + 1]):
            // `-word` excludes, as `NOT word` does; a `-` inside or after a word is part of it.
            position += 1
            token = (.not, start)
        default:
            while position < characters.count, !Self.endsWord(characters[position]) { position += 1 }
            let text = String(characters[start..<position])
            switch text {
            case "OR": token = (.or, start)
            case "AND": token = (.and, start)
            case "NOT": token = (.not, start)
            default: token = (.word(text, prefix: takePrefixStar()), start)
            }
        }
    }

    /// Whether a `*` follows at once (a prefix search), consuming it.
    mutating func takePrefixStar() -> Bool {
        guard position < characters.count, characters[position] == "*" else { return false }
        position += 1
        return true
    }
}
