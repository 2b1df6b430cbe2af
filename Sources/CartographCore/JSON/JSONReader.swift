// A strict RFC 8259 reader that keeps numbers as text (docs/api.md#json), validates UTF-8, limits
// nesting depth (R-S2) and reports the byte offset of every error. Foundation's
// JSONSerialization cannot keep a decimal's digits, so Cartograph reads JSON itself.

/// Why a document is not acceptable JSON, and where (0-based byte offset).
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        case syntax
        case invalidUTF8
        case tooDeep(limit: Int)
    }
    public let reason: Reason
    public let offset: Int
    public let message: String

    public var description: String { "\(message) at byte \(offset)" }
}

/// Parses JSON documents. Reentrant: one value serves any number of threads.
public struct JSONReader: Sendable {
    /// The deepest nesting of arrays and objects accepted (default 512, docs/configuration.md).
    public var maxDepth: Int

    public init(maxDepth: Int = 512) { self.maxDepth = maxDepth }

    /// Parses one complete document (surrounding whitespace allowed, a UTF-8 BOM skipped).
    public func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> JSONValue in
            var cursor = Cursor(bytes: buffer, maxDepth: maxDepth)
            return try cursor.document()
        }
    }

    /// Parses a document given as a string.
    public func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Checks a document exactly as `parse` does (the same errors at the same offsets) without
    /// building its values: what a streamed payload is checked with before any of it is mapped.
    public func validate(_ bytes: [UInt8]) throws(JSONSyntaxError) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) in
            var cursor = Cursor(bytes: buffer, maxDepth: maxDepth)
            cursor.materializes = false
            _ = try cursor.document()
        }
    }

    /// Checks values that follow one another with only whitespace between them (an NDJSON body's lines,
    /// each known to hold one value) as `validate` checks a document: the errors `parse` would give each
    /// value, at their offsets in `bytes`.
    public func validateValues(_ bytes: [UInt8]) throws(JSONSyntaxError) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) in
            var cursor = Cursor(bytes: buffer, maxDepth: maxDepth)
            cursor.materializes = false
            while true {
                cursor.skipWhitespace()
                guard cursor.index < buffer.count else { return }
                _ = try cursor.value()
            }
        }
    }

    /// The array at `path` (object member names from the root; a repeated name resolves to its last
    /// occurrence, as `JSONObject` lookups do): its offset and element count; nil when a name is
    /// missing or the value there is not an array. Values are skipped by their structure only (brackets,
    /// braces, strings and commas; nothing decoded or checked): the answer is right for a document
    /// `validate` accepts, and anything, or nil, for one it refuses. The pass costs a fraction of a
    /// validating one, which a payload too small to map in chunks would pay for nothing.
    public func locateArray(in bytes: [UInt8], at path: [String]) -> JSONArrayLocation? {
        bytes.withUnsafeBufferPointer { buffer -> JSONArrayLocation? in
            var cursor = Cursor(bytes: buffer, maxDepth: maxDepth)
            cursor.materializes = false
            return try? cursor.locateArray(at: path)
        }
    }

    /// Parses the elements of the array `location` names one at a time, in order, calling `body`
    /// with each element's index, byte offset (where `value(in:at:)` reads it again) and value: no
    /// element outlives its call unless `body` keeps it. A location at offset -1 names values separated
    /// by whitespace only from the start of `bytes` (an NDJSON body's lines, `validateValues`).
    public func forEachElement<E: Error>(in bytes: [UInt8], of location: JSONArrayLocation,
                                         _ body: (_ index: Int, _ offset: Int, _ element: JSONValue) throws(E) -> Void) throws(E) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(E) in
            var cursor = Cursor(bytes: buffer, maxDepth: Int.max)
            cursor.index = location.offset + 1
            var index = 0
            while true {
                cursor.skipWhitespace()
                guard cursor.index < buffer.count, buffer[cursor.index] != UInt8(ascii: "]") else { return }
                // The document was validated: an element always parses.
                let offset = cursor.index
                guard let element = try? cursor.value() else { return }
                try body(index, offset, element)
                index += 1
                cursor.skipWhitespace()
                if cursor.index < buffer.count, buffer[cursor.index] == UInt8(ascii: ",") { cursor.index += 1 }
            }
        }
    }
}

