// Which attributes identify an entity's objects when the mapping names none (R-I1): Groot's
// `identityAttributes` (sub-entities extend the parent's), RestKit's `RKEntityIdentificationAttributes`
// (the nearest entity's wins), then inference from names.

import Foundation
extension Model {
    /// The identification attributes of `entity` from its annotations or, when `inference` is on,
    /// from its attribute names (at most one attribute). Empty when nothing identifies it (R-I4).
    public func identificationAttributes(of entity: String, inference: Bool? = nil) -> [String] {
        let lineage = lineage(of: entity)
        // Groot: each entity's list extends its ancestors' (root first).
        let groot = lineage.reversed().flatMap { Self.nameList($0.userInfo["identityAttributes"] ?? $0.userInfo["identityAttribute"]) }
        if !groot.isEmpty { return Self.uniqued(groot) }
        // RestKit: the nearest entity that declares the key.
        for ancestor in lineage {
            let names = Self.nameList(ancestor.userInfo["RKEntityIdentificationAttributes"])
            if !names.isEmpty { return names }
        }
        guard inference ?? options.identificationInference else { return [] }
        return inferredIdentificationAttribute(of: entity).map { [$0] } ?? []
    }

    /// RestKit's inference: `articleID` / `article_id` for `Article`, else the first of
    /// `identifier`, `id`, `ID`, `URL`, `url` that the entity has.
    public func inferredIdentificationAttribute(of entity: String) -> String? {
        let names = Set(allAttributes(of: entity).map(\.name))
        let llama = entity.prefix(1).lowercased() + entity.dropFirst()
        for candidate in [llama + "ID", Self.snakeCase(entity) + "_id", "identifier", "id", "ID", "URL", "url"]
        where names.contains(candidate) {
            return candidate
        }
        return nil
    }

    /// `ApprovedComment` -> `approved_comment`; a run of capitals is one word, as RestKit underscores
    /// it (`ArcticMonkeyURL` -> `arctic_monkey_url`, `URLString` -> `url_string`).
    static func snakeCase(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) { result += "_" }
            }
            result += character.lowercased()
        }
        return result
    }

    /// A comma-separated string or an array of strings, trimmed, empties dropped.
    static func nameList(_ value: JSONValue?) -> [String] {
        switch value {
        case .string(let text): text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case .array(let items): items.compactMap { $0.stringValue?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        default: []
        }
    }

    private static func uniqued(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}
