// The hostile-input properties, one per fuzz target. The same code runs in two places: compiled
// with `-sanitize=fuzzer,address` into a libFuzzer executable by scripts/fuzz.sh (a broken
// property traps, so libFuzzer saves the input), and uninstrumented in the corpus replay test,
// which feeds it every checked-in seed and crasher (docs/fuzzing.md).

/// A property that an input broke: which one, and what was seen.
public struct FuzzFailure: Error, Sendable, CustomStringConvertible {
    /// The property, as docs/fuzzing.md names it (`json.roundTrip`).
    public let property: String
    /// What was seen, for the person reading the crash report.
    public let detail: String

    /// A failure of `property`.
    public init(_ property: String, _ detail: String) {
        self.property = property
        self.detail = detail
    }

    public var description: String { "\(property): \(detail)" }
}

/// One fuzz target: an entry point of the server that reads untrusted bytes, with its properties.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `JSONReader`: depth limit, writer round trip, valid UTF-8.
    case json
    /// `ModelDocument.parse(jsonBytes:name:)`: located errors, normalized round trip.
    case model
    /// `ModelDocument.parse(coreDataXML:name:)`: located errors, no DTD, normalized round trip.
    case coredata
    /// `EntityMapping.parse(_:model:)` against `FuzzFixtures.model`: located errors, `.json` round trip.
    case mapping
    /// `Predicate(format:)` and everything after it: format round trip, check, SQL, evaluation.
    case predicate

    /// Runs every property of the target on `input`; nothing is thrown for inputs that are
    /// rightly refused.
    public func check(_ input: [UInt8]) throws(FuzzFailure) {
        switch self {
        case .json: try JSONProperties.check(input)
        case .model: try ModelDocumentProperties.checkJSON(input)
        case .coredata: try ModelDocumentProperties.checkCoreDataXML(input)
        case .mapping: try MappingProperties.check(input)
        case .predicate: try PredicateProperties.check(input)
        }
    }
}

/// Throws `property` with `detail` unless `condition` holds.
@inline(__always)
func require(_ condition: Bool, _ property: String, _ detail: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(property, detail()) }
}

/// An input shortened for a failure message.
func excerpt(_ bytes: [UInt8]) -> String {
    let text = String(decoding: bytes.prefix(200), as: UTF8.self)
    return bytes.count > 200 ? "«\(text)…» (\(bytes.count) bytes)" : "«\(text)»"
}
