// A field whose members carry quality values (RFC 9110 §12.4.2): Accept's media ranges and
// Accept-Encoding's codings are both read through it.
import Foundation

/// One member of a weighted list: `gzip;q=0.5`, `text/*;q=0`.
struct WeightedItem {
    /// The member without its parameters, lowercased.
    let value: String
    /// Its `q` parameter; 1 when it has none, or one that is not a number.
    let quality: Double

    /// nil for an empty member.
    init?(_ text: Substring) {
        let parts = text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let value = parts.first, !value.isEmpty else { return nil }
        self.value = value
        quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
    }

    /// The members of a field value, in order.
    static func list(_ field: String) -> [WeightedItem] { field.split(separator: ",").compactMap(WeightedItem.init) }
}
