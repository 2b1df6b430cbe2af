// Text read from a store is written into responses without making a String first, after a check that
// it is well-formed UTF-8 (R-Q4): the check must agree with Swift's own decoder exactly, or a response
// would carry bytes a decoded read repairs.
import Testing
import CartographCore
import CartographTesting

struct JSONWriterTests {
    /// Bytes biased towards the edges of UTF-8's table: lead bytes, continuation bytes, truncations.
    private static func awkwardBytes(_ random: inout SeededRandom) -> [UInt8] {
        let interesting: [UInt8] = [0x00, 0x1F, 0x22, 0x5C, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                                    0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        return (0..<Int(random.next() % 12)).map { _ in
            random.next() % 3 == 0 ? UInt8(truncatingIfNeeded: random.next()) : interesting[Int(random.next() % UInt64(interesting.count))]
        }
    }

    /// Writes `bytes` as stored text and expects what a decoded read writes: accepted (and the same bytes)
    /// when Swift's decoder keeps the text as it is, refused (and nothing written) when it would repair it.
    /// Returns whether the bytes were valid UTF-8.
    @discardableResult
    private static func expectWrittenAsSwiftDecodesIt(_ bytes: [UInt8]) -> Bool {
        var written: [UInt8] = []
        let accepted = bytes.withUnsafeBufferPointer { JSONWriter.writeString(validatingUTF8: $0, into: &written) }
        let swift = String(validating: bytes, as: UTF8.self)
        #expect(accepted == (swift != nil), "\(bytes)")
        var expected: [UInt8] = []
        if let swift { JSONWriter.writeString(swift, into: &expected) }
        #expect(written == expected, "\(bytes): nothing is written for refused text")
        return swift != nil
    }

    @Test func R_Q4_textIsCopiedExactlyWhenSwiftWouldKeepItAndRefusedWhenSwiftWouldRepairIt() {
        var random = SeededRandom(seed: 7)
        var valid = 0
        for _ in 0..<200_000 {
            if Self.expectWrittenAsSwiftDecodesIt(Self.awkwardBytes(&random)) { valid += 1 }
        }
        #expect(valid > 10_000, "the generator must produce valid text too")
    }

    /// Runs of plain ASCII are scanned eight bytes at a time: a byte that needs a look (a control
    /// character, `"`, `\`, a byte from 0x80 up; DEL beside them) must be found at every offset of a word, in long texts too.
    @Test func R_Q4_longTextIsCopiedExactlyWhateverByteNeedsALookWherever() {
        var random = SeededRandom(seed: 11)
        let needsALook: [UInt8] = [0x00, 0x01, 0x0A, 0x1F, 0x22, 0x5C, 0x7F, 0x80, 0xC3, 0xE2, 0xF0, 0xFF]
        for length in 1...40 {
            for offset in 0..<length {
                for byte in needsALook {
                    var bytes = (0..<length).map { _ in UInt8(0x20 + random.next() % 0x5F) }.map { $0 == 0x22 || $0 == 0x5C ? 0x41 : $0 }
                    bytes[offset] = byte
                    if byte == 0xC3, offset + 1 < length { bytes[offset + 1] = 0xA9 }
                    Self.expectWrittenAsSwiftDecodesIt(bytes)
                }
            }
        }
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            while bytes.count < 64 {
                bytes += random.next() % 2 == 0 ? Array("plain text, ASCII only: ".utf8.prefix(Int(random.next() % 24))) : Self.awkwardBytes(&random)
            }
            Self.expectWrittenAsSwiftDecodesIt(bytes)
        }
    }

    @Test func R_Q4_integersAreWrittenAsTheirDecimalDigits() {
        var random = SystemRandomNumberGenerator()
        for value in [0, 1, -1, 9, 10, -10, .max, .min] + (0..<1_000).map({ _ in Int64.random(in: .min ... .max, using: &random) }) {
            var out = Array("[".utf8)
            JSONWriter.writeInteger(value, into: &out)
            #expect(out == Array("[\(value)".utf8))
        }
    }

    @Test func R_Q4_refusedTextLeavesWhatWasWrittenBefore() {
        var out = Array("{\"a\":".utf8)
        let accepted = [UInt8]([0x61, 0xE2, 0x82]).withUnsafeBufferPointer { JSONWriter.writeString(validatingUTF8: $0, into: &out) }
        #expect(!accepted)
        #expect(out == Array("{\"a\":".utf8))
    }
}
