// A recursive-descent parser for R-Q1's grammar. Precedence, loosest first: OR, AND, NOT, then
// comparisons. Nesting (parentheses, NOT, `{…}`, CAST) is limited so no input can exhaust the stack.
//
//   predicate   := and (('OR' | '||') and)*
//   and         := not (('AND' | '&&') not)*
//   not         := ('NOT' | '!') not | primary
//   primary     := '(' predicate ')' | TRUEPREDICATE | FALSEPREDICATE | comparison
//   comparison  := ('ANY' | 'SOME' | 'ALL' | 'NONE')? expression operator options? expression
//   options     := '[' ('c' | 'd' | 'cd' | 'dc') ']'
//   expression  := literal | '$'name | '{' (expression (',' expression)*)? '}'
//                | 'CAST' '(' expression ',' string ')' | 'SELF' ('.' keypath)? | keypath
//   keypath     := name ('.' (name | '@count' | '@sum' | '@avg' | '@min' | '@max'))*

extension Predicate {
    /// The deepest nesting of parentheses, NOT, aggregates and CAST the parser accepts.
    public static let maximumNestingDepth = 256

    /// Parses a predicate in the NSPredicate format language (R-Q1).
    ///
    /// - Throws: a `.syntax` `PredicateError` with the Character offset and what was expected.
    public init(format: String) throws(PredicateError) {
        let scalars = Array(format.unicodeScalars)
        let offsets = CharacterOffsets(format, scalarCount: scalars.count)
        let tokens: [Token]
        do {
            tokens = try PredicateLexer.tokenize(scalars)
        } catch {
            throw PredicateError.syntax(at: offsets[error.offset], expected: error.expected,
                                        found: error.found ?? Self.describeScalar(at: error.offset, in: scalars))
        }
        var parser = PredicateParser(tokens: tokens, offsets: offsets)
        self = try parser.parseWhole()
    }

    private static func describeScalar(at offset: Int, in scalars: [Unicode.Scalar]) -> String {
        offset < scalars.count ? "'\(scalars[offset].escaped(asASCII: true))'" : "the end of the predicate"
    }
}

/// Maps scalar offsets to Character offsets (identity for plain ASCII without CR).
struct CharacterOffsets {
    private let characterOffsetOfScalar: [Int]?

    init(_ text: String, scalarCount: Int) {
        if text.utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) {
            characterOffsetOfScalar = nil
            return
        }
        var map: [Int] = []
        map.reserveCapacity(scalarCount + 1)
        var characterOffset = 0
        for character in text {
            for _ in character.unicodeScalars { map.append(characterOffset) }
            characterOffset += 1
        }
        map.append(characterOffset)
        characterOffsetOfScalar = map
    }

    subscript(scalarOffset: Int) -> Int {
        guard let map = characterOffsetOfScalar else { return scalarOffset }
        return map[min(scalarOffset, map.count - 1)]
    }
}

private struct PredicateParser {
    let tokens: [Token]
    let offsets: CharacterOffsets
    var position = 0
    var depth = 0

    init(tokens: [Token], offsets: CharacterOffsets) {
        self.tokens = tokens
        self.offsets = offsets
    }

    var current: Token { tokens[position] }

    mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    func error(expected: String) -> PredicateError {
        .syntax(at: offsets[current.offset], expected: expected, found: current.description)
    }

    mutating func enterNesting() throws(PredicateError) {
        depth += 1
        guard depth <= Predicate.maximumNestingDepth else {
            throw PredicateError(kind: .syntax, offset: offsets[current.offset],
                                 message: "the predicate is nested more than \(Predicate.maximumNestingDepth) levels deep",
                                 expected: "at most \(Predicate.maximumNestingDepth) levels of nesting")
        }
    }

    mutating func expectPunctuation(_ scalar: Unicode.Scalar) throws(PredicateError) {
        guard current.kind == .punctuation(scalar) else { throw error(expected: "'\(scalar)'") }
        advance()
    }

    mutating func parseWhole() throws(PredicateError) -> Predicate {
        let predicate = try parseOr()
        guard current.kind == .end else { throw error(expected: "AND, OR or the end of the predicate") }
        return predicate
    }

    mutating func parseOr() throws(PredicateError) -> Predicate {
        var operands = [try parseAnd()]
        while current.kind == .keyword(.or) || current.kind == .logical(.or) {
            advance()
            operands.append(try parseAnd())
        }
        return operands.count == 1 ? operands[0] : .or(operands)
    }

    mutating func parseAnd() throws(PredicateError) -> Predicate {
        var operands = [try parseNot()]
        while current.kind == .keyword(.and) || current.kind == .logical(.and) {
            advance()
            operands.append(try parseNot())
        }
        return operands.count == 1 ? operands[0] : .and(operands)
    }

    mutating func parseNot() throws(PredicateError) -> Predicate {
        guard current.kind == .keyword(.not) || current.kind == .logical(.not) else { return try parsePrimary() }
        try enterNesting()
        advance()
        defer { depth -= 1 }
        return .not(try parseNot())
    }

