// R-M1 attribute types and R-P3 coercion of JSON values to typed attribute values, plus the
// ISO 8601 rendering of dates (docs/api.md#json).
import CartographCore
import Foundation
import Testing

@Suite struct ValuesTests {
    func coerce(_ value: JSONValue, _ type: AttributeType) throws(ValueCoercionError) -> AttributeValue? {
        try AttributeValue.coerce(value, to: type)
    }

    func number(_ text: String) -> JSONValue { .number(JSONNumber(validatedText: text)) }

    @Test func R_M1_typeNamesCanonicalAndCoreData() {
        for type in AttributeType.allCases { #expect(AttributeType(parsing: type.rawValue) == type) }
        let coreData: [(String, AttributeType)] = [
            ("Integer 16", .integer16), ("Integer 32", .integer32), ("Integer 64", .integer64), ("Decimal", .decimal),
            ("Double", .double), ("Float", .float), ("String", .string), ("Boolean", .boolean), ("Date", .date),
            ("Binary", .binary), ("UUID", .uuid), ("URI", .uri), ("Transformable", .transformable),
        ]
        for (name, type) in coreData { #expect(AttributeType(parsing: name) == type) }
        for bad in ["int", "Integer64", "integer 64", "", "STRING"] { #expect(AttributeType(parsing: bad) == nil) }
    }

    @Test func R_P3_integersAreStrictAndRangeChecked() throws {
        #expect(try coerce(42, .integer16) == .integer(42))
        #expect(try coerce("42", .integer32) == .integer(42))
        #expect(try coerce("-007", .integer64) == .integer(-7))
        #expect(try coerce(number("1e3"), .integer32) == .integer(1000))
        #expect(try coerce(number("2.0"), .integer32) == .integer(2))
        #expect(try coerce(true, .integer16) == .integer(1))
        #expect(try coerce("9223372036854775807", .integer64) == .integer(.max))
        #expect(try coerce("-9223372036854775808", .integer64) == .integer(.min))
        #expect(try coerce(.null, .integer64) == nil)
        for (value, type) in [("12x", AttributeType.integer64), (" 12", .integer64), ("", .integer32), ("1.5", .integer32),
                              ("32768", .integer16), ("-32769", .integer16), ("2147483648", .integer32),
                              ("9223372036854775808", .integer64), ("0x10", .integer64), ("1e400", .integer64)] {
            #expect(throws: ValueCoercionError.self, "\(value) as \(type)") { try coerce(.string(value), type) }
        }
        #expect(throws: ValueCoercionError.self) { try coerce(number("2.5"), .integer64) }
        #expect(throws: ValueCoercionError.self) { try coerce([1], .integer64) }
        do {
            _ = try coerce("12x", .integer64)
        } catch {
            #expect(error.message == "\"12x\" is not a number")
            #expect(error.type == .integer64)
        }
    }

    @Test func R_P3_decimalsKeepEveryDigit() throws {
        let value = try coerce(number("12345678901234567.891"), .decimal)
        guard case .decimal(let decimal)? = value else {
            Issue.record("expected a decimal, got \(String(describing: value))")
            return
        }
        #expect(decimal.canonicalText == "12345678901234567.891")
        #expect(value?.jsonValue == "12345678901234567.891")
        #expect(try coerce("1.50", .decimal) == coerce(number("1.5"), .decimal))
        #expect(try coerce("-0.000", .decimal).map(\.jsonValue) == "0")
        #expect(try coerce(number("1e-5"), .decimal).map(\.jsonValue) == "0.00001")
        #expect(throws: ValueCoercionError.self) { try coerce("12x", .decimal) }
        #expect(throws: ValueCoercionError.self) { try coerce("123456789012345678901234567890123456789", .decimal) }
    }

    @Test func R_P3_doublesAndFloats() throws {
        #expect(try coerce(number("2.5"), .double) == .double(2.5))
        #expect(try coerce("-1e3", .float) == .double(-1000))
        #expect(try coerce(false, .double) == .double(0))
        #expect(throws: ValueCoercionError.self) { try coerce(number("1e400"), .double) }
        #expect(throws: ValueCoercionError.self) { try coerce(number("1e39"), .float) }
        #expect(throws: ValueCoercionError.self) { try coerce("NaN", .double) }
    }

    @Test func R_P3_booleans() throws {
        for text in ["true", "TRUE", "Yes", "yes", "1"] { #expect(try coerce(.string(text), .boolean) == .boolean(true)) }
        for text in ["false", "False", "NO", "no", "0"] { #expect(try coerce(.string(text), .boolean) == .boolean(false)) }
        #expect(try coerce(0, .boolean) == .boolean(false))
        #expect(try coerce(2, .boolean) == .boolean(true))
        #expect(try coerce(number("0.0"), .boolean) == .boolean(false))
        #expect(try coerce(true, .boolean) == .boolean(true))
        for text in ["y", "on", "", "2"] {
            #expect(throws: ValueCoercionError.self) { try coerce(.string(text), .boolean) }
        }
    }

    @Test func R_P3_strings() throws {
        #expect(try coerce("x", .string) == .string("x"))
        #expect(try coerce(number("12.50"), .string) == .string("12.50"))
        #expect(try coerce(true, .string) == .string("true"))
        #expect(throws: ValueCoercionError.self) { try coerce(["a": 1], .string) }
    }

    @Test func R_P3_datesFromISO8601AndSeconds() throws {
        let midnight: Int64 = 1_704_067_200_000
        let cases: [(JSONValue, Int64)] = [
            ("2024-01-01T00:00:00Z", midnight), ("2024-01-01T00:00:00.000Z", midnight), ("2024-01-01T00:00:00.5Z", midnight + 500),
            ("2024-01-01T00:00:00.123456Z", midnight + 123), ("2024-01-01T01:00:00+01:00", midnight), ("2023-12-31T19:00:00-0500", midnight),
            ("2024-01-01", midnight), ("2024-01-01t00:00:00z", midnight), (1_704_067_200, midnight), (number("1704067200.25"), midnight + 250),
            (number("-1.5"), -1_500), (number("0"), 0), ("1969-12-31T23:59:59.999Z", -1), ("2000-02-29T12:00:00Z", 951_825_600_000),
        ]
        for (value, milliseconds) in cases {
            #expect(try coerce(value, .date) == .date(millisecondsSince1970: milliseconds), "\(value)")
        }
        for bad in ["2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T00:00:00", "yesterday",
                    "2024-01-01T00:00:00.Z", "2024-1-1T00:00:00Z", "2024-01-01T00:00:00+25:00", ""] {
            #expect(throws: ValueCoercionError.self, "\(bad)") { try coerce(.string(bad), .date) }
        }
        #expect(throws: ValueCoercionError.self) { try coerce(number("1e300"), .date) }
    }

    @Test func R_M1_datesRenderAsISO8601WithMilliseconds() {
        #expect(ISO8601Instant.render(milliseconds: 1_704_067_200_000) == "2024-01-01T00:00:00.000Z")
        #expect(ISO8601Instant.render(milliseconds: 951_825_600_123) == "2000-02-29T12:00:00.123Z")
        #expect(ISO8601Instant.render(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(ISO8601Instant.render(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(AttributeValue.date(millisecondsSince1970: 1_500).jsonValue == "1970-01-01T00:00:01.500Z")
        var random = SystemRandomNumberGenerator()
        for _ in 0..<1_000 {
            let milliseconds = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &random)
            let text = ISO8601Instant.render(milliseconds: milliseconds)
            #expect(ISO8601Instant.milliseconds(from: text) == milliseconds, "\(text)")
        }
    }

    @Test func R_M1_aDateWrittenIntoBytesIsItsRenderedTextAfterWhatWasThere() {
        var random = SystemRandomNumberGenerator()
        let wideYears: [Int64] = [-62_167_219_200_001, 253_402_300_800_000, .min / 2, .max / 2]
        for milliseconds in wideYears + (0..<1_000).map({ _ in Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &random) }) {
            var out = Array("x".utf8)
            ISO8601Instant.write(milliseconds: milliseconds, into: &out)
            #expect(out == Array(("x" + ISO8601Instant.render(milliseconds: milliseconds)).utf8), "\(milliseconds)")
        }
        var wide: [UInt8] = []
        ISO8601Instant.write(milliseconds: 253_402_300_800_000, into: &wide)
        #expect(String(decoding: wide, as: UTF8.self) == "+010000-01-01T00:00:00.000Z")
    }

    @Test func R_P3_uuidURIBinaryTransformable() throws {
        #expect(try coerce("0F8FAD5B-D9CB-469F-A165-70867728950E", .uuid) == .uuid("0f8fad5b-d9cb-469f-a165-70867728950e"))
        #expect(throws: ValueCoercionError.self) { try coerce("0f8fad5b", .uuid) }
        #expect(try coerce("https://example.com/a?b=1", .uri) == .uri("https://example.com/a?b=1"))
        #expect(throws: ValueCoercionError.self) { try coerce("", .uri) }
        #expect(throws: ValueCoercionError.self) { try coerce("http://exa mple.com/", .uri) }
        #expect(try coerce("aGVsbG8=", .binary) == .binary(Array("hello".utf8)))
        #expect(AttributeValue.binary(Array("hello".utf8)).jsonValue == "aGVsbG8=")
        #expect(throws: ValueCoercionError.self) { try coerce("not base64!", .binary) }
        #expect(try coerce(["a": [1, nil]], .transformable) == .json(["a": [1, nil]]))
    }

    @Test func numberTextReadsExactly() {
        #expect(NumberText("007")?.int64Value == 7)
        #expect(NumberText("1.2300e2")?.int64Value == 123)
        #expect(NumberText("1.5")?.int64Value == nil)
        #expect(NumberText("-0")?.isZero == true)
        #expect(NumberText("1.5")?.floorScaled(by: 0) == 1)
        #expect(NumberText("-1.5")?.floorScaled(by: 0) == -2)
        #expect(NumberText("1e99999999999999999999")?.doubleValue == nil)
        for bad in ["", "-", "+", "1.", ".5", "1e", "1e+", "0x1", "1 ", "١٢"] { #expect(NumberText(bad) == nil, "\(bad)") }
    }
}
