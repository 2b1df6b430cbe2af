// Which media type a list, a query or the change feed answers in (R-Q7, docs/queries.md#formats), from the
// request's Accept (RFC 9110 §12.5.1). JSON stays the default: no Accept, `*/*` and `application/*` get it.
import Foundation
import CartographCore

/// The formats of a list, a query and the change feed.
enum ResponseFormat: Sendable, CaseIterable {
    case json, csv, ndjson

    var mediaType: String {
        switch self {
        case .json: "application/json"
        case .csv: "text/csv"
        case .ndjson: "application/x-ndjson"
        }
    }

    /// The answer's Content-Type (RFC 4180's `header` parameter says the first row names the columns).
    var contentType: String {
        switch self {
        case .json: "application/json"
        case .csv: "text/csv; charset=utf-8; header=present"
        case .ndjson: "application/x-ndjson"
        }
    }

    /// The format `accept` (an Accept field value, nil when absent) takes best: each format gets the quality
    /// of the most specific range that matches it (`text/csv` over `text/*` over `*/*`); the highest quality
    /// wins, then the format named by a more specific range (so `text/csv, */*` is CSV), then JSON, CSV,
    /// NDJSON in that order. 406 when every format has quality 0.
    static func negotiated(_ accept: String?) throws(CartographError) -> ResponseFormat {
        guard let accept, accept.contains(where: { !$0.isWhitespace }) else { return .json }
        let ranges = WeightedItem.list(accept).compactMap(MediaRange.init)
        var best: (format: ResponseFormat, quality: Double, specificity: Int)?
        for format in allCases {
            guard let match = ranges.filter({ $0.matches(format.mediaType) }).max(by: { $0.specificity < $1.specificity }),
                  match.quality > 0 else { continue }
            if let current = best, (current.quality, current.specificity) >= (match.quality, match.specificity) { continue }
            best = (format, match.quality, match.specificity)
        }
        guard let best else {
            throw CartographError(.notAcceptable, "This route answers in \(allCases.map(\.mediaType).joined(separator: ", ")); "
                                  + "the request's Accept takes none of them.")
        }
        return best.format
    }
}

/// One range of an Accept field: `type/subtype`, `type/*` or `*/*`, with its quality.
private struct MediaRange {
    let type: Substring
    let subtype: Substring
    let quality: Double

    /// nil for a range that is not `type/subtype` (ignored, as RFC 9110 lets a server do).
    init?(_ item: WeightedItem) {
        let halves = item.value.split(separator: "/")
        guard halves.count == 2 else { return nil }
        (type, subtype, quality) = (halves[0], halves[1], item.quality)
    }

    /// 2 for `type/subtype`, 1 for `type/*`, 0 for `*/*`.
    var specificity: Int { type == "*" ? 0 : subtype == "*" ? 1 : 2 }

    func matches(_ mediaType: String) -> Bool {
        let halves = mediaType.split(separator: "/")
        return (type == "*" || type == halves[0]) && (subtype == "*" || subtype == halves[1])
    }
}
