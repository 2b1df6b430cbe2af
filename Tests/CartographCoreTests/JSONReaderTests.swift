// The JSON reader's contract: RFC 8259 strictness, numbers kept as text, byte offsets in errors,
// UTF-8 validation and the depth limit (R-S2).
import Foundation
import Testing
import CartographTesting
@testable import CartographCore

struct JSONReaderTests {
    let reader = JSONReader()

    @Test func parsesEveryKindAndKeepsMemberOrder() throws {
        let value = try reader.parse(#" {"b": [1, -2.5e3, true, false, null], "a": {"x": "y"}, "c": ""} "#)
        let object = try #require(value.objectValue)
        #expect(object.keys == ["b", "a", "c"])
        #expect(value["b"] == [1, .number(JSONNumber(validatedText: "-2.5e3")), true, false, nil])
        #expect(value["a"]?["x"] == "y")
        #expect(value["c"] == "")
    }

    @Test func decimalNumbersKeepEveryDigit() throws {
        // docs/api.md#json: a decimal sent as a JSON number keeps every digit.
        let value = try reader.parse("[12345678901234567.891, 0.1000000000000000055511151231257827, 1E400, -0]")
        #expect(value.arrayValue?.map { $0.numberValue?.text } == ["12345678901234567.891", "0.1000000000000000055511151231257827", "1E400", "-0"])
    }

    @Test func integerAccessorsAreExact() throws {
        let value = try reader.parse("[9223372036854775807, 9223372036854775808, 2.0, 1e3]")
        let numbers = try #require(value.arrayValue?.compactMap { $0.numberValue })
        #expect(numbers[0].int64Value == Int64.max)
        #expect(numbers[1].int64Value == nil)
        #expect(numbers[2].isInteger == false)
        #expect(numbers[3].int64Value == nil)
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try reader.parse(#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u4e2d", "\ud83d\ude00", "é中😀"]"#)
        #expect(value == ["a\"b\\c/d\u{8}\u{c}\n\r\t", "é中", "😀", "é中😀"])
    }

    @Test func lastDuplicateKeyWins() throws {
        let value = try reader.parse(#"{"a": 1, "a": 2}"#)
        #expect(value["a"] == 2)
    }

    @Test(arguments: [
        ("", 0, "empty document"),
        ("{", 1, "expected a member name"),
        ("[1,]", 3, "expected a value"),
        ("[1 2]", 3, "expected ',' or ']'"),
        (#"{"a" 1}"#, 5, "expected ':'"),
        ("01", 1, "leading zero"),
        ("1.", 2, "digit after '.'"),
        ("-", 1, "expected a digit"),
        ("1e", 2, "exponent"),
        ("tru", 0, "expected 'true'"),
        ("nul", 0, "expected 'null'"),
        (#""abc"#, 0, "unterminated string"),
        ("\"a\u{1}b\"", 2, "control character"),
        (#""\x""#, 1, "invalid escape"),
        (#""\u12G4""#, 5, "hex digit"),
        ("[1] x", 4, "after the JSON value"),
        ("{'a': 1}", 1, "member name in quotes"),
        ("NaN", 0, "unexpected character"),
    ])
    func rejectsMalformedDocumentsWithOffsets(input: String, offset: Int, message: String) {
        #expect {
            _ = try reader.parse(input)
        } throws: { error in
            guard let error = error as? JSONSyntaxError else { return false }
            return error.offset == offset && error.message.contains(message) && error.reason == .syntax
        }
    }

    /// A streamed payload is checked without building its values: the same error at the same offset.
    @Test(arguments: ["", "{", "[1,]", "[1 2]", #"{"a" 1}"#, "01", "[1.]", #"{"a": [tru]}"#, #"{"a": "b\x"}"#, "[1] x",
                      "\"a\u{1}b\"", String(repeating: "[", count: 513) + String(repeating: "]", count: 513)])
    func validateReportsWhatParseReports(input: String) {
        let bytes = Array(input.utf8)
        var parsed: JSONSyntaxError?
        var validated: JSONSyntaxError?
        do { _ = try reader.parse(bytes) } catch { parsed = error }
        do { try reader.validate(bytes) } catch { validated = error }
        #expect(parsed != nil)
        #expect(validated == parsed)
    }

    @Test func locatesTheArrayAtAKeyPathAndReadsItsElementsOneAtATime() throws {
        let bytes = Array(#"{"items": [0], "data": {"items": "no", "x": {}}, "data": {"items": [{"id": 1}, null, [2, {"a": "\u00e9"}], 3.50]}}"#.utf8)
        try reader.validate(bytes)
        // A repeated name resolves to its last occurrence, as JSONObject lookups do.
        let location = try #require(reader.locateArray(in: bytes, at: ["data", "items"]))
        #expect(location.count == 4)
        var elements: [JSONValue] = []
        var indices: [Int] = []
        var offsets: [Int] = []
        reader.forEachElement(in: bytes, of: location) { index, offset, element in
            indices.append(index)
            offsets.append(offset)
            elements.append(element)
        }
        #expect(indices == [0, 1, 2, 3])
        // Each offset reads its element again (a later copy of a top-level object is read so, R-I5).
        #expect(try offsets.map { try reader.value(in: bytes, at: $0) } == elements)
        #expect(.array(elements) == (try reader.parse(bytes))["data"]?["items"])
        #expect(reader.locateArray(in: bytes, at: ["items"])?.count == 1)
        #expect(reader.locateArray(in: bytes, at: ["data", "x"]) == nil, "an object, not an array")
        #expect(reader.locateArray(in: bytes, at: ["missing"]) == nil)
        #expect(reader.locateArray(in: Array(" [ ] ".utf8), at: [])?.count == 0)
        #expect(reader.locateArray(in: Array(#"{"items": [1, 2"#.utf8), at: ["items"]) == nil, "an error on the way")
    }

    @Test func locatesTheArrayByItsStructureWhateverItsStringsHold() throws {
        // Strings holding the delimiters the structural skip counts by, escapes before a closing quote,
        // long strings (stepped over eight bytes at a time) and scalars ending at a bracket.
        let long = String(repeating: "abcdefgh", count: 5)
        let elements = [#""a,b]}""#, #""\"],[{\"""#, #""ends in a backslash \\""#, #""\\\"""#, "\"\(long)\\\"\(long)\"",
                        #"{"k": "}", "l": [1, "]", {"m": "\\"}]}"#, "[[], {}, [[\"x\"]]]", "-1.5e3", "true", "null", "\"é😀,\""]
        let document = #"{"before": {"items": ["x"]}, "items": ["# + elements.joined(separator: " , ") + #"], "after": "]"}"#
        let bytes = Array(document.utf8)
        try reader.validate(bytes)
        let location = try #require(reader.locateArray(in: bytes, at: ["items"]))
        #expect(location.count == elements.count)
        var read: [JSONValue] = []
        reader.forEachElement(in: bytes, of: location) { _, _, element in read.append(element) }
        #expect(.array(read) == (try reader.parse(bytes))["items"])
        #expect(reader.locateArray(in: Array("[1,2,3]".utf8), at: [])?.count == 3, "scalars ending at the closing bracket")
    }

    @Test func rejectsInvalidUTF8WithTheOffsetOfTheBadByte() {
        let bytes: [UInt8] = Array(#"{"name": "ok"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect {
            _ = try reader.parse(bytes)
        } throws: { error in
            (error as? JSONSyntaxError).map { $0.reason == .invalidUTF8 && $0.offset == 12 } ?? false
        }
    }

    @Test(arguments: [#""\ud800""#, #""\udc00""#, #""\ud800\u0041""#])
    func rejectsUnpairedSurrogates(input: String) {
        #expect(throws: JSONSyntaxError.self) { _ = try reader.parse(input) }
    }

    @Test func R_S2_depthLimitIsEnforced() throws {
        let limited = JSONReader(maxDepth: 512)
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try limited.parse(ok).arrayValue?.count == 1)
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect {
            _ = try limited.parse(deep)
        } throws: { error in
            (error as? JSONSyntaxError).map { $0.reason == .tooDeep(limit: 512) && $0.offset == 512 } ?? false
        }
    }

    /// The deepest document the server can be configured to accept (`--max-json-depth 2048`) is
    /// read, written and compared on a thread with the 8 MiB stack of a request thread; 100,000
    /// levels, the old maximum, overflowed it in a release build, 4,096 in a debug build.
    @Test func R_S2_theDeepestConfigurableDocumentFitsARequestThreadsStack() throws {
        let depth = 2_048
        let text = String(repeating: "[", count: depth) + "{\"a\": 1}" + String(repeating: "]", count: depth)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var roundTrips = false
        let thread = Thread {
            if let value = try? JSONReader(maxDepth: depth + 1).parse(text) {
                roundTrips = (try? JSONReader(maxDepth: depth + 1).parse(value.jsonBytes)) == value
            }
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        done.wait()
        #expect(roundTrips)
    }

    /// Strings are scanned eight bytes at a time up to the first byte that ends them, starts an escape,
    /// is a control character or is not ASCII: each of those at every position of strings up to 40
    /// bytes long (either side of every word boundary) gives the value or the error offset a byte-by-byte
    /// reading gives.
    @Test func stringsReadWordAtATimeEndEscapeAndFailAtTheRightByte() throws {
        let quote = UInt8(ascii: "\"")
        for length in 1...40 {
            for position in 0..<length {
                func document(_ special: [UInt8]) -> [UInt8] {
                    [UInt8(ascii: "[")] + [quote] + Array(repeating: UInt8(ascii: "a"), count: position) + special
                        + Array(repeating: UInt8(ascii: "b"), count: length - position - 1) + [quote, UInt8(ascii: "]")]
                }
                let prefix = String(repeating: "a", count: position), suffix = String(repeating: "b", count: length - position - 1)
                #expect(try reader.parse(document(Array(#"\""#.utf8))) == [.string(prefix + "\"" + suffix)])
                #expect(try reader.parse(document(Array(#"\\"#.utf8))) == [.string(prefix + "\\" + suffix)])
                #expect(try reader.parse(document([0xC3, 0xA9])) == [.string(prefix + "é" + suffix)])
                #expect(try reader.parse(document([0x7F])) == [.string(prefix + "\u{7F}" + suffix)])
                for (bad, reason) in [([UInt8(0x1F)], JSONSyntaxError.Reason.syntax), ([0xFF], .invalidUTF8)] {
                    #expect {
                        _ = try reader.parse(document(bad))
                    } throws: { error in
                        (error as? JSONSyntaxError).map { $0.reason == reason && $0.offset == 2 + position } ?? false
                    }
                }
                // The string ends at a quote anywhere: the rest is the next member.
                let split = Array("{\"\(prefix)\": \"\(suffix)\"}".utf8)
                #expect(try reader.parse(split) == .object(JSONObject([(prefix, .string(suffix))])))
            }
        }
    }

    @Test func writerRoundTripsAndEscapesControlCharacters() throws {
        let original: JSONValue = ["s": "line\nbreak \"quoted\" \u{1} é", "n": .number(JSONNumber(validatedText: "1.50")), "a": [nil, true]]
        let text = original.jsonText
        #expect(text == #"{"s":"line\nbreak \"quoted\" \u0001 é","n":1.50,"a":[null,true]}"#)
        #expect(try reader.parse(text) == original)
    }

    @Test func pointerEscapesTildeAndSlash() {
        #expect(JSONPointer.root.appending("entities").appending(0).appending("a/b~c").description == "/entities/0/a~1b~0c")
        #expect(JSONPointer.root.description == "")
    }

    /// Found by the mapping fuzz target (Fuzz/Regressions/mapping/pointer-tilde-before-combining-mark*):
    /// keys were escaped Character by Character, and `~` or `/` followed by a combining mark is one
    /// Character equal to neither, so the pointer of a problem in `{"a~\u{301}": 1}` was not a valid
    /// JSON Pointer, and `/` there split it in the wrong place.
    @Test func R_M5_pointersEscapeTildeAndSlashFollowedByCombiningMarks() throws {
        let pointer = JSONPointer.root.appending("a~\u{301}/\u{34E}b").appending(1)
        #expect(Array(pointer.description.unicodeScalars) == Array("/a~0\u{301}~1\u{34E}b/1".unicodeScalars))
        do {
            _ = try ModelDocument.parse(jsonBytes: Array(#"{"entities": [], "x~\#u{301}": 1}"#.utf8), name: "m")
            Issue.record("parsed")
        } catch {
            #expect(error.errors.map { Array($0.pointer.unicodeScalars) } == [Array("/x~0\u{301}".unicodeScalars)])
        }
    }

    /// Random documents and random mutations of them: the reader must never crash, and must accept
    /// exactly what Foundation's JSONSerialization accepts (on inputs without its extensions).
    @Test func randomizedInputsAgreeWithJSONSerializationAndNeverCrash() throws {
        var random = SeededRandom(seed: 0xC0FFEE)
        let alphabet = Array(#"{}[]:,"\ -0123456789.eEtruefalsn\u"#.utf8) + [0xC3, 0xA9, 0xFF, 0x01]
        var accepted = 0, rejected = 0
        for round in 0..<20_000 {
            var bytes = randomDocument(&random, depth: 0).jsonBytes
            if round % 2 == 1 {
                for _ in 0...(random.next() % 3) where !bytes.isEmpty {
                    let position = Int(random.next() % UInt64(bytes.count))
                    switch random.next() % 3 {
                    case 0: bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                    case 1: bytes.remove(at: position)
                    default: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
                    }
                }
            }
            let ours = (try? reader.parse(bytes)) != nil
            let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil
            // Where Foundation departs from RFC 8259 the inputs are not compared: it accepts trailing
            // commas and lone surrogates in \u escapes, and refuses exponents beyond Double's range.
            let text = String(decoding: bytes, as: UTF8.self)
            let comparable = !text.contains("\\") && !text.contains(",]") && !text.contains(",}")
                && text.range(of: #"[eE][+-]?[0-9]{3,}"#, options: .regularExpression) == nil
            if comparable { #expect(ours == foundation, "disagreement on \(String(decoding: bytes, as: UTF8.self))") }
            if ours { accepted += 1 } else { rejected += 1 }
        }
        #expect(accepted > 5_000 && rejected > 5_000)
    }

    /// Checking a document without building it — `validate`, and `shallowElements`, which builds only
    /// some members of an array's objects — reports exactly what `parse` reports, at the same offset, on
    /// random corruptions of payloads full of escapes and non-ASCII text; and on a valid document
    /// `shallowElements` gives each element's offset (its whole value read there) and the named members.
    @Test func skippingAndShallowReadingReportWhatParseReports() throws {
        var random = SeededRandom(seed: 0x5EED)
        let strings = [#""a\nb\n\nc""#, #""caf\u00e9 \"q\"""#, #""naïve über\tstraße""#, #""\ud83d\ude00!""#, #""plain words here""#, #""""#]
        let others = ["12.50", "-3e2", "true", "null", "[1, \"x\\\\y\"]", "{\"k\": \"é\"}"]
        let alphabet = Array(#"{}[]:,"\ -0123456789.etu"#.utf8) + [0xC3, 0xA9, 0xFF, 0x01, 0xED, 0xA0, 0xF4, 0x90, 0xE0, 0x80]
        var checked = 0, valid = 0
        for round in 0..<20_000 {
            let items = (0..<Int(random.next() % 4)).map { _ in
                let pick = { (options: [String]) in options[Int(random.next() % UInt64(options.count))] }
                return #"{"id": \#(pick(strings)), "body": \#(pick(strings)), "x": \#(pick(others)), "v": \#(pick(others + strings))}"#
            }
            var bytes = Array(#"{"meta": \#(strings[round % strings.count]), "items": [\#(items.joined(separator: ", "))]}"#.utf8)
            if round % 4 != 0 {
                for _ in 0...(random.next() % 2) {
                    let position = Int(random.next() % UInt64(bytes.count))
                    bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                }
            }
            var parsed: JSONValue?, parseError: JSONSyntaxError?, validateError: JSONSyntaxError?, shallowError: JSONSyntaxError?
            var shallow: [JSONElement]??
            do { parsed = try reader.parse(bytes) } catch { parseError = error }
            do { try reader.validate(bytes) } catch { validateError = error }
            do { shallow = try reader.shallowElements(in: bytes, at: ["items"], members: ["id", "v"]) } catch { shallowError = error }
            #expect(validateError == parseError, "validate on \(String(decoding: bytes, as: UTF8.self))")
            #expect(shallowError == parseError, "shallowElements on \(String(decoding: bytes, as: UTF8.self))")
            checked += 1
            guard let parsed, case .array(let whole)? = parsed["items"], let elements = shallow ?? nil else { continue }
            valid += 1
            #expect(elements.count == whole.count)
            for (element, value) in zip(elements, whole) {
                #expect(try reader.value(in: bytes, at: element.offset) == value)
                #expect(element.value["id"] == value["id"] && element.value["v"] == value["v"] && element.value["body"] == nil)
            }
        }
        #expect(checked == 20_000 && valid > 3_000)
    }

    /// A shallow read keeps a member when its name equals a wanted one as Strings compare, as a lookup in
    /// the parsed object does: through escapes ("i\u0064" is "id") and canonical equivalence ("e" with a
    /// combining acute accent is "é", KELVIN SIGN is "K"); names that only start alike are not kept.
    @Test func R_P7_shallowElementsMatchMemberNamesAsAParsedObjectDoes() throws {
        let bytes = Array(#"[{"i\u0064": 1, "cafe\u0301": 2, "K": 3, "idx": 4, "caf": 5}]"#.utf8)
        let wanted: Set<String> = ["id", "caf\u{E9}", "\u{212A}", "i"]
        let element = try #require(try reader.shallowElements(in: bytes, at: [], members: wanted)?.first)
        let parsed = try #require(try reader.parse(bytes).arrayValue?.first)
        for name in wanted { #expect(element.value[name] == parsed[name], "member \(name)") }
        #expect(element.value["id"] == 1 && element.value["caf\u{E9}"] == 2 && element.value["K"] == 3)
        #expect(element.value["idx"] == nil && element.value["caf"] == nil && element.value["i"] == nil)
    }

    @Test func shallowElementsFollowsThePathAsLocateArrayDoes() throws {
        let bytes = Array(#"{"items": [0], "data": {"items": "no"}, "data": {"items": [{"id": 1, "b": "x"}, null, [2], 3.50]}}"#.utf8)
        let elements = try #require(try reader.shallowElements(in: bytes, at: ["data", "items"], members: ["id"]))
        #expect(elements.map(\.value) == [["id": 1], nil, [2], .number(JSONNumber(validatedText: "3.50"))])
        #expect(try reader.shallowElements(in: bytes, at: ["missing"], members: []) == nil)
        #expect(try reader.shallowElements(in: Array(" [ ] ".utf8), at: [], members: [])?.count == 0)
    }

    private func randomDocument(_ random: inout SeededRandom, depth: Int) -> JSONValue {
        switch random.next() % (depth > 3 ? 4 : 6) {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .number(JSONNumber(validatedText: ["0", "-1", "3.25", "1e5", "12345678901234567890"][Int(random.next() % 5)]))
        case 3: return .string(["", "a", "é", "😀", "q\"t", "\n"][Int(random.next() % 6)])
        case 4: return .array((0..<Int(random.next() % 4)).map { _ in randomDocument(&random, depth: depth + 1) })
        default:
            return .object(JSONObject((0..<Int(random.next() % 4)).map { i in ("k\(i)", randomDocument(&random, depth: depth + 1)) }))
        }
    }
}

struct NamesTests {
    @Test(arguments: ["acme", "a", "0day", "a-b_c", String(repeating: "a", count: 63)])
    func acceptsResourceNames(name: String) { #expect(Names.isResourceName(name)) }

    @Test(arguments: ["", "Acme", "-a", "_a", "a.b", "..", "a/b", "a\u{0}", "é", String(repeating: "a", count: 64)])
    func rejectsResourceNames(name: String) { #expect(!Names.isResourceName(name)) }

    @Test func propertyNames() {
        #expect(Names.isPropertyName("Character"))
        #expect(Names.isPropertyName("real_name2"))
        #expect(!Names.isPropertyName("2abc"))
        #expect(!Names.isPropertyName("a-b"))
        #expect(!Names.isPropertyName(String(repeating: "a", count: 129)))
    }
}
