// Splits a predicate string into tokens. Works on Unicode scalars (one pass, no backtracking);
// positions are scalar offsets until `CharacterOffsets` turns them into Character offsets.

/// The reserved words of the language, matched case-insensitively as Foundation does.
enum Keyword: String, CaseIterable {
    case and = "AND", or = "OR", not = "NOT"
    case `in` = "IN", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case like = "LIKE", matches = "MATCHES", between = "BETWEEN"
    case any = "ANY", some = "SOME", all = "ALL", none = "NONE"
    case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case yes = "YES", no = "NO", `true` = "TRUE", `false` = "FALSE", `nil` = "NIL", null = "NULL"
    case `self` = "SELF", cast = "CAST"

    private static let byUppercasedName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The keyword spelled `word` in any case; nil for ordinary names.
    init?(word: String) {
        // Keywords are ASCII letters only, at most 14 long: skip the uppercasing for anything else.
        guard word.utf8.count <= 14, let keyword = Keyword.byUppercasedName[word.uppercased()] else { return nil }
        self = keyword
    }
}

/// One token and where it starts (a scalar offset).
struct Token {
    enum Kind: Equatable {
        case identifier(String)
        /// `#name`: a name that would otherwise be a keyword.
        case escapedIdentifier(String)
        case keyword(Keyword)
        /// `@count`, `@sum`, …
        case collectionOperator(String)
        case number(String)
        case string(String)
        case variable(String)
        /// `==`, `!=`, `<`, … in their canonical spelling.
        case comparison(ComparisonOperator)
        /// `&&`, `||`, `!`: the same as AND, OR, NOT.
        case logical(Keyword)
        case punctuation(Unicode.Scalar)
        case end
    }

    let kind: Kind
    let offset: Int

    /// The token as a person would name it in "found …".
    var description: String {
        switch kind {
        case .identifier(let name): "'\(name)'"
        case .escapedIdentifier(let name): "'#\(name)'"
        case .keyword(let keyword): keyword.rawValue
        case .collectionOperator(let name): "'\(name)'"
        case .number(let text): "number \(text)"
        case .string: "a string"
        case .variable(let name): "'$\(name)'"
        case .comparison(let op): "'\(op.rawValue)'"
        case .logical(let keyword): keyword == .and ? "'&&'" : keyword == .or ? "'||'" : "'!'"
        case .punctuation(let scalar): "'\(scalar)'"
        case .end: "the end of the predicate"
        }
    }
}

