// Properties of the JSON reader (R-S2, docs/api.md#json): whatever it accepts is UTF-8 and its writer's
// output reads back to an equal value, byte for byte; the nesting limit holds exactly (a reader with
// a small limit accepts the same documents up to that depth and refuses deeper ones as too deep);
// error offsets lie inside the document.
import CartographCore

enum JSONProperties {
    /// The server's limit (docs/configuration.md) and a small one that fuzzed inputs easily exceed.
    static let serverReader = JSONReader()
    static let shallowLimit = 6
    static let shallowReader = JSONReader(maxDepth: shallowLimit)

    static func check(_ input: [UInt8]) throws(FuzzFailure) {
        let value: JSONValue
        do {
            value = try serverReader.parse(input)
        } catch {
            try checkRefusal(error, of: input, property: "json.errorOffset")
            // A document the server refuses is refused at any limit.
            try require((try? shallowReader.parse(input)) == nil, "json.depthLimit", "accepted with limit \(shallowLimit) but not 512: \(excerpt(input))")
            return
        }

        try require(String(validating: input, as: UTF8.self) != nil, "json.utf8", "accepted a document that is not UTF-8: \(excerpt(input))")

        // The writer's output reads back to an equal value and is a fixed point of write ∘ read.
        let written = value.jsonBytes
        let reread: JSONValue
        do { reread = try serverReader.parse(written) } catch {
            throw FuzzFailure("json.roundTrip", "the writer's output does not parse (\(error)): \(excerpt(written)) from \(excerpt(input))")
        }
        try require(reread == value, "json.roundTrip", "the writer's output reads back to another value: \(excerpt(written)) from \(excerpt(input))")
        try require(reread.jsonBytes == written, "json.roundTrip", "writing is not stable: \(excerpt(reread.jsonBytes)) then \(excerpt(written))")

        // The depth limit: exactly the documents no deeper than the limit are accepted.
        let depth = nesting(of: value)
        try require(depth <= serverReader.maxDepth, "json.depthLimit", "accepted depth \(depth) over the limit \(serverReader.maxDepth)")
        switch Result(catching: { () throws(JSONSyntaxError) in try shallowReader.parse(input) }) {
        case .success(let shallow):
            try require(depth <= shallowLimit, "json.depthLimit", "limit \(shallowLimit) accepted depth \(depth): \(excerpt(input))")
            try require(shallow == value, "json.depthLimit", "limit \(shallowLimit) read another value: \(excerpt(input))")
        case .failure(let error):
            try require(depth > shallowLimit && error.reason == .tooDeep(limit: shallowLimit), "json.depthLimit",
                        "limit \(shallowLimit) refused depth \(depth) with \(error): \(excerpt(input))")
            try checkRefusal(error, of: input, property: "json.errorOffset")
        }
    }

    /// A refusal points inside the document (or just past its end) and says something.
    static func checkRefusal(_ error: JSONSyntaxError, of input: [UInt8], property: String) throws(FuzzFailure) {
        try require((0...input.count).contains(error.offset), property, "offset \(error.offset) outside a document of \(input.count) bytes")
        try require(!error.message.isEmpty, property, "an empty message")
    }

    /// The deepest nesting of arrays and objects in `value` (a scalar is 0, `[]` is 1).
    static func nesting(of value: JSONValue) -> Int {
        switch value {
        case .array(let elements): 1 + (elements.lazy.map(nesting(of:)).max() ?? 0)
        case .object(let object): 1 + (object.values.lazy.map(nesting(of:)).max() ?? 0)
        default: 0
        }
    }
}
