// A newline-delimited JSON body (`application/x-ndjson`: one value per line) as the JSON document a
// mapping reads: its lines become the array at the mapping's key path, so an NDJSON payload takes the
// path a JSON payload of the same objects takes. Lines of several chunks are mapped where they stand
// (`MappingEngine.streamingPlan(ndjson:)`); fewer are rewritten into that document (one copy of the body).
// Errors are told back by line (`locating`).

/// An NDJSON body, checked line by line, and the JSON document it stands for.
public struct NDJSONDocument: Sendable {
    /// The body as posted (the request's own bytes, not a copy): its lines are found in it again when the
    /// JSON document is asked for or an error told, rather than a table of every line kept for all
    /// payloads (it would cost more than the body itself for small objects).
    public let body: [UInt8]
    /// The key path whose array the lines are.
    public let keyPath: [String]
    /// How many values the body holds (one a line; lines of whitespace only do not count).
    public let count: Int
    /// The pointer of the array in `json` (`/k1/k2`, or empty).
    private let arrayPointer: String

    /// Checks `body`. A line holding only whitespace is skipped (a trailing newline, `\r\n` endings); a
    /// line holding more or less than one value is a 400 naming it. Strings never span lines in JSON, so
    /// a line's brackets and quotes are checked by counting them, without parsing the value.
    public init(ndjson body: [UInt8], keyPath: [String]) throws(CartographError) {
        var count = 0
        try Self.forEachValue(in: body) { (value, line, lineStart) throws(CartographError) in
            try Self.checkOneValue(value, line: line, lineStart: lineStart)
            count += 1
        }
        self.body = body
        self.keyPath = keyPath
        self.count = count
        arrayPointer = keyPath.map { "/" + JSONPointer.escape($0) }.joined()
    }

    /// `{"k1": {"k2": [line, line, …]}}` for a key path `k1.k2`; `[line, …]` without one: a copy of the
    /// body, for a payload mapped whole (a payload of several chunks maps the lines where they stand).
    public var json: [UInt8] {
        var json: [UInt8] = []
        json.reserveCapacity(body.count + 64)
        for key in keyPath { json += Array("{\(JSONValue.string(key).jsonText):".utf8) }
        json.append(UInt8(ascii: "["))
        Self.forEachValue(in: body) { (value: ArraySlice<UInt8>, _: Int, _: Int) in
            if json.last != UInt8(ascii: "[") { json.append(UInt8(ascii: ",")) }
            json += value
        }
        json.append(UInt8(ascii: "]"))
        json += Array(repeating: UInt8(ascii: "}"), count: keyPath.count)
        return json
    }

    /// Where the array's first value starts in `json`.
    private var firstValueOffset: Int { keyPath.reduce(1) { $0 + JSONValue.string($1).jsonText.utf8.count + 2 } }

    /// Which bytes an error's offsets count: `json`'s, or (for a payload whose lines were mapped where they
    /// stand) the body's.
    public enum Offsets: Sendable { case json, body }

    /// Calls `body` with each line's value (its bytes without the whitespace around them), its line
    /// number (1-based) and where its line starts, skipping lines of whitespace only.
    private static func forEachValue<E: Error>(in bytes: [UInt8], _ body: (ArraySlice<UInt8>, _ line: Int, _ lineStart: Int) throws(E) -> Void) throws(E) {
        var lineStart = 0, line = 1
        while lineStart <= bytes.count {
            let end = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
            let text = bytes[lineStart..<end]
            if let first = text.firstIndex(where: { !isWhitespace($0) }) {
                let last = text.lastIndex(where: { !isWhitespace($0) }) ?? first
                try body(bytes[first...last], line, lineStart)
            }
            lineStart = end + 1
            line += 1
        }
    }