/// Turns scalars into tokens; every error carries the scalar offset where it happened.
struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private var position = 0

    init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

    /// Every token of the input, ending with `.end`.
    static func tokenize(_ scalars: [Unicode.Scalar]) throws(LexerError) -> [Token] {
        var lexer = PredicateLexer(scalars)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        position + ahead < scalars.count ? scalars[position + ahead] : nil
    }

    private static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_"
    }

    private static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || isDigit(scalar)
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }

    private mutating func readName() -> String {
        let start = position
        while let scalar = peek(), Self.isIdentifierPart(scalar) { position += 1 }
        var name = String.UnicodeScalarView()
        name.append(contentsOf: scalars[start..<position])
        return String(name)
    }

    mutating func next() throws(LexerError) -> Token {
        while let scalar = peek(), scalar.properties.isWhitespace { position += 1 }
        let start = position
        guard let scalar = peek() else { return Token(kind: .end, offset: start) }
        func token(_ kind: Token.Kind, length: Int) -> Token {
            position += length
            return Token(kind: kind, offset: start)
        }
        switch scalar {
        case _ where Self.isIdentifierStart(scalar):
            let name = readName()
            if let keyword = Keyword(word: name) { return Token(kind: .keyword(keyword), offset: start) }
            return Token(kind: .identifier(name), offset: start)
        case "#", "@", "$":
            position += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw LexerError(offset: position, expected: "a name after '\(scalar)'")
            }
            let name = readName()
            switch scalar {
            case "#": return Token(kind: .escapedIdentifier(name), offset: start)
            case "@": return Token(kind: .collectionOperator("@" + name), offset: start)
            default: return Token(kind: .variable(name), offset: start)
            }
        case "0"..."9":
            return Token(kind: .number(try readNumber()), offset: start)
        case "-" where peek(1).map(Self.isDigit) == true:
            return Token(kind: .number(try readNumber()), offset: start)
        case "\"", "'":
            return Token(kind: .string(try readString(quote: scalar)), offset: start)
        case "=":
            if peek(1) == "=" { return token(.comparison(.equalTo), length: 2) }
            if peek(1) == "<" { return token(.comparison(.lessThanOrEqualTo), length: 2) }
            if peek(1) == ">" { return token(.comparison(.greaterThanOrEqualTo), length: 2) }
            return token(.comparison(.equalTo), length: 1)
        case "!":
            if peek(1) == "=" { return token(.comparison(.notEqualTo), length: 2) }
            return token(.logical(.not), length: 1)
        case "<":
            if peek(1) == "=" { return token(.comparison(.lessThanOrEqualTo), length: 2) }
            if peek(1) == ">" { return token(.comparison(.notEqualTo), length: 2) }
            return token(.comparison(.lessThan), length: 1)
        case ">":
            if peek(1) == "=" { return token(.comparison(.greaterThanOrEqualTo), length: 2) }
            return token(.comparison(.greaterThan), length: 1)
        case "&" where peek(1) == "&":
            return token(.logical(.and), length: 2)
        case "|" where peek(1) == "|":
            return token(.logical(.or), length: 2)
        case "(", ")", "{", "}", "[", "]", ",", ".":
            return token(.punctuation(scalar), length: 1)
        default:
            throw LexerError(offset: start, expected: "a key path, a literal, an operator or a parenthesis",
                             found: "'\(scalar.escaped(asASCII: true))'")
        }
    }

    /// Reads a number and returns it in decimal notation (`0x1F` -> `31`).
    private mutating func readNumber() throws(LexerError) -> String {
        let start = position
        var negative = false
        if peek() == "-" {
            negative = true
            position += 1
        }
        if peek() == "0", let prefix = peek(1), let radix = Self.radix(prefix) {
            position += 2
            var value: UInt64 = 0
            var digitCount = 0
            while let scalar = peek(), let digit = Self.hexValue(scalar), digit < radix {
                let (shifted, overflow1) = value.multipliedReportingOverflow(by: UInt64(radix))
                let (next, overflow2) = shifted.addingReportingOverflow(UInt64(digit))
                guard !overflow1, !overflow2 else { throw LexerError(offset: start, expected: "a number that fits in 64 bits") }
                value = next
                digitCount += 1
                position += 1
            }
            guard digitCount > 0 else { throw LexerError(offset: position, expected: "base-\(radix) digits") }
            try expectNumberEnd()
            return (negative && value != 0 ? "-" : "") + String(value)
        }
        while let scalar = peek(), Self.isDigit(scalar) { position += 1 }
        if peek() == ".", let after = peek(1), Self.isDigit(after) {
            position += 1
            while let scalar = peek(), Self.isDigit(scalar) { position += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            position += 1
            if let sign = peek(), sign == "+" || sign == "-" { position += 1 }
            guard let digit = peek(), Self.isDigit(digit) else { throw LexerError(offset: position, expected: "exponent digits") }
            while let scalar = peek(), Self.isDigit(scalar) { position += 1 }
        }
        try expectNumberEnd()
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars[start..<position])
        return String(text)
    }

    /// The radix of a `0x`, `0o` or `0b` prefix letter.
    private static func radix(_ letter: Unicode.Scalar) -> Int? {
        switch letter {
        case "x", "X": 16
        case "o", "O": 8
        case "b", "B": 2
        default: nil
        }
    }

    /// The value of an ASCII hexadecimal digit (not its fullwidth forms, which Character accepts).
    private static func hexValue(_ scalar: Unicode.Scalar) -> Int? {
        switch scalar {
        case "0"..."9": Int(scalar.value - 48)
        case "a"..."f": Int(scalar.value - 87)
        case "A"..."F": Int(scalar.value - 55)
        default: nil
        }
    }

    private func expectNumberEnd() throws(LexerError) {
        if let scalar = peek(), Self.isIdentifierPart(scalar) || scalar == "." && peek(1).map(Self.isDigit) == true {
            throw LexerError(offset: position, expected: "the end of the number", found: "'\(scalar)'")
        }
    }

    /// Reads a quoted string with backslash escapes (`\n \r \t \0 \\ \' \" \uXXXX`).
    private mutating func readString(quote: Unicode.Scalar) throws(LexerError) -> String {
        let start = position
        position += 1
        var value = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else {
                throw LexerError(offset: start, expected: "a closing \(quote) for the string that starts here", found: "the end of the predicate")
            }
            position += 1
            if scalar == quote { return String(value) }
            guard scalar == "\\" else {
                value.append(scalar)
                continue
            }
            guard let escaped = peek() else { continue }
            let escapeOffset = position - 1
            position += 1
            switch escaped {
            case "n": value.append("\n")
            case "r": value.append("\r")
            case "t": value.append("\t")
            case "0": value.append("\0")
            case "\\", "'", "\"": value.append(escaped)
            case "u":
                var code = try readHex4(escapeOffset: escapeOffset)
                // A high surrogate must be followed by an escaped low surrogate (JSON-style pairs).
                if (0xD800...0xDBFF).contains(code) {
                    guard peek() == "\\", peek(1) == "u" else {
                        throw LexerError(offset: escapeOffset, expected: "a low surrogate \\uDC00…\\uDFFF after a high surrogate")
                    }
                    position += 2
                    let low = try readHex4(escapeOffset: escapeOffset)
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw LexerError(offset: escapeOffset, expected: "a low surrogate \\uDC00…\\uDFFF after a high surrogate")
                    }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(code) else {
                    throw LexerError(offset: escapeOffset, expected: "a Unicode scalar value (not a lone surrogate)")
                }
                value.append(unicode)
            default:
                throw LexerError(offset: escapeOffset, expected: "an escape (\\n \\r \\t \\0 \\\\ \\' \\\" or \\uXXXX)",
                                 found: "'\\\(escaped.escaped(asASCII: true))'")
            }
        }
    }

    private mutating func readHex4(escapeOffset: Int) throws(LexerError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let scalar = peek(), let digit = Self.hexValue(scalar) else {
                throw LexerError(offset: escapeOffset, expected: "four hexadecimal digits after \\u")
            }
            code = code * 16 + UInt32(digit)
            position += 1
        }
        return code
    }
}

/// A lexical error at a scalar offset (the parser converts it to a `PredicateError`).
struct LexerError: Error {
    let offset: Int
    let expected: String
    var found: String? = nil
}
