// The normalized mapping document (for `GET …/mappings/{mapping}`): the document's shape with every
// default explicit and one canonical form per choice — attributes and `connectedBy` as objects,
// `from` and `entity` written out. Members that defer to the model (`identificationAttributes`,
// `identificationInference`) appear only when the document set them, so a mapping keeps following
// the model's annotations across migrations. `EntityMapping.parse` reads the result back into an
// equal mapping.
public import CartographCore

extension EntityMapping {
    /// The mapping as a normalized mapping document.
    public var json: JSONValue {
        if let reference { return ["ref": .string(reference)] }
        var document = JSONObject()
        document.append("entity", .string(entity))
        if isAnnotationReference {
            document.append("fromAnnotations", true)
            return .object(document)
        }
        if let keyPath { document.append("keyPath", .string(keyPath.description)) }
        if let dictionaryTransformer { document.append("dictionaryTransformer", .string(dictionaryTransformer)) }
        var attributesObject = JSONObject()
        for mapping in attributes {
            let target: JSONValue = mapping.transformer.map { ["to": .string(mapping.attribute), "transformer": .string($0)] }
                ?? .string(mapping.attribute)
            attributesObject.append(mapping.source.description, target)
        }
        document.append("attributes", .object(attributesObject))
        if let identificationAttributes { document.append("identificationAttributes", .array(identificationAttributes.map(JSONValue.string))) }
        if let identificationInference { document.append("identificationInference", .bool(identificationInference)) }
        if let identificationPredicate { document.append("identificationPredicate", .string(identificationPredicate.format)) }
        if let modificationAttribute { document.append("modificationAttribute", .string(modificationAttribute)) }
        document.append("assignsDefaultValueForMissingAttributes", .bool(assignsDefaultValueForMissingAttributes))
        document.append("relationships", .array(relationships.map(\.json)))
        document.append("connections", .array(connections.map(\.json)))
        if let deletionPredicate { document.append("deletionPredicate", .string(deletionPredicate.format)) }
        document.append("discardsInvalidObjectsOnInsert", .bool(discardsInvalidObjectsOnInsert))
        if contract != .evolve { document.append("contract", .string(contract.rawValue)) }
        if let deleteMissing {
            document.append("deleteMissing", ["scope": .string(deleteMissing.scope.format), "maxDeletes": .number(JSONNumber(deleteMissing.maxDeletes))])
        }
        if identityReferences { document.append("identityReferences", true) }
        if let archive { document.append("archive", ["days": .number(JSONNumber(archive.days))]) }
        if let cursor { document.append("cursor", ["attribute": .string(cursor.attribute), "scope": .array(cursor.scope.map(JSONValue.string))]) }
        if let dynamic {
            var map = JSONObject()
            for dynamicCase in dynamic.cases { map.append(dynamicCase.value, dynamicCase.mapping.json) }
            document.append("dynamic", ["keyPath": .string(dynamic.keyPath.description), "map": .object(map)])
        }
        return .object(document)
    }
}

extension RelationshipMapping {
    /// `from` is explicit: a key path, or null for the enclosing representation.
    var json: JSONValue {
        [
            "from": source.map { .string($0.description) } ?? .null,
            "to": .string(relationship),
            "assignmentPolicy": .string(assignmentPolicy.rawValue),
            "mapping": mapping.json,
        ]
    }
}

extension ConnectionDescription {
    /// Foreign keys as an object of source -> destination attributes, with `includesSubentities`
    /// explicit; key paths as written.
    var json: JSONValue {
        var object = JSONObject()
        object.append("relationship", .string(relationship))
        switch kind {
        case .foreignKey(let pairs):
            object.append("connectedBy", .object(JSONObject(pairs.map { ($0.source, .string($0.destination)) })))
        case .keyPath(let components):
            object.append("keyPath", .string(components.joined(separator: ".")))
        }
        if let sourcePredicate { object.append("sourcePredicate", .string(sourcePredicate.format)) }
        if case .foreignKey = kind {
            if let destinationPredicate { object.append("destinationPredicate", .string(destinationPredicate.format)) }
            object.append("includesSubentities", .bool(includesSubentities))
        }
        return .object(object)
    }
}
