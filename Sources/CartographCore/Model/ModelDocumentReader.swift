// Reads a JSON model document (docs/model.md) into a `Model`, strictly: unknown members, wrong kinds,
// invalid names and types, and values that do not fit their attribute are each reported with a
// pointer. Checks that need the whole model (references, inheritance) are `ModelValidator`'s.
import Foundation

/// One pass over a model document. Every entity and property element becomes a model element, even
/// an invalid one, so that indices in the model match indices in the document for later pointers;
/// a model with problems is never returned to callers.
struct ModelDocumentReader {
    private(set) var problems = DocumentProblems()
    /// `identificationAttributes` as written per entity index: an output of the normalized form,
    /// accepted on input only when it matches what the annotations resolve to.
    private(set) var writtenIdentificationAttributes: [Int: [String]] = [:]

    static let documentMembers: Set = [
        "name", "version", "entities", "coreDataModel", "valueTransformers", "entityMappers",
        "dictionaryTransformers", "options", "warnings",
    ]
    static let entityMembers: Set = [
        "name", "parent", "abstract", "attributes", "relationships", "fetchIndexes", "userInfo", "identificationAttributes",
    ]
    static let attributeMembers: Set = [
        "name", "type", "optional", "default", "minValue", "maxValue", "minLength", "maxLength", "regex", "indexed", "searchable",
        "userInfo",
    ]
    static let fetchIndexMembers: Set = ["name", "elements"]
    static let fetchIndexElementMembers: Set = ["attribute", "order"]
    static let relationshipMembers: Set = [
        "name", "destination", "toMany", "ordered", "optional", "minCount", "maxCount", "inverse", "deleteRule", "userInfo",
    ]
    static let optionMembers: Set = ["identificationInference", "mapUnannotatedByName"]
    /// docs/mapping.md: the kinds of declared value transformers and the dictionary transformer operations.
    static let valueTransformerKinds = ["map", "dateFormat", "split", "join", "chain"]
    static let dictionaryTransformerOperations = ["copy", "move", "remove", "set", "default", "coalesce"]

    /// Reads `document`, whose entities are `entities` (the document's own, or those imported from
    /// its `coreDataModel`).
    mutating func readModel(_ document: JSONObject, entities entitiesValue: JSONValue?, name: String) -> Model {
        checkMembers(of: document, allowed: Self.documentMembers, at: .root)
        // `name`, `version` and `warnings` are outputs of the normalized form; accepted so that it
        // reads back. The path names the model, and warnings are recomputed.
        _ = string(document, "name", at: .root)
        _ = member(document, "warnings", at: .root, expecting: "an array") { $0.arrayValue }
        let version = member(document, "version", at: .root, expecting: "a positive integer") { (value) -> Int? in
            value.numberValue?.int64Value.flatMap { $0 >= 1 ? Int(exactly: $0) : nil }
        } ?? 1

        var entities: [Entity] = []
        let entitiesPointer = JSONPointer.root.appending("entities")
        switch entitiesValue {
        case nil, .null?:
            problems.report(entitiesPointer, "is required: a model document lists its entities (or gives coreDataModel)")
        case .array(let items)?:
            if items.count > ModelDocument.maximumEntities {
                // Reported without reading further, so that a huge document fails fast.
                problems.report(entitiesPointer, "has \(items.count) entities; a model has at most \(ModelDocument.maximumEntities)")
            } else {
                entities.reserveCapacity(items.count)
                for (index, item) in items.enumerated() {
                    entities.append(readEntity(item, at: entitiesPointer.appending(index), index: index))
                }
            }
        case let other?:
            problems.report(entitiesPointer, "expected an array of entities, got \(other.kindName)")
        }

        return Model(
            name: name, version: version, entities: entities, options: readOptions(document),
            valueTransformers: readValueTransformers(document),
            entityMappers: readEntityMappers(document),
            dictionaryTransformers: readDictionaryTransformers(document)
        )
    }

    // MARK: Entities and properties