    mutating func parsePrimary() throws(PredicateError) -> Predicate {
        switch current.kind {
        case .punctuation("("):
            try enterNesting()
            advance()
            defer { depth -= 1 }
            let inner = try parseOr()
            guard current.kind == .punctuation(")") else { throw error(expected: "')', AND or OR") }
            advance()
            return inner
        case .keyword(.truePredicate):
            advance()
            return .constant(true)
        case .keyword(.falsePredicate):
            advance()
            return .constant(false)
        default:
            return .comparison(try parseComparison())
        }
    }

    mutating func parseComparison() throws(PredicateError) -> Comparison {
        var quantifier: Quantifier?
        switch current.kind {
        case .keyword(.any), .keyword(.some): quantifier = .any
        case .keyword(.all): quantifier = .all
        case .keyword(.none): quantifier = Quantifier.none
        default: break
        }
        if quantifier != nil { advance() }
        let lhs = try parseExpression()
        let comparisonOperator: ComparisonOperator
        switch current.kind {
        case .comparison(let op): comparisonOperator = op
        case .keyword(.between): comparisonOperator = .between
        case .keyword(.in): comparisonOperator = .in
        case .keyword(.contains): comparisonOperator = .contains
        case .keyword(.beginsWith): comparisonOperator = .beginsWith
        case .keyword(.endsWith): comparisonOperator = .endsWith
        case .keyword(.like): comparisonOperator = .like
        case .keyword(.matches): comparisonOperator = .matches
        default:
            throw error(expected: "a comparison operator (==, !=, <, <=, >, >=, BETWEEN, IN, CONTAINS, BEGINSWITH, ENDSWITH, LIKE, MATCHES)")
        }
        advance()
        let options = try parseOptions()
        let rhs = try parseExpression()
        return Comparison(quantifier: quantifier, lhs, comparisonOperator, options: options, rhs)
    }

    mutating func parseOptions() throws(PredicateError) -> ComparisonOptions {
        guard current.kind == .punctuation("[") else { return [] }
        advance()
        guard case .identifier(let letters) = current.kind, !letters.isEmpty else { throw error(expected: "c, d or cd") }
        var options: ComparisonOptions = []
        for letter in letters {
            switch letter {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            default: throw error(expected: "c, d or cd")
            }
        }
        advance()
        try expectPunctuation("]")
        return options
    }

    mutating func parseExpression() throws(PredicateError) -> Expression {
        let offset = offsets[current.offset]
        switch current.kind {
        case .number(let text):
            advance()
            return Expression(.literal(.number(text)), offset: offset)
        case .string(let text):
            advance()
            return Expression(.literal(.string(text)), offset: offset)
        case .keyword(.yes), .keyword(.true):
            advance()
            return Expression(.literal(.boolean(true)), offset: offset)
        case .keyword(.no), .keyword(.false):
            advance()
            return Expression(.literal(.boolean(false)), offset: offset)
        case .keyword(.nil), .keyword(.null):
            advance()
            return Expression(.literal(.null), offset: offset)
        case .variable(let name):
            advance()
            return Expression(.variable(name), offset: offset)
        case .punctuation("{"):
            try enterNesting()
            advance()
            defer { depth -= 1 }
            var elements: [Expression] = []
            if current.kind != .punctuation("}") {
                elements.append(try parseExpression())
                while current.kind == .punctuation(",") {
                    advance()
                    elements.append(try parseExpression())
                }
            }
            guard current.kind == .punctuation("}") else { throw error(expected: "',' or '}'") }
            advance()
            return Expression(.aggregate(elements), offset: offset)
        case .keyword(.cast):
            try enterNesting()
            advance()
            try expectPunctuation("(")
            defer { depth -= 1 }
            let value = try parseExpression()
            try expectPunctuation(",")
            guard case .string(let className) = current.kind else { throw error(expected: "a class name string such as \"NSDate\"") }
            advance()
            try expectPunctuation(")")
            return Expression(.cast(value, className), offset: offset)
        case .keyword(.self):
            advance()
            guard current.kind == .punctuation(".") else { return Expression(.evaluatedObject, offset: offset) }
            advance()
            return Expression(.keyPath(try parseKeyPath(first: nil)), offset: offset)
        case .identifier(let name), .escapedIdentifier(let name):
            advance()
            return Expression(.keyPath(try parseKeyPath(first: name)), offset: offset)
        default:
            throw error(expected: "a key path, a literal, a $variable, '{' or CAST")
        }
    }

    /// Reads `name(.name)*`; `first` is a name already read (nil right after `SELF.`).
    mutating func parseKeyPath(first: String?) throws(PredicateError) -> [String] {
        var components: [String] = []
        if let first {
            components.append(first)
        } else if case .identifier(let name) = current.kind {
            components.append(name)
            advance()
        } else if case .escapedIdentifier(let name) = current.kind {
            components.append(name)
            advance()
        } else {
            throw error(expected: "a name after 'SELF.'")
        }
        while current.kind == .punctuation(".") {
            advance()
            components.append(try parseKeyPathComponent())
        }
        return components
    }

    mutating func parseKeyPathComponent() throws(PredicateError) -> String {
        switch current.kind {
        case .identifier(let name), .escapedIdentifier(let name):
            advance()
            return name
        case .collectionOperator(let name):
            guard CollectionOperator(rawValue: name) != nil else { throw error(expected: "@count, @sum, @avg, @min or @max") }
            advance()
            return name
        default:
            throw error(expected: "a key path component (a name, #name, or @count, @sum, @avg, @min, @max)")
        }
    }
}
