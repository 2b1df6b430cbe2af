// Percent-decoding for path segments, query components and the parts of compound keys.

/// Percent-decoding for path segments and query components.
public enum PercentDecoding {
    /// Decodes `%XX` escapes; nil when an escape is malformed or the result is not UTF-8.
    public static func decode(_ text: String) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Decodes a query component: `+` is a space (application/x-www-form-urlencoded), then `%XX`.
    public static func decodeQueryComponent(_ text: String) -> String? {
        decode(text.utf8.contains(UInt8(ascii: "+")) ? String(text.map { $0 == "+" ? " " : $0 }) : text)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