    private mutating func readEntity(_ value: JSONValue, at pointer: JSONPointer, index: Int) -> Entity {
        guard case .object(let object) = value else {
            problems.report(pointer, "expected an entity object, got \(value.kindName)")
            return Entity(name: "")
        }
        checkMembers(of: object, allowed: Self.entityMembers, at: pointer)
        var entity = Entity(name: requiredName(object, "name", at: pointer))
        entity.parent = string(object, "parent", at: pointer)
        entity.abstract = bool(object, "abstract", at: pointer) ?? false
        entity.userInfo = userInfo(object, at: pointer)
        if let written = member(object, "identificationAttributes", at: pointer, expecting: "an array of attribute names", { value in
            value.arrayValue.flatMap { items in
                let names = items.compactMap(\.stringValue)
                return names.count == items.count ? names : nil
            }
        }) {
            writtenIdentificationAttributes[index] = written
        }

        let attributes = array(object, "attributes", at: pointer)
        let relationships = array(object, "relationships", at: pointer)
        guard attributes.count + relationships.count <= ModelDocument.maximumPropertiesPerEntity else {
            problems.report(
                pointer,
                "has \(attributes.count + relationships.count) properties; an entity has at most \(ModelDocument.maximumPropertiesPerEntity) attributes and relationships together"
            )
            return entity
        }
        let attributesPointer = pointer.appending("attributes")
        entity.attributes = attributes.enumerated().map { readAttribute($1, at: attributesPointer.appending($0)) }
        let relationshipsPointer = pointer.appending("relationships")
        entity.relationships = relationships.enumerated().map { readRelationship($1, at: relationshipsPointer.appending($0)) }
        let fetchIndexesPointer = pointer.appending("fetchIndexes")
        entity.fetchIndexes = array(object, "fetchIndexes", at: pointer).enumerated().map { readFetchIndex($1, at: fetchIndexesPointer.appending($0)) }
        return entity
    }

    /// `{"name": "byDate", "elements": ["publishedAt", {"attribute": "viewCount", "order": "descending"}]}`
    /// (R-M7); whether each element names an attribute of the entity is `ModelValidator`'s.
    private mutating func readFetchIndex(_ value: JSONValue, at pointer: JSONPointer) -> FetchIndex {
        guard case .object(let object) = value else {
            problems.report(pointer, "expected a fetch index object, got \(value.kindName)")
            return FetchIndex(name: "", elements: [])
        }
        checkMembers(of: object, allowed: Self.fetchIndexMembers, at: pointer)
        let name = requiredName(object, "name", at: pointer)
        let items = array(object, "elements", at: pointer)
        let elementsPointer = pointer.appending("elements")
        if items.isEmpty, object["elements"]?.arrayValue != nil || object["elements"] == nil {
            problems.report(elementsPointer, "a fetch index needs at least one element (an attribute name)")
        }
        let elements = items.enumerated().map { (index, item) -> FetchIndex.Element in
            let elementPointer = elementsPointer.appending(index)
            switch item {
            case .string(let attribute):
                return FetchIndex.Element(attribute: attribute)
            case .object(let element):
                checkMembers(of: element, allowed: Self.fetchIndexElementMembers, at: elementPointer)
                let attribute = requiredString(element, "attribute", at: elementPointer)
                let order = string(element, "order", at: elementPointer) ?? "ascending"
                if order != "ascending", order != "descending" {
                    problems.report(elementPointer.appending("order"), "expected \"ascending\" or \"descending\", got \(quoted(order))")
                }
                return FetchIndex.Element(attribute: attribute, descending: order == "descending")
            default:
                problems.report(elementPointer, "expected an attribute name or {\"attribute\", \"order\"}, got \(item.kindName)")
                return FetchIndex.Element(attribute: "")
            }
        }
        return FetchIndex(name: name, elements: elements)
    }

    private mutating func readAttribute(_ value: JSONValue, at pointer: JSONPointer) -> Attribute {
        guard case .object(let object) = value else {
            problems.report(pointer, "expected an attribute object, got \(value.kindName)")
            return Attribute(name: "", type: .transformable)
        }
        checkMembers(of: object, allowed: Self.attributeMembers, at: pointer)
        let name = requiredName(object, "name", at: pointer)
        let type = attributeType(object, at: pointer)
        // An attribute without a valid type stands in as transformable (which accepts any value), so
        // that no further problem is reported against a type the user did not mean.
        var attribute = Attribute(name: name, type: type ?? .transformable)
        attribute.optional = bool(object, "optional", at: pointer) ?? true
        attribute.userInfo = userInfo(object, at: pointer)
        attribute.regex = string(object, "regex", at: pointer)
        attribute.indexed = bool(object, "indexed", at: pointer) ?? false
        attribute.searchable = bool(object, "searchable", at: pointer) ?? false
        if attribute.searchable, let type, type != .string {
            problems.report(pointer.appending("searchable"), "only string attributes are searchable (a full-text index of their words); this one is \(type.rawValue)")
        }
        attribute.minLength = count(object, "minLength", at: pointer)
        attribute.maxLength = count(object, "maxLength", at: pointer)
        attribute.defaultValue = object["default"].flatMap { $0.isNull ? nil : $0 }
        attribute.minValue = object["minValue"].flatMap { $0.isNull ? nil : $0 }
        attribute.maxValue = object["maxValue"].flatMap { $0.isNull ? nil : $0 }
        if let type { checkValues(of: attribute, type: type, at: pointer) }
        return attribute
    }

