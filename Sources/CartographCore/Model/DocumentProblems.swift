// Collects the located problems of a model document so that one 422 lists them all (R-M5),
// instead of making the user fix and resubmit one problem at a time.

/// The problems found in a document, each at the JSON Pointer of its location (model documents here;
/// mapping documents and transformer sections in the mapping module).
public struct DocumentProblems: Sendable {
    /// Beyond this many, problems are counted but not listed: a hostile document must not turn
    /// into a response larger than itself.
    public static let listedLimit = 100

    public private(set) var details: [CartographError.Detail] = []
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// Records a problem; `offset` is a predicate's character offset where there is one.
    public mutating func report(_ pointer: JSONPointer, _ message: String, offset: Int? = nil) {
        count += 1
        if details.count < Self.listedLimit {
            details.append(CartographError.Detail(pointer: pointer.description, message: message, offset: offset))
        }
    }

    /// The 422 that lists every problem; its top-level `offset` is the first predicate error's (docs/errors.md).
    public func error(summary: String) -> CartographError {
        let unlisted = count - details.count
        let more = unlisted > 0 ? " The first \(details.count) are listed; \(unlisted) more were found." : ""
        let noun = count == 1 ? "problem" : "problems"
        return CartographError(.unprocessable, "\(summary) (\(count) \(noun)).\(more)", errors: details,
                               offset: details.lazy.compactMap(\.offset).first)
    }

    /// A name or value quoted for a message, shortened so that a huge one stays readable.
    public static func quote(_ text: String) -> String {
        text.count > 64 ? "'\(text.prefix(61))...'" : "'\(text)'"
    }

    /// A JSON value described for a message: strings quoted, numbers as written, other kinds by name.
    public static func describe(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): quote(text)
        case .number(let number): number.text
        case .bool(let flag): flag ? "true" : "false"
        default: value.kindName
        }
    }
}

func quoted(_ text: String) -> String { DocumentProblems.quote(text) }
func described(_ value: JSONValue) -> String { DocumentProblems.describe(value) }
