// The API's document of an object, `shape=model` (R-Q4, docs/queries.md): `_id`, `_entity`, `_stub`
// for a stub, the attributes by name in property order, then each relationship as its destination's key
// (to-one) or an array of keys (to-many), or as the destinations themselves where `include` embeds them.
// A page's objects are written from their rows (`ModelShapeRenderer+Rows.swift`), others from their
// values: both write the same bytes for the same object (RowRendererTests). Written straight into
// bytes, as every object is, with no document of `JSONValue`s in between.
public import CartographCore
public import CartographStore

/// Writes objects read from a store as the API's `shape=model` documents.
public struct ModelShapeRenderer: ObjectRenderer, Sendable {
    public init() {}

    public func writeToOne(_ name: String, key: JSONValue?, into document: inout [UInt8]) {
        Self.writeToOne(name, key: key, into: &document)
    }

    public func writeToMany(_ name: String, keys: [JSONValue], into document: inout [UInt8]) {
        Self.writeToMany(name, keys: keys, into: &document)
    }

    public func close(_ document: inout [UInt8]) { document.append(UInt8(ascii: "}")) }

    public func render(_ object: ObjectValues) -> RenderedJSON {
        var document: [UInt8] = []
        Self.write(object, into: &document)
        return RenderedJSON(bytes: document)
    }

    /// Writes `object`'s document.
    static func write(_ object: ObjectValues, into document: inout [UInt8]) {
        document.append(contentsOf: #"{"_id":"#.utf8)
        JSONWriter.writeInteger(object.id, into: &document)
        document.append(contentsOf: #","_entity":"#.utf8)
        JSONWriter.writeString(object.entity, into: &document)
        if object.isStub { document.append(contentsOf: #","_stub":true"#.utf8) }
        for attribute in object.attributes {
            writeMemberName(attribute.name, into: &document)
            JSONWriter.write(attribute.value?.jsonValue ?? .null, into: &document)
        }
        for relationship in object.relationships {
            switch relationship.destinations {
            case .keys(let keys):
                if relationship.toMany {
                    writeToMany(relationship.name, keys: keys, into: &document)
                } else {
                    writeToOne(relationship.name, key: keys.first, into: &document)
                }
            case .objects(let objects):
                writeMemberName(relationship.name, into: &document)
                if relationship.toMany {
                    document.append(UInt8(ascii: "["))
                    for (index, destination) in objects.enumerated() {
                        if index > 0 { document.append(UInt8(ascii: ",")) }
                        write(destination, into: &document)
                    }
                    document.append(UInt8(ascii: "]"))
                } else if let destination = objects.first {
                    write(destination, into: &document)
                } else {
                    document.append(contentsOf: "null".utf8)
                }
            }
        }
        document.append(UInt8(ascii: "}"))
    }

    private static func writeToOne(_ name: String, key: JSONValue?, into document: inout [UInt8]) {
        writeMemberName(name, into: &document)
        JSONWriter.write(key ?? .null, into: &document)
    }

    private static func writeToMany(_ name: String, keys: [JSONValue], into document: inout [UInt8]) {
        writeMemberName(name, into: &document)
        document.append(UInt8(ascii: "["))
        for (index, key) in keys.enumerated() {
            if index > 0 { document.append(UInt8(ascii: ",")) }
            JSONWriter.write(key, into: &document)
        }
        document.append(UInt8(ascii: "]"))
    }

    /// `,"name":` after a member of an open document.
    private static func writeMemberName(_ name: String, into document: inout [UInt8]) {
        document.append(UInt8(ascii: ","))
        JSONWriter.writeString(name, into: &document)
        document.append(UInt8(ascii: ":"))
    }
}
