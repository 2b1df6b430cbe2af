// Prints a syntax tree back in the format language, in a canonical spelling that parses to the
// same tree (`Predicate(format: p.format) == p` for every tree the parser produces).

extension Predicate: CustomStringConvertible {
    /// The predicate in canonical format: upper-case keywords, `==`, double-quoted strings,
    /// parentheses only where the tree needs them.
    public var format: String {
        var output = ""
        write(to: &output, context: .top)
        return output
    }

    public var description: String { format }

    /// Where a predicate is printed, which decides whether it needs parentheses.
    private enum Context { case top, orOperand, andOperand, notOperand }

    private func write(to output: inout String, context: Context) {
        switch self {
        case .constant(let value):
            output += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let inner):
            output += "NOT "
            inner.write(to: &output, context: .notOperand)
        case .and(let operands), .or(let operands):
            let isAnd = if case .and = self { true } else { false }
            guard let first = operands.first else {
                output += isAnd ? "TRUEPREDICATE" : "FALSEPREDICATE"
                return
            }
            guard operands.count > 1 else {
                first.write(to: &output, context: context)
                return
            }
            // A chain needs parentheses inside NOT, inside a chain of the same kind (to keep the
            // tree's shape), and an OR inside an AND.
            let needsParentheses = context == .notOperand || context == (isAnd ? .andOperand : .orOperand) || (!isAnd && context == .andOperand)
            if needsParentheses { output += "(" }
            for (index, operand) in operands.enumerated() {
                if index > 0 { output += isAnd ? " AND " : " OR " }
                operand.write(to: &output, context: isAnd ? .andOperand : .orOperand)
            }
            if needsParentheses { output += ")" }
        case .comparison(let comparison):
            comparison.write(to: &output)
        }
    }
}

extension Comparison: CustomStringConvertible {
    public var description: String {
        var output = ""
        write(to: &output)
        return output
    }

    fileprivate func write(to output: inout String) {
        if let quantifier { output += quantifier.rawValue + " " }
        lhs.write(to: &output)
        output += " " + comparisonOperator.rawValue
        if !options.isEmpty {
            output += "["
            if options.contains(.caseInsensitive) { output += "c" }
            if options.contains(.diacriticInsensitive) { output += "d" }
            output += "]"
        }
        output += " "
        rhs.write(to: &output)
    }
}

extension Expression: CustomStringConvertible {
    public var description: String {
        var output = ""
        write(to: &output)
        return output
    }

    fileprivate func write(to output: inout String) {
        switch kind {
        case .keyPath(let components):
            guard !components.isEmpty else {
                output += "SELF"
                return
            }
            for (index, component) in components.enumerated() {
                if index > 0 { output += "." }
                // A name spelled like a keyword is escaped, as Foundation requires.
                if Keyword(word: component) != nil { output += "#" }
                output += component
            }
        case .evaluatedObject:
            output += "SELF"
        case .literal(let literal):
            literal.write(to: &output)
        case .variable(let name):
            output += "$" + name
        case .aggregate(let elements):
            output += "{"
            for (index, element) in elements.enumerated() {
                if index > 0 { output += ", " }
                element.write(to: &output)
            }
            output += "}"
        case .cast(let value, let className):
            output += "CAST("
            value.write(to: &output)
            output += ", "
            Literal.string(className).write(to: &output)
            output += ")"
        }
    }
}

extension Literal {
    fileprivate func write(to output: inout String) {
        switch self {
        case .null: output += "nil"
        case .boolean(let value): output += value ? "YES" : "NO"
        case .number(let text): output += text
        case .string(let text):
            output += "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": output += "\\\""
                case "\\": output += "\\\\"
                case "\n": output += "\\n"
                case "\r": output += "\\r"
                case "\t": output += "\\t"
                case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: output.unicodeScalars.append(scalar)
                }
            }
            output += "\""
        }
    }
}
