// The normalized model (docs/model.md#the-normalized-model): the model document's shape with every default explicit,
// canonical type and delete rule names, and the outputs `name`, `version`, `warnings` and each
// entity's resolved `identificationAttributes`. `ModelDocument.parse(json:)` reads it back into an
// equal model, so a client may GET a model, edit it and PUT it again.

extension Model {
    /// The normalized JSON form of the model, as `GET …/models/{model}` returns it.
    public var normalizedJSON: JSONValue {
        var document = JSONObject()
        document.append("name", .string(name))
        document.append("version", .number(JSONNumber(version)))
        document.append("entities", .array(entities.map(normalizedJSON(of:))))
        document.append("valueTransformers", .object(valueTransformers))
        document.append("entityMappers", .object(entityMappers))
        document.append("dictionaryTransformers", .object(dictionaryTransformers))
        document.append("options", [
            "identificationInference": .bool(options.identificationInference),
            "mapUnannotatedByName": .bool(options.mapUnannotatedByName),
        ])
        document.append("warnings", .array(warnings.map(JSONValue.string)))
        return .object(document)
    }

    private func normalizedJSON(of entity: Entity) -> JSONValue {
        var object = JSONObject()
        object.append("name", .string(entity.name))
        object.append("parent", entity.parent.map(JSONValue.string) ?? .null)
        object.append("abstract", .bool(entity.abstract))
        object.append("attributes", .array(entity.attributes.map(\.normalizedJSON)))
        object.append("relationships", .array(entity.relationships.map(\.normalizedJSON)))
        object.append("fetchIndexes", .array(entity.fetchIndexes.map(\.normalizedJSON)))
        object.append("userInfo", .object(entity.userInfo))
        object.append("identificationAttributes", .array(identificationAttributes(of: entity.name).map(JSONValue.string)))
        return .object(object)
    }
}

extension Attribute {
    /// The attribute in normalized form; members without a value (`default`, bounds, `regex`) are omitted.
    var normalizedJSON: JSONValue {
        var object = JSONObject()
        object.append("name", .string(name))
        object.append("type", .string(type.rawValue))
        object.append("optional", .bool(optional))
        let optionalMembers: [(String, JSONValue?)] = [
            ("default", defaultValue), ("minValue", minValue), ("maxValue", maxValue),
            ("minLength", minLength.map { .number(JSONNumber($0)) }), ("maxLength", maxLength.map { .number(JSONNumber($0)) }),
            ("regex", regex.map(JSONValue.string)),
        ]
        for case let (key, value?) in optionalMembers { object.append(key, value) }
        object.append("indexed", .bool(indexed))
        // Written only when true, so the normalized text of a model without search stays what it was.
        if searchable { object.append("searchable", true) }
        object.append("userInfo", .object(userInfo))
        return .object(object)
    }
}

extension FetchIndex {
    /// The fetch index in normalized form: every element as `{"attribute", "order"}`.
    var normalizedJSON: JSONValue {
        .object(JSONObject([
            ("name", .string(name)),
            ("elements", .array(elements.map { .object(JSONObject([("attribute", .string($0.attribute)), ("order", .string($0.descending ? "descending" : "ascending"))])) })),
        ]))
    }
}

extension Relationship {
    /// The relationship in normalized form; `inverse` is explicit (null when none), counts only when set.
    var normalizedJSON: JSONValue {
        var object = JSONObject()
        object.append("name", .string(name))
        object.append("destination", .string(destination))
        object.append("toMany", .bool(toMany))
        object.append("ordered", .bool(ordered))
        object.append("optional", .bool(optional))
        if let minCount { object.append("minCount", .number(JSONNumber(minCount))) }
        if let maxCount { object.append("maxCount", .number(JSONNumber(maxCount))) }
        object.append("inverse", inverse.map(JSONValue.string) ?? .null)
        object.append("deleteRule", .string(deleteRule.rawValue))
        object.append("userInfo", .object(userInfo))
        return .object(object)
    }
}
