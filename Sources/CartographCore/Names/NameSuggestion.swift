// What an error about an unknown name adds, so a typo is fixed from the message alone: the closest
// valid name, and the valid names (a long list is cut short).

/// The "did you mean" part of an unknown-name message.
public enum NameSuggestion {
    /// At most this many names are listed.
    public static let maximumListed = 20

    /// `; did you mean 'Article'? (entities: Article, Author)` for `name` among `candidates`; `kind` is
    /// the plural that heads the list. Empty when there are no candidates. `name` itself is neither
    /// suggested nor listed: a name that was not found is no answer to its own lookup (a store file
    /// without a model once answered "No model 'ledger'; did you mean 'ledger'? (models: ledger)").
    public static func hint(for name: String, among candidates: [String], kind: String) -> String {
        let others = candidates.filter { $0 != name }
        guard !others.isEmpty else { return "" }
        let suggestion = closest(to: name, among: others.sorted()).map { "; did you mean '\($0)'?" } ?? ";"
        return "\(suggestion) \(list(others, kind: kind))"
    }

    /// `(entities: Article, Author)`: the names sorted, at most `maximumListed` of them.
    public static func list(_ names: [String], kind: String) -> String {
        let sorted = names.sorted()
        var list = sorted.prefix(maximumListed).joined(separator: ", ")
        if sorted.count > maximumListed { list += " and \(sorted.count - maximumListed) more" }
        return "(\(kind): \(list))"
    }

    /// The candidate nearest to `name` when it is near enough to be a typo of it: the same but for
    /// case, or within a third of its length in edits (at least one). Names longer than any valid
    /// name (128 characters) are no typo, and are not compared (the cost grows with the length).
    public static func closest(to name: String, among candidates: [String]) -> String? {
        guard name.count <= 128 else { return nil }
        let lowered = Array(name.lowercased())
        let allowed = max(1, lowered.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, Array(candidate.lowercased()))
            if distance <= allowed, distance < best?.distance ?? .max { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Edits between `a` and `b`: insertions, deletions, substitutions and swaps of adjacent
    /// characters (`titel` is one edit from `title`).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}