    /// Where each value's bytes start in `json`, by position in the array, with its line number and the
    /// whitespace before it on its line: found again from the body, for an error to tell.
    private var values: [(offset: Int, line: Int, indent: Int)] {
        var values: [(offset: Int, line: Int, indent: Int)] = []
        var offset = firstValueOffset
        Self.forEachValue(in: body) { (value: ArraySlice<UInt8>, line: Int, lineStart: Int) in
            values.append((offset, line, value.startIndex - lineStart))
            offset += value.count + 1
        }
        return values
    }

    /// `error`, found mapping `json`, told in the body's terms: a pointer into the array becomes the
    /// pointer into its line's value (`/4/title` for `/items/4/title`, the position among the values) with
    /// "line N: " before the message, and an offset into `json` the line and column it falls on.
    public func locating(_ error: CartographError, offsets: Offsets = .json) -> CartographError {
        let values = values
        func place(of offset: Int) -> (line: Int, column: Int)? {
            switch offsets {
            case .json: return self.place(of: offset, values: values)
            case .body: return bodyPlace(of: offset)
            }
        }
        var located = error
        located.errors = error.errors.map { detail in
            var detail = detail
            if let (position, rest) = position(in: detail.pointer) {
                detail.pointer = "/\(position)" + rest
                detail.message = "line \(values[position].line): " + detail.message
            }
            if let offset = detail.offset, let place = place(of: offset) {
                detail.message = "line \(place.line), column \(place.column): " + detail.message
                detail.offset = nil
            }
            return detail
        }
        if let offset = error.offset, let place = place(of: offset) {
            located.detail = "Line \(place.line), column \(place.column): " + error.detail
            located.offset = nil
        }
        return located
    }

    /// The position among the values of the pointer's element of the array, and the rest of the pointer.
    private func position(in pointer: String) -> (Int, String)? {
        guard pointer.hasPrefix(arrayPointer + "/") else { return nil }
        let tail = pointer.dropFirst(arrayPointer.count + 1)
        let digits = tail.prefix { $0.isASCII && $0.isNumber }
        guard let position = Int(digits), (0..<count).contains(position) else { return nil }
        return (position, String(tail.dropFirst(digits.count)))
    }

    /// The line and column (1-based, in bytes) of an offset into `json`.
    private func place(of offset: Int, values: [(offset: Int, line: Int, indent: Int)]) -> (line: Int, column: Int)? {
        guard let index = values.lastIndex(where: { $0.offset <= offset }) else { return nil }
        let value = values[index]
        // The value's bytes were copied from its line without the whitespace before it; columns count from the line's start.
        return (value.line, offset - value.offset + 1 + value.indent)
    }

    /// The line and column (1-based, in bytes) of an offset into the body.
    private func bodyPlace(of offset: Int) -> (line: Int, column: Int)? {
        guard offset <= body.count else { return nil }
        let lineStart = (body[..<offset].lastIndex(of: 0x0A) ?? -1) + 1
        return (body[..<lineStart].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }, offset - lineStart + 1)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D
    }

    /// A 400 unless `bytes` close every bracket they open and hold no comma outside them: one value.
    private static func checkOneValue(_ bytes: ArraySlice<UInt8>, line: Int, lineStart: Int) throws(CartographError) {
        var depth = 0, inString = false, escaped = false
        for (index, byte) in zip(bytes.indices, bytes) {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth < 0 { throw notOneValue(line: line, column: index - lineStart + 1, "a bracket closes that no bracket opened") }
            case UInt8(ascii: ","):
                if depth == 0 { throw notOneValue(line: line, column: index - lineStart + 1, "a comma outside any value: one value per line") }
            default: break
            }
        }
        if inString || depth != 0 { throw notOneValue(line: line, column: bytes.endIndex - lineStart, "the value does not end on its line") }
    }

    private static func notOneValue(line: Int, column: Int, _ why: String) -> CartographError {
        CartographError(.badRequest, "Line \(line), column \(column) of the NDJSON body: \(why).",
                        errors: [.init(pointer: "", message: "line \(line), column \(column): \(why)")])
    }
}