    private mutating func attributeType(_ object: JSONObject, at pointer: JSONPointer) -> AttributeType? {
        let typeName = requiredString(object, "type", at: pointer)
        // Missing, or not a string: already reported.
        guard object["type"]?.stringValue != nil else { return nil }
        guard let type = AttributeType(parsing: typeName) else {
            let known = AttributeType.allCases.map(\.rawValue).joined(separator: ", ")
            problems.report(pointer.appending("type"), "unknown attribute type \(quoted(typeName)); expected one of \(known) (or a Core Data name such as 'Integer 64')")
            return nil
        }
        return type
    }

    /// The checks of one attribute that need only its type (R-M1): default and bounds coerce to the
    /// type, bounds apply to the type, minimum <= maximum, the regex compiles.
    private mutating func checkValues(of attribute: Attribute, type: AttributeType, at pointer: JSONPointer) {
        if let value = attribute.defaultValue { _ = coerce(value, to: type, at: pointer.appending("default")) }

        var bounds: [AttributeValue?] = []
        for (key, value) in [("minValue", attribute.minValue), ("maxValue", attribute.maxValue)] {
            guard let value else { bounds.append(nil); continue }
            guard type.hasValueBounds else {
                problems.report(pointer.appending(key), "applies to numeric and date attributes, not \(type)\(type.hasLengthBounds ? "; use minLength/maxLength" : "")")
                bounds.append(nil)
                continue
            }
            bounds.append(coerce(value, to: type, at: pointer.appending(key)))
        }
        if let minimum = bounds[0], let maximum = bounds[1], maximum.isOrdered(before: minimum) == true {
            problems.report(pointer.appending("minValue"), "is greater than maxValue")
        }

        for (key, value) in [("minLength", attribute.minLength), ("maxLength", attribute.maxLength)] where value != nil && !type.hasLengthBounds {
            problems.report(pointer.appending(key), "applies to string and binary attributes, not \(type)\(type.hasValueBounds ? "; use minValue/maxValue" : "")")
        }
        if let minimum = attribute.minLength, let maximum = attribute.maxLength, minimum > maximum {
            problems.report(pointer.appending("minLength"), "is greater than maxLength (\(minimum) > \(maximum))")
        }

        if let regex = attribute.regex {
            if type != .string {
                problems.report(pointer.appending("regex"), "applies to string attributes, not \(type)")
            } else if (try? WholeStringRegex(regex)) == nil {
                problems.report(pointer.appending("regex"), "is not a valid regular expression")
            }
        }
    }

    private mutating func coerce(_ value: JSONValue, to type: AttributeType, at pointer: JSONPointer) -> AttributeValue? {
        do {
            return try AttributeValue.coerce(value, to: type)
        } catch {
            problems.report(pointer, "is not a valid \(type): \(error.message)")
            return nil
        }
    }

