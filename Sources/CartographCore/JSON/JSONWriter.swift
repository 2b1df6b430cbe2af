// Serializes `JSONValue` to compact UTF-8 JSON. Object members keep their order.

extension JSONValue {
    /// The value as compact JSON bytes.
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        JSONWriter.write(self, into: &out)
        return out
    }

    /// The value as compact JSON text.
    public var jsonText: String { String(decoding: jsonBytes, as: UTF8.self) }
}

/// Appends JSON text to a byte buffer.
public enum JSONWriter {
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.text.utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (i, key) in object.keys.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(object.values[i], into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Writes an integer's decimal digits (as `String(value)` spells it), without making a String.
    public static func writeInteger(_ value: Int64, into out: inout [UInt8]) {
        // Written from the end of a buffer on the stack (24 bytes: a sign and 19 digits at most).
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { bytes in
            var start = bytes.count
            var rest = value.magnitude
            repeat {
                start -= 1
                bytes[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            if value < 0 {
                start -= 1
                bytes[start] = UInt8(ascii: "-")
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
        }
    }

    /// Writes a JSON string: runs of bytes that need no escape are copied whole (feed entries and
    /// responses are mostly long runs of plain text).
    public static func writeString(_ string: String, into out: inout [UInt8]) {
        var string = string
        string.withUTF8 { writeString(utf8: $0, into: &out) }
    }

    /// Writes `bytes`, which must be valid UTF-8, as a JSON string.
    private static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in bytes.indices {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            writeEscape(of: byte, into: &out)
            runStart = index + 1
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        out.append(UInt8(ascii: "\""))
    }

    /// Writes `bytes` as a JSON string when they are well-formed UTF-8 and returns true; writes nothing
    /// and returns false when they are not (text read from a store is checked, not trusted).
    public static func writeString(validatingUTF8 bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) -> Bool {
        let start = out.count
        out.append(UInt8(ascii: "\""))
        var runStart = 0, index = 0
        while index < bytes.count {
            // Eight bytes at a time while none needs a look: the titles and bodies of a page are mostly
            // such runs, and this scan was the largest share of rendering them.
            if index + 8 <= bytes.count, isPlainASCII(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)) {
                index += 8
                continue
            }
            let byte = bytes[index]
            if byte >= 0x80 {
                let length = sequenceLength(bytes, at: index)
                guard length > 0 else {
                    out.removeSubrange(start...)
                    return false
                }
                index += length
                continue
            }
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                writeEscape(of: byte, into: &out)
                runStart = index + 1
            }
            index += 1
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        out.append(UInt8(ascii: "\""))
        return true
    }

    /// True when none of the eight bytes of `word` is above 0x7F, below 0x20, `"` or `\`: bytes a JSON
    /// string holds as they are. Each test finds whether any byte matches, without a branch per byte.
    private static func isPlainASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        /// Whether a byte of `value` is 0 (exact for any bytes).
        func hasZero(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        guard word & highs == 0 else { return false }
        // With every byte below 0x80, subtracting 0x20 borrows into a byte's high bit exactly when it is below 0x20.
        let control = (word &- 0x20 &* ones) & ~word & highs != 0
        return !control && !hasZero(word ^ (UInt64(UInt8(ascii: "\"")) &* ones)) && !hasZero(word ^ (UInt64(UInt8(ascii: "\\")) &* ones))
    }

    /// The length of the well-formed UTF-8 sequence (Unicode 15, table 3-7) of two to four bytes that
    /// starts at `index`, or 0 when it is not one.
    private static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            index + offset < bytes.count && range.contains(bytes[index + offset])
        }
        switch bytes[index] {
        case 0xC2...0xDF: return continuation(1) ? 2 : 0
        case 0xE0: return continuation(1, 0xA0...0xBF) && continuation(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF: return continuation(1) && continuation(2) ? 3 : 0
        case 0xED: return continuation(1, 0x80...0x9F) && continuation(2) ? 3 : 0
        case 0xF0: return continuation(1, 0x90...0xBF) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF1...0xF3: return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF4: return continuation(1, 0x80...0x8F) && continuation(2) && continuation(3) ? 4 : 0
        default: return 0
        }
    }

    private static func writeEscape(of byte: UInt8, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        default:
            out.append(contentsOf: "u00".utf8)
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0xF)])
        }
    }
}

/// One JSON value already written as bytes (objects rendered straight from their stored rows), to be
/// spliced into a response as it is.
public struct RenderedJSON: Sendable, Equatable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    public init(_ value: JSONValue) { self.bytes = value.jsonBytes }
}

extension JSONWriter {
    /// Writes an object whose first member is `first`, already rendered (a page's items), followed by
    /// `rest`: the document is never rebuilt as `JSONValue`s.
    public static func writeObject(first: (key: String, items: [RenderedJSON]), rest: JSONObject, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        writeString(first.key, into: &out)
        out.append(contentsOf: ":[".utf8)
        for (index, item) in first.items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: item.bytes)
        }
        out.append(UInt8(ascii: "]"))
        for (key, value) in rest {
            out.append(UInt8(ascii: ","))
            writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            write(value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}
