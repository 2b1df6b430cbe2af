// Checks of the JSON Pointers in errors (R-M5, docs/errors.md): each is a well-formed RFC 6901 pointer,
// and the value it points into exists in the document, so a user can find what to fix. (A
// pointer may name a member that is missing — `/entities/0/name` "is required" — but not one
// under a value that is not there.)
import CartographCore

enum JSONPointerChecks {
    /// The unescaped reference tokens of `pointer`; nil when it is not an RFC 6901 pointer.
    static func tokens(of pointer: String) -> [String]? {
        if pointer.isEmpty { return [] }
        // By scalars, not Characters: a key starting with a combining mark makes one Character of "/" and the mark.
        guard pointer.unicodeScalars.first == "/" else { return nil }
        var tokens: [String] = []
        for raw in pointer.unicodeScalars.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = String.UnicodeScalarView()
            var iterator = raw.makeIterator()
            while let scalar = iterator.next() {
                guard scalar == "~" else { token.append(scalar); continue }
                switch iterator.next() {
                case "0": token.append("~")
                case "1": token.append("/")
                default: return nil
                }
            }
            tokens.append(String(token))
        }
        return tokens
    }

    /// The value at `tokens` in `value`; nil when there is none.
    static func resolve(_ tokens: ArraySlice<String>, in value: JSONValue) -> JSONValue? {
        guard let token = tokens.first else { return value }
        switch value {
        case .object(let object):
            return object[token].flatMap { resolve(tokens.dropFirst(), in: $0) }
        case .array(let elements):
            guard token == "0" || (token.first != "0" && token.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }),
                let index = Int(token), index < elements.count
            else { return nil }
            return resolve(tokens.dropFirst(), in: elements[index])
        default:
            return nil
        }
    }

    /// Checks a 422's details: at least one, at most `DocumentProblems.listedLimit`, each with a
    /// message and a well-formed pointer whose parent is in `document` (when given).
    static func checkDetails(of error: CartographError, document: JSONValue?, property: String, input: [UInt8]) throws(FuzzFailure) {
        try require(!error.detail.isEmpty, property, "an empty detail for \(excerpt(input))")
        try require(!error.errors.isEmpty, property, "a 422 without located problems: \(error.detail) for \(excerpt(input))")
        try require(error.errors.count <= DocumentProblems.listedLimit, property, "\(error.errors.count) problems listed")
        for detail in error.errors {
            try require(!detail.message.isEmpty, property, "an empty message at \(detail.pointer)")
            guard let tokens = tokens(of: detail.pointer) else {
                throw FuzzFailure(property, "«\(detail.pointer)» is not a JSON Pointer (\(detail.message)) for \(excerpt(input))")
            }
            if let document, !tokens.isEmpty {
                try require(resolve(tokens.dropLast(), in: document) != nil, property,
                            "«\(detail.pointer)» points under nothing in the document (\(detail.message)) for \(excerpt(input))")
            }
        }
    }
}