    private mutating func readRelationship(_ value: JSONValue, at pointer: JSONPointer) -> Relationship {
        guard case .object(let object) = value else {
            problems.report(pointer, "expected a relationship object, got \(value.kindName)")
            return Relationship(name: "", destination: "")
        }
        if object["indexed"] != nil {
            // Checked before the member list, which would only call it unknown.
            problems.report(pointer.appending("indexed"), "only attributes are indexed by declaration; a relationship's foreign key or join table is indexed already")
        }
        checkMembers(of: object, allowed: Self.relationshipMembers.union(["indexed"]), at: pointer)
        var relationship = Relationship(name: requiredName(object, "name", at: pointer), destination: requiredString(object, "destination", at: pointer))
        relationship.toMany = bool(object, "toMany", at: pointer) ?? false
        relationship.ordered = bool(object, "ordered", at: pointer) ?? false
        relationship.optional = bool(object, "optional", at: pointer) ?? true
        relationship.minCount = count(object, "minCount", at: pointer)
        relationship.maxCount = count(object, "maxCount", at: pointer)
        relationship.inverse = string(object, "inverse", at: pointer)
        relationship.userInfo = userInfo(object, at: pointer)
        if let ruleName = string(object, "deleteRule", at: pointer) {
            if let rule = DeleteRule(parsing: ruleName) {
                relationship.deleteRule = rule
            } else {
                let known = DeleteRule.allCases.map(\.rawValue).joined(separator: ", ")
                problems.report(pointer.appending("deleteRule"), "unknown delete rule \(quoted(ruleName)); expected one of \(known)")
            }
        }

        if !relationship.toMany {
            if relationship.ordered { problems.report(pointer.appending("ordered"), "applies to to-many relationships only") }
            for key in ["minCount", "maxCount"] where object[key].map({ !$0.isNull }) == true {
                problems.report(pointer.appending(key), "applies to to-many relationships only (set toMany to true)")
            }
        } else if let minimum = relationship.minCount, let maximum = relationship.maxCount, minimum > maximum {
            problems.report(pointer.appending("minCount"), "is greater than maxCount (\(minimum) > \(maximum))")
        }
        return relationship
    }

    // MARK: Declarative sections

    private mutating func readOptions(_ document: JSONObject) -> ModelOptions {
        let pointer = JSONPointer.root.appending("options")
        var options = ModelOptions()
        guard let object = member(document, "options", at: .root, expecting: "an object", { $0.objectValue }) else { return options }
        checkMembers(of: object, allowed: Self.optionMembers, at: pointer)
        options.identificationInference = bool(object, "identificationInference", at: pointer) ?? options.identificationInference
        options.mapUnannotatedByName = bool(object, "mapUnannotatedByName", at: pointer) ?? options.mapUnannotatedByName
        return options
    }

    /// `{"GenderCode": {"type": "map", ...}}`: each declaration names a known kind, or is the name of
    /// another transformer (an alias: `"GrootTests.Transformer": "StringToInteger"`). The kinds' own
    /// members are the mapping engine's to interpret.
    private mutating func readValueTransformers(_ document: JSONObject) -> JSONObject {
        readSection(document, "valueTransformers", declaration: "a value transformer object or the name of a transformer") { reader, declaration, pointer in
            if let alias = declaration.stringValue { return !alias.isEmpty }
            guard let object = declaration.objectValue else { return false }
            guard let kind = reader.requiredString(object, "type", at: pointer).nonEmpty else { return true }
            if !Self.valueTransformerKinds.contains(kind) {
                reader.problems.report(pointer.appending("type"), "unknown value transformer type \(quoted(kind)); expected one of \(Self.valueTransformerKinds.joined(separator: ", "))")
            }
            return true
        }
    }

    /// `{"MessageMapper": {"keyPath": "type", "map": {"text": "TextMessage"}}}`; the validator checks
    /// that the mapped entities exist.
    private mutating func readEntityMappers(_ document: JSONObject) -> JSONObject {
        readSection(document, "entityMappers", declaration: "an entity mapper object") { reader, declaration, pointer in
            guard let object = declaration.objectValue else { return false }
            _ = reader.requiredString(object, "keyPath", at: pointer)
            if let map = reader.member(object, "map", at: pointer, expecting: "an object of entity names", { $0.objectValue }) {
                for (key, value) in map where value.stringValue == nil {
                    reader.problems.report(pointer.appending("map").appending(key), "expected an entity name, got \(value.kindName)")
                }
            } else if object["map"] == nil {
                reader.problems.report(pointer.appending("map"), "is required")
            }
            return true
        }
    }