extension JSONReader {
    /// One pass over `bytes` that checks the whole document exactly as `parse` does (the same errors at
    /// the same offsets) and reads only the array at `path` (found as `locateArray` finds it): each
    /// element's byte offset and value, where an object element holds only the members named in
    /// `members` (their values whole) and other elements are whole. Nil when there is no array at `path`.
    /// Nothing else of the document is built: what a payload whose elements are mostly current (R-P7) is read with.
    public func shallowElements(in bytes: [UInt8], at path: [String], members: Set<String>) throws(JSONSyntaxError) -> [JSONElement]? {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> [JSONElement]? in
            var cursor = Cursor(bytes: buffer, maxDepth: maxDepth)
            cursor.materializes = false
            if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { cursor.index = 3 }
            cursor.skipWhitespace()
            guard cursor.index < buffer.count else { throw cursor.fail("empty document: expected a JSON value") }
            let elements = try cursor.shallowValue(path: path[...], members: members.map { WantedMember(name: $0) })
            cursor.skipWhitespace()
            guard cursor.index == buffer.count else { throw cursor.fail("unexpected data after the JSON value") }
            return elements
        }
    }

    /// The whole value at byte `offset` of a document `shallowElements` (or `validate`) accepted.
    public func value(in bytes: [UInt8], at offset: Int) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> JSONValue in
            var cursor = Cursor(bytes: buffer, maxDepth: Int.max)
            cursor.index = offset
            return try cursor.value()
        }
    }
}

/// An element of an array read by `JSONReader.shallowElements`.
public struct JSONElement: Sendable {
    /// The byte offset where the element starts.
    public let offset: Int
    public let value: JSONValue
}

/// An array found in a document by `JSONReader.locateArray`.
public struct JSONArrayLocation: Sendable, Equatable {
    /// The byte offset of its `[`.
    public let offset: Int
    public let count: Int
    /// The byte offset just past its `]`.
    public let end: Int

    /// The values of an NDJSON body of `count` lines as an array (offset -1: they start the body; see
    /// `JSONReader.forEachElement`).
    public static func lines(count: Int, in bytes: [UInt8]) -> JSONArrayLocation { JSONArrayLocation(offset: -1, count: count, end: bytes.count) }
}

private let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

/// A member name a shallow read keeps, with its UTF-8 bytes to compare names with as they are read.
private struct WantedMember {
    let name: String
    let bytes: [UInt8]
    let isASCII: Bool
    init(name: String) { (self.name, self.bytes, self.isASCII) = (name, Array(name.utf8), name.utf8.allSatisfy { $0 < 0x80 }) }
}

private struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var depth = 0
    /// Reused across strings that contain escapes.
    var scratch: [UInt8] = []
    /// The members and elements of the objects and arrays being read, innermost last: each container
    /// is built from its own stretch at its end, with its exact size, instead of growing by doubling.
    var pendingKeys: [String] = []
    var pendingValues: [JSONValue] = []
    /// False to check a document without building its objects and arrays (they read as null).
    var materializes = true
    /// Where the last member name `members` read starts (its opening quote) and ends (after its closing quote).
    var memberNameStart = 0, memberNameEnd = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ message: String, at offset: Int? = nil, _ reason: JSONSyntaxError.Reason = .syntax) -> JSONSyntaxError {
        JSONSyntaxError(reason: reason, offset: offset ?? index, message: message)
    }

    mutating func document() throws(JSONSyntaxError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        guard index < bytes.count else { throw fail("empty document: expected a JSON value") }
        let value = try self.value()
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
        return value
    }

    /// See `JSONReader.locateArray`; the document is valid.
    mutating func locateArray(at path: [String]) throws(JSONSyntaxError) -> JSONArrayLocation? {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        for name in path {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
            index += 1
            var found: Int?
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == quote else { break }  // `}` of an empty object
                let key = try string()
                skipWhitespace()
                index += 1  // ':'
                skipWhitespace()
                if key == name { found = index }
                guard skipStructurally() else { return nil }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { break }
                index += 1
            }
            guard let found else { return nil }
            index = found
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { return nil }
        let offset = index
        index += 1
        var count = 0
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] != UInt8(ascii: "]") else { break }
            guard skipStructurally() else { return nil }
            count += 1
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { break }
            index += 1
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "]") else { return nil }
        return JSONArrayLocation(offset: offset, count: count, end: index + 1)
    }

    /// Reads the object whose `{` is at `index`, calling `member` with each member's name (empty when
    /// `names` is false: not built) once the cursor is at its value; `member` reads the value.
    @inline(__always)
    mutating func members(names: Bool, _ member: (inout Cursor, String) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try enter()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1; depth -= 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == quote else { throw fail("expected a member name in quotes") }
            let key: String
            memberNameStart = index
            if names { key = try string() } else { try skipString(); key = "" }
            memberNameEnd = index
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':' after a member name") }
            index += 1
            skipWhitespace()
            try member(&self, key)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of document: expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; break }
            throw fail("expected ',' or '}' in an object")
        }
        depth -= 1
    }

    /// Reads the array whose `[` is at `index`, calling `element` with the cursor at each element; `element` reads it.
    @inline(__always)
    mutating func elements(_ element: (inout Cursor) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try enter()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1; depth -= 1
            return
        }
        while true {
            skipWhitespace()
            try element(&self)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of document: expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; break }
            throw fail("expected ',' or ']' in an array")
        }
        depth -= 1
    }

    /// Checks the value at `index` as `value()` does (not building it); when `path` leads from here to an
    /// array, returns its elements as `JSONReader.shallowElements` describes.
    mutating func shallowValue(path: ArraySlice<String>, members wanted: [WantedMember]) throws(JSONSyntaxError) -> [JSONElement]? {
        guard index < bytes.count else { throw fail("unexpected end of document: expected a value") }
        if path.isEmpty, bytes[index] == UInt8(ascii: "[") {
            var found: [JSONElement] = []
            try elements { (cursor) throws(JSONSyntaxError) in
                let offset = cursor.index
                guard cursor.index < cursor.bytes.count else { throw cursor.fail("unexpected end of document: expected a value") }
                found.append(JSONElement(offset: offset, value: try cursor.shallowElement(members: wanted)))
            }
            return found
        }
        guard let name = path.first, bytes[index] == UInt8(ascii: "{") else {
            _ = try value()
            return nil
        }
        var found: [JSONElement]?
        try members(names: true) { (cursor, key) throws(JSONSyntaxError) in
            // A repeated name resolves to its last occurrence, as `JSONObject` lookups do.
            if key == name { found = try cursor.shallowValue(path: path.dropFirst(), members: wanted) } else { _ = try cursor.value() }
        }
        return found
    }

    /// An element of the array `shallowValue` reads: an object with only the `members` named, anything else whole.
    /// Member names are matched on their bytes: no String is made (nor hashed) for the names not wanted.
    private mutating func shallowElement(members wanted: [WantedMember]) throws(JSONSyntaxError) -> JSONValue {
        guard bytes[index] == UInt8(ascii: "{") else {
            materializes = true
            defer { materializes = false }
            return try value()
        }
        var keys: [String] = [], values: [JSONValue] = []
        try members(names: false) { (cursor, _) throws(JSONSyntaxError) in
            guard let name = try cursor.wantedMemberName(wanted) else { _ = try cursor.value(); return }
            cursor.materializes = true
            defer { cursor.materializes = false }
            keys.append(name)
            values.append(try cursor.value())
        }
        return .object(JSONObject(keys: keys, values: values))
    }

    /// Which of `wanted` the member name just read is (`memberNameStart..<memberNameEnd`), if any, as
    /// String equality decides (canonical equivalence). Plain ASCII names are compared on their bytes,
    /// where that is the same answer; a name with an escape or another byte is decoded and compared as a String.
    private func wantedMemberName(_ wanted: [WantedMember]) throws(JSONSyntaxError) -> String? {
        let raw = UnsafeBufferPointer(rebasing: bytes[(memberNameStart + 1)..<(memberNameEnd - 1)])
        let plain = !raw.contains { $0 == backslash || $0 >= 0x80 }
        var decoded: String?
        for member in wanted {
            if plain, member.isASCII {
                if member.bytes.elementsEqual(raw) { return member.name }
                continue
            }
            if decoded == nil {
                var decoder = Cursor(bytes: bytes, maxDepth: maxDepth)
                decoder.index = memberNameStart
                decoded = try decoder.string()
            }
            if decoded == member.name { return member.name }
        }
        return nil
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func value() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of document: expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case quote:
            guard materializes else { try skipString(); return .null }
            return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let number = try self.number()
            return materializes ? .number(number) : .null
        default: throw fail("unexpected character: expected a value")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("invalid literal: expected '\(word)'") }
        for i in 0..<count where bytes[index + i] != word.utf8Start[i] {
            throw fail("invalid literal: expected '\(word)'")
        }
        index += count
    }

    mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > maxDepth {
            throw fail("nesting is deeper than the limit of \(maxDepth)", at: index, .tooDeep(limit: maxDepth))
        }
    }

    mutating func object() throws(JSONSyntaxError) -> JSONValue {
        let base = pendingKeys.count
        try members(names: materializes) { (cursor, key) throws(JSONSyntaxError) in
            let member = try cursor.value()
            if cursor.materializes {
                cursor.pendingKeys.append(key)
                cursor.pendingValues.append(member)
            }
        }
        guard materializes else { return .null }
        let valueBase = pendingValues.count - (pendingKeys.count - base)
        let object = JSONObject(keys: Array(pendingKeys[base...]), values: Array(pendingValues[valueBase...]))
        pendingKeys.removeLast(pendingKeys.count - base)
        pendingValues.removeLast(pendingValues.count - valueBase)
        return .object(object)
    }

    mutating func array() throws(JSONSyntaxError) -> JSONValue {
        let base = pendingValues.count
        try elements { (cursor) throws(JSONSyntaxError) in
            let element = try cursor.value()
            if cursor.materializes { cursor.pendingValues.append(element) }
        }
        guard materializes else { return .null }
        let elements = Array(pendingValues[base...])
        pendingValues.removeLast(pendingValues.count - base)
        return .array(elements)
    }

    /// Steps over the value at `index` by its structure alone (see `JSONReader.locateArray`): a string to
    /// its closing quote, an object or array to its matching end, anything else to the next delimiter.
    /// False at the end of the bytes.
    mutating func skipStructurally() -> Bool {
        var nesting = 0
        while index < bytes.count {
            switch bytes[index] {
            case quote:
                index += 1
                while true {
                    skipToQuoteOrBackslash()
                    guard index < bytes.count else { return false }
                    if bytes[index] == backslash { index += 2; continue }
                    if bytes[index] == quote { break }
                    index += 1
                }
                index += 1
                if nesting == 0 { return true }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                nesting += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if nesting == 0 { return true }  // the end of the container holding a scalar
                nesting -= 1
                index += 1
                if nesting == 0 { return true }
            case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                if nesting == 0 { return true }
                index += 1
            default:
                index += 1
            }
        }
        return nesting == 0
    }

    /// Steps eight bytes at a time over a string's bytes up to a quote or a backslash (no checks).
    private mutating func skipToQuoteOrBackslash() {
        guard let base = bytes.baseAddress else { return }
        let raw = UnsafeRawPointer(base)
        while index + 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if Self.hasZeroByte(word ^ Self.quotes) || Self.hasZeroByte(word ^ Self.backslashes) { break }
            index += 8
        }
    }

    /// Steps over string content eight bytes at a time while none of them ends the string, starts an
    /// escape or is a control character; true when every byte stepped over was ASCII.
    mutating func skipPlainWords() -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var highBits: UInt64 = 0
        while index + 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if Self.hasZeroByte(word ^ Self.quotes) || Self.hasZeroByte(word ^ Self.backslashes) || Self.hasByteBelow0x20(word) { break }
            highBits |= word
            index += 8
        }
        return highBits & Self.highBitMask == 0
    }

    /// Checks a string starting at its opening quote as `string()` does, without building it. Simple
    /// escapes are stepped over and the raw bytes between them checked for UTF-8 (an escape is ASCII, so
    /// no sequence spans one); anything else (a `\u` escape, a problem) is read again by `string()`,
    /// which decodes it and throws the very error `parse` throws.
    mutating func skipString() throws(JSONSyntaxError) {
        let start = index
        index += 1
        var segmentStart = index
        var ascii = true
        while true {
            if !skipPlainWords() { ascii = false }
            while index < bytes.count {
                let byte = bytes[index]
                if byte == quote || byte == backslash { break }
                if byte < 0x20 { throw fail("unescaped control character in a string") }
                if byte >= 0x80 { ascii = false }
                index += 1
            }
            guard index < bytes.count,
                  ascii || Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[segmentStart..<index])) else { break }
            if bytes[index] == quote {
                index += 1
                return
            }
            // A backslash: step over a simple escape; read anything else again with `string()`.
            guard index + 1 < bytes.count else { break }
            switch bytes[index + 1] {
            case quote, backslash, UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                index += 2
                segmentStart = index
                ascii = true
            default:
                index = start
                _ = try string()
                return
            }
        }
        index = start
        _ = try string()
    }

    /// Whether `bytes` is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or values past U+10FFFF).
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            let lead = bytes[i]
            if lead < 0x80 { i += 1; continue }
            let length: Int, lower: UInt8, upper: UInt8
            switch lead {
            case 0xC2...0xDF: (length, lower, upper) = (2, 0x80, 0xBF)
            case 0xE0: (length, lower, upper) = (3, 0xA0, 0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, lower, upper) = (3, 0x80, 0xBF)
            case 0xED: (length, lower, upper) = (3, 0x80, 0x9F)
            case 0xF0: (length, lower, upper) = (4, 0x90, 0xBF)
            case 0xF1...0xF3: (length, lower, upper) = (4, 0x80, 0xBF)
            case 0xF4: (length, lower, upper) = (4, 0x80, 0x8F)
            default: return false
            }
            guard i + length <= n, (lower...upper).contains(bytes[i + 1]) else { return false }
            for k in 2..<length where bytes[i + k] & 0xC0 != 0x80 { return false }
            i += length
        }
        return true
    }

    /// Reads a string starting at its opening quote.
    mutating func string() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        let contentStart = index
        var ascii = true
        // Fast path: no escapes (most of a long text), eight bytes at a time, then byte by byte.
        if !skipPlainWords() { ascii = false }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == quote {
                let slice = UnsafeBufferPointer(rebasing: bytes[contentStart..<index])
                index += 1
                if ascii { return String(decoding: slice, as: UTF8.self) }
                return try validated(slice, at: contentStart)
            }
            if byte == backslash { break }
            if byte < 0x20 { throw fail("unescaped control character in a string") }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count else { throw fail("unterminated string", at: start) }
        // Slow path: copy into scratch, decoding escapes.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == quote {
                index += 1
                let result = try scratch.withUnsafeBufferPointer { (b) throws(JSONSyntaxError) -> String in
                    try validated(b, at: contentStart)
                }
                return result
            }
            if byte < 0x20 { throw fail("unescaped control character in a string") }
            if byte != backslash { scratch.append(byte); index += 1; continue }
            index += 1
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case quote: scratch.append(quote)
            case backslash: scratch.append(backslash)
            case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"): try unicodeEscape()
            default: throw fail("invalid escape sequence", at: index - 2)
            }
        }
        throw fail("unterminated string", at: start)
    }

    /// Decodes `XXXX` (after `\u`), joining surrogate pairs; a lone surrogate is an error.
    mutating func unicodeEscape() throws(JSONSyntaxError) {
        let escapeStart = index - 2
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard index + 1 < bytes.count, bytes[index] == backslash, bytes[index + 1] == UInt8(ascii: "u") else {
                throw fail("unpaired surrogate in \\u escape", at: escapeStart, .invalidUTF8)
            }
            index += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else {
                throw fail("unpaired surrogate in \\u escape", at: escapeStart, .invalidUTF8)
            }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw fail("unpaired surrogate in \\u escape", at: escapeStart, .invalidUTF8)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape", at: escapeStart) }
        scratch.append(contentsOf: UTF8.encode(unicode)!)
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    func validated(_ slice: UnsafeBufferPointer<UInt8>, at offset: Int) throws(JSONSyntaxError) -> String {
        guard let string = String(validating: slice, as: UTF8.self) else {
            throw fail("invalid UTF-8 in a string", at: offset + firstInvalidUTF8(slice), .invalidUTF8)
        }
        return string
    }

    /// The offset of the first byte of `slice` that breaks UTF-8, for the error message.
    func firstInvalidUTF8(_ slice: UnsafeBufferPointer<UInt8>) -> Int {
        var decoder = UTF8()
        var iterator = slice.makeIterator()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput, .error: return offset
            }
        }
    }

    mutating func number() throws(JSONSyntaxError) -> JSONNumber {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number: expected a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fail("invalid number: leading zero") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number: expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number: expected an exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        guard materializes else { return JSONNumber(validatedText: "0") }
        return JSONNumber(validatedText: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    private static let quotes: UInt64 = 0x2222_2222_2222_2222
    private static let backslashes: UInt64 = 0x5C5C_5C5C_5C5C_5C5C
    private static let highBitMask: UInt64 = 0x8080_8080_8080_8080
    private static let ones: UInt64 = 0x0101_0101_0101_0101

    /// Whether any byte of `word` is zero (exact, see "Bit Twiddling Hacks").
    @inline(__always) static func hasZeroByte(_ word: UInt64) -> Bool {
        (word &- ones) & ~word & highBitMask != 0
    }

    /// Whether any byte of `word` is below 0x20 (exact for a bound up to 0x80).
    @inline(__always) static func hasByteBelow0x20(_ word: UInt64) -> Bool {
        (word &- ones &* 0x20) & ~word & highBitMask != 0
    }

    @inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}
