// Collects the located problems of a model document so that one 422 lists them all (R-M5),
// instead of making the user fix and resubmit one problem at a time.

/// The problems found in a document, each at the JSON Pointer of its location.
struct DocumentProblems {
    /// Beyond this many, problems are counted but not listed: a hostile document must not turn
    /// into a response larger than itself.
    static let listedLimit = 100

    private(set) var details: [CartographError.Detail] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func report(_ pointer: JSONPointer, _ message: String) {
        count += 1
        if details.count < Self.listedLimit { details.append(CartographError.Detail(pointer: pointer.description, message: message)) }
    }

    /// The 422 that lists every problem.
    func error(summary: String) -> CartographError {
        let unlisted = count - details.count
        let more = unlisted > 0 ? " The first \(details.count) are listed; \(unlisted) more were found." : ""
        let noun = count == 1 ? "problem" : "problems"
        return CartographError(.unprocessable, "\(summary) (\(count) \(noun)).\(more)", errors: details)
    }
}

/// A name or value quoted for a message, shortened so that a huge one stays readable.
func quoted(_ text: String) -> String {
    text.count > 64 ? "'\(text.prefix(61))...'" : "'\(text)'"
}

/// A JSON value described for a message: strings quoted, numbers as written, other kinds by name.
func described(_ value: JSONValue) -> String {
    switch value {
    case .string(let text): quoted(text)
    case .number(let number): number.text
    case .bool(let flag): flag ? "true" : "false"
    default: value.kindName
    }
}
