// R-P7's re-check of the identities a read snapshot found no object for (docs/mapping.md, "Re-loads"):
// the identification values the commits after that snapshot wrote, as digests, so that the write
// transaction looks up again only the identities one of them may have given to an object, not all.
public import CartographCore
import CartographPredicate

/// Digests of the identification values (by root entity and attribute) that commits wrote: an object
/// inserted writes every tracked attribute of its entity, an update the tracked ones it changed.
/// An identity none of whose values was written cannot have been given to an object since: the object
/// would have had to be inserted, or have one of those attributes written.
public struct WrittenIdentities: Sendable {
    /// The attributes whose writes were recorded, by root entity: an identity with another attribute
    /// can tell nothing (an object may have gained it unrecorded).
    public let tracked: [String: Set<String>]
    public let digests: Set<Int>

    public init(tracked: [String: Set<String>], digests: Set<Int>) {
        self.tracked = tracked
        self.digests = digests
    }

    /// Whether an object of the hierarchy under `root` may have been given `identity` (values of
    /// `attributes`, in order, looked up with an identification predicate when `predicated`) by the commits
    /// `written` tells of (nil: unknown ones): true unless every attribute is tracked and none of the values
    /// was written. A predicate may have come to hold of an object whose identification values were not.
    public static func mayHaveGiven(_ written: WrittenIdentities?, root: String, attributes: [String], identity: [AttributeValue],
                                    predicated: Bool) -> Bool {
        guard let written, !predicated else { return true }
        return written.mayHaveGiven(root: root, attributes: attributes, identity: identity)
    }

    private func mayHaveGiven(root: String, attributes: [String], identity: [AttributeValue]) -> Bool {
        guard let tracked = tracked[root] else { return true }
        for (attribute, value) in zip(attributes, identity) {
            if !tracked.contains(attribute) || digests.contains(Self.digest(root: root, attribute: attribute, value: value)) { return true }
        }
        return false
    }

    /// The digest of `attribute` holding `value` (nil: none) in `root`'s hierarchy, as the store compares
    /// it: by stored form, a text by its bytes, a real number that is an integer as that integer (SQLite
    /// finds `1` and `1.0` equal). Values the store finds equal have equal digests; the converse may fail,
    /// which only costs a lookup.
    public static func digest(root: String, attribute: String, value: AttributeValue?) -> Int {
        var hasher = Hasher()
        hasher.combine(root)
        hasher.combine(attribute)
        switch value?.storedForm {
        case nil, .null?:
            hasher.combine(0 as UInt8)
        case .integer(let integer)?:
            hasher.combine(1 as UInt8)
            hasher.combine(integer)
        case .real(let real)?:
            if let integer = Int64(exactly: real) {
                hasher.combine(1 as UInt8)
                hasher.combine(integer)
            } else {
                hasher.combine(2 as UInt8)
                hasher.combine(real)
            }
        case .text(let text)?:
            hasher.combine(3 as UInt8)
            var text = text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .blob(let bytes)?:
            hasher.combine(4 as UInt8)
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
        return hasher.finalize()
    }
}
