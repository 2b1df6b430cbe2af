// The API's document of an object, `shape=model` (R-Q4, docs/queries.md): `_id`, `_entity`, `_stub`
// for a stub, the attributes by name in property order, then each relationship as its destination's key
// (to-one) or an array of keys (to-many), or as the destinations themselves where `include` embeds them.
// A page's objects are written from their rows (`ModelShapeRenderer+Rows.swift`), others from their
// values: both write the same bytes for the same object (RowRendererTests).
public import CartographCore
public import CartographStore

/// Writes objects read from a store as the API's `shape=model` documents.
public struct ModelShapeRenderer: ObjectRenderer {
    public init() {}

    public func writeToOne(_ name: String, key: JSONValue?, into document: inout [UInt8]) {
        Self.writeMemberName(name, into: &document)
        JSONWriter.write(key ?? .null, into: &document)
    }

    public func writeToMany(_ name: String, keys: [JSONValue], into document: inout [UInt8]) {
        Self.writeMemberName(name, into: &document)
        document.append(UInt8(ascii: "["))
        for (index, key) in keys.enumerated() {
            if index > 0 { document.append(UInt8(ascii: ",")) }
            JSONWriter.write(key, into: &document)
        }
        document.append(UInt8(ascii: "]"))
    }

    public func close(_ document: inout [UInt8]) { document.append(UInt8(ascii: "}")) }

    public func render(_ object: ObjectValues) -> RenderedJSON { RenderedJSON(Self.json(of: object)) }

    /// `object`'s document.
    static func json(of object: ObjectValues) -> JSONValue {
        var document = JSONObject()
        document.append("_id", .number(JSONNumber(object.id)))
        document.append("_entity", .string(object.entity))
        if object.isStub { document.append("_stub", .bool(true)) }
        for attribute in object.attributes { document.append(attribute.name, attribute.value?.jsonValue ?? .null) }
        for relationship in object.relationships {
            let destinations: [JSONValue]
            switch relationship.destinations {
            case .keys(let keys): destinations = keys
            case .objects(let objects): destinations = objects.map(json(of:))
            }
            document.append(relationship.name, relationship.toMany ? .array(destinations) : (destinations.first ?? .null))
        }
        return .object(document)
    }

    /// `,"name":` after a member of an open document.
    private static func writeMemberName(_ name: String, into document: inout [UInt8]) {
        document.append(UInt8(ascii: ","))
        JSONWriter.writeString(name, into: &document)
        document.append(UInt8(ascii: ":"))
    }
}
