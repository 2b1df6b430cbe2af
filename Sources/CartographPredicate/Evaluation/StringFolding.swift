// `[c]` and `[d]`: one folding function for the evaluator and for SQL (`cartograph_fold`), so both
// compare the same strings.
import Foundation

/// Case and diacritic folding as Foundation does it, then canonical composition (so `é` written
/// precomposed or as `e` + U+0301 folds the same).
public enum StringFolding {
    /// `text` folded for `options`; unchanged when `options` is empty.
    public static func fold(_ text: String, _ options: ComparisonOptions) -> String {
        guard !options.isEmpty else { return text }
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII has no diacritics, and its case folding is lowercasing: skip Foundation.
            guard options.contains(.caseInsensitive), text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
            return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        }
        var foundationOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foundationOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foundationOptions.insert(.diacriticInsensitive) }
        return text.folding(options: foundationOptions, locale: nil).precomposedStringWithCanonicalMapping
    }
}