    /// `{"LegacyIds": [{"op": "copy", "from": "legacy_id", "to": "id"}]}`: each step names a known operation.
    private mutating func readDictionaryTransformers(_ document: JSONObject) -> JSONObject {
        readSection(document, "dictionaryTransformers", declaration: "an array of operations") { reader, declaration, pointer in
            guard let steps = declaration.arrayValue else { return false }
            for (index, step) in steps.enumerated() {
                let stepPointer = pointer.appending(index)
                guard let object = step.objectValue else {
                    reader.problems.report(stepPointer, "expected an operation object, got \(step.kindName)")
                    continue
                }
                guard let operation = reader.requiredString(object, "op", at: stepPointer).nonEmpty else { continue }
                if !Self.dictionaryTransformerOperations.contains(operation) {
                    reader.problems.report(stepPointer.appending("op"), "unknown operation \(quoted(operation)); expected one of \(Self.dictionaryTransformerOperations.joined(separator: ", "))")
                }
            }
            return true
        }
    }

    /// A section that is an object of named declarations; `check` returns false when a declaration
    /// is of the wrong kind.
    private mutating func readSection(
        _ document: JSONObject, _ key: String, declaration: String,
        check: (inout ModelDocumentReader, JSONValue, JSONPointer) -> Bool
    ) -> JSONObject {
        guard let section = member(document, key, at: .root, expecting: "an object", { $0.objectValue }) else { return JSONObject() }
        let pointer = JSONPointer.root.appending(key)
        for (name, value) in section {
            let declarationPointer = pointer.appending(name)
            if name.isEmpty { problems.report(declarationPointer, "a declaration needs a non-empty name") }
            if !check(&self, value, declarationPointer) {
                problems.report(declarationPointer, "expected \(declaration), got \(value.kindName)")
            }
        }
        return section
    }

    // MARK: Members

    /// Reports members not in `allowed` (strict documents catch typos) and members given twice.
    private mutating func checkMembers(of object: JSONObject, allowed: Set<String>, at pointer: JSONPointer) {
        var seen = Set<String>()
        for key in object.keys {
            if !allowed.contains(key) {
                let known = allowed.sorted().joined(separator: ", ")
                problems.report(pointer.appending(key), "unknown member \(quoted(key)); expected one of \(known)")
            } else if !seen.insert(key).inserted {
                problems.report(pointer.appending(key), "is given more than once")
            }
        }
    }

    /// The member `key` extracted by `extract`; nil when absent or null, reported when of the wrong kind.
    private mutating func member<T>(
        _ object: JSONObject, _ key: String, at pointer: JSONPointer, expecting expected: String, _ extract: (JSONValue) -> T?
    ) -> T? {
        guard let value = object[key], !value.isNull else { return nil }
        if let result = extract(value) { return result }
        problems.report(pointer.appending(key), "expected \(expected), got \(described(value))")
        return nil
    }

    private mutating func string(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> String? {
        member(object, key, at: pointer, expecting: "a string") { $0.stringValue }
    }

    private mutating func bool(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> Bool? {
        member(object, key, at: pointer, expecting: "true or false") { $0.boolValue }
    }

    /// A non-negative integer such as a length or a count.
    private mutating func count(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> Int? {
        member(object, key, at: pointer, expecting: "a non-negative integer") { (value) -> Int? in
            value.numberValue?.int64Value.flatMap { $0 >= 0 ? Int(exactly: $0) : nil }
        }
    }

    private mutating func array(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> [JSONValue] {
        member(object, key, at: pointer, expecting: "an array") { $0.arrayValue } ?? []
    }

    /// Free-form annotations: any object, kept verbatim.
    private mutating func userInfo(_ object: JSONObject, at pointer: JSONPointer) -> JSONObject {
        member(object, "userInfo", at: pointer, expecting: "an object") { $0.objectValue } ?? JSONObject()
    }

    /// A string that must be present; "" (after reporting) when it is not.
    private mutating func requiredString(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> String {
        if let value = string(object, key, at: pointer) { return value }
        if object[key] == nil || object[key] == .null { problems.report(pointer.appending(key), "is required") }
        return ""
    }

    /// An entity or property name (docs/api.md#names); an invalid one is reported but returned, so that
    /// references to it do not also read as dangling.
    private mutating func requiredName(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> String {
        let name = requiredString(object, key, at: pointer)
        if object[key]?.stringValue != nil, !Names.isPropertyName(name) {
            problems.report(
                pointer.appending(key),
                "\(quoted(name)) is not a valid name: names start with a letter, contain only letters, digits and '_', and have at most 128 characters"
            )
        }
        return name
    }
}

extension String {
    /// nil for the empty string (a required member already reported as missing).
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
