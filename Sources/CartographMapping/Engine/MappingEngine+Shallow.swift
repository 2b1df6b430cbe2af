// Shallow payloads (issue 14, re-load speed): when R-P7's read-ahead applies to a payload's top-level
// array, most of a re-load is objects the store already holds at a modification value at least as new.
// Such a payload is read in one pass that checks the whole document but builds, for each top-level
// object, only the members its identity and modification value come from; the objects the read-ahead
// does not find current are then parsed whole from their offsets. The rest is never built.
import CartographCore

/// A payload read shallowly by `MappingEngine.shallowPlan`.
public struct ShallowPayload: Sendable {
    /// The request body (a valid JSON document).
    public let body: [UInt8]
    let reader: JSONReader
    /// The top-level array's elements: offsets, and objects with only the read-ahead's members.
    let elements: [JSONElement]
    /// The pointer of the array (`/articles`); an element's is this plus `/<index>`.
    let pointer: String
    /// The mapping the plan was made for: a transaction under another model maps the whole payload.
    public let mapping: EntityMapping

    /// The whole element `index`.
    func element(_ index: Int) throws(CartographError) -> JSONValue {
        do { return try reader.value(in: body, at: elements[index].offset) } catch { throw CartographError(error) }
    }
}

extension MappingEngine {
    /// Whether `body` can be read shallowly with `mapping`: the mapping reads ahead (R-P7: a
    /// `modificationAttribute` and identification attributes, no `dynamic` or dictionary transformer);
    /// its identity and modification values come from the representation (not `@metadata`, `@parent` or
    /// `@root`); no key path of the top-level mapping reads `@parent` (the array's container is not
    /// built) and none anywhere reads `@root`; and the payload has an array at the mapping's key path
    /// (or is one, without a key path). Otherwise nil. A syntax error is thrown as parsing would throw it.
    func shallowPlan(body: [UInt8], reader: JSONReader, mapping base: EntityMapping) throws(JSONSyntaxError) -> ShallowPayload? {
        let mapping = resolve(base)
        guard let (identity, modification) = mapping.readAheadAttributes, body.count > 0 else { return nil }
        let needed = Set(identity + [modification])
        let sources = mapping.attributes.filter { needed.contains($0.attribute) }.map(\.source)
        guard sources.allSatisfy({ $0.root == .representation && !$0.components.isEmpty }),
              mapping.attributes.allSatisfy({ $0.source.root != .parent }),
              mapping.relationships.allSatisfy({ $0.source?.root != .parent }),
              !readsRoot(mapping) else { return nil }
        let path = mapping.keyPath?.components ?? []
        guard let elements = try reader.shallowElements(in: body, at: path, members: Set(sources.map { $0.components[0] })) else { return nil }
        return ShallowPayload(body: body, reader: reader, elements: elements,
                              pointer: path.map { "/" + MappingRun.escape($0) }.joined(), mapping: base)
    }

    /// Whether a key path of `mapping`, or of a mapping nested in it, reads `@root`.
    func readsRoot(_ base: EntityMapping) -> Bool {
        reachableMappings(from: base).contains { mapping in
            mapping.attributes.contains { $0.source.root == .root } || mapping.dynamic?.keyPath.root == .root
                || mapping.relationships.contains { $0.source?.root == .root }
        }
    }
}
