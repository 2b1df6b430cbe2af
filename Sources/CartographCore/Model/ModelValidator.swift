// Whole-model validation (R-M5, docs/model.md#validation): duplicate names, dangling parents, destinations and
// inverses, inverses that do not name each other, inheritance cycles, properties that clash with
// inherited ones, identification annotations naming missing attributes, entity mappers naming
// missing entities, names the store's SQLite tables and columns cannot hold (names that differ only in
// case, entities named `sqlite_…`); and the warnings for annotations naming undeclared transformers or mappers.
// Every check is linear in the model's size (up to 1,000 × 1,000 properties), with lookups by
// index rather than `Model`'s name scans.

/// Checks a model read by `ModelDocumentReader`, whose entity and property indices are the document's.
struct ModelValidator {
    /// docs/mapping.md#built-in: value transformers every model has without declaring them.
    static let builtInValueTransformers: Set = [
        "StringToInteger", "StringToDecimal", "StringToDouble", "StringToBool", "ISO8601ToDate", "UnixSecondsToDate",
        "UnixMillisecondsToDate", "StringToURL", "StringToUUID", "Trim", "Lowercase", "Uppercase", "JSONString",
    ]
    /// At most this many warnings are listed (as for problems).
    static let listedWarningLimit = DocumentProblems.listedLimit

    private let model: Model
    /// The index of each entity name's first declaration.
    private var indexByName: [String: Int] = [:]
    /// Each entity's parent index; nil for roots, dangling parents and entities on a cycle, so that
    /// walking up always ends.
    private var parentIndex: [Int?] = []
    /// Each entity's own relationships by name (first declaration).
    private var relationshipsByName: [[String: Relationship]] = []
    /// Each entity's own attribute names.
    private var attributeNames: [Set<String>] = []

    private init(model: Model) { self.model = model }

    /// Reports the model's problems into `problems` and returns its warnings.
    static func validate(_ model: Model, problems: inout DocumentProblems) -> [String] {
        var validator = ModelValidator(model: model)
        validator.indexEntities(&problems)
        validator.resolveParents(&problems)
        validator.checkPropertyNames(&problems)
        validator.checkRelationships(&problems)
        validator.checkFetchIndexes(&problems)
        validator.checkIdentificationAnnotations(&problems)
        validator.checkEntityMappers(&problems)
        return validator.warnings()
    }

    private static func entityPointer(_ index: Int) -> JSONPointer { JSONPointer.root.appending("entities").appending(index) }

    /// Entities become SQLite tables and their properties columns, whose names SQLite compares ignoring
    /// (ASCII) case: two names that differ only in case would be one table or column.
    private static func folded(_ name: String) -> String { name.lowercased() }
    private static let storeNamesIgnoreCase = "the store's table and column names ignore case"

    // MARK: Entities and inheritance

    private mutating func indexEntities(_ problems: inout DocumentProblems) {
        var indexByFoldedName: [String: Int] = [:]
        for (index, entity) in model.entities.enumerated() where !entity.name.isEmpty {
            let pointer = Self.entityPointer(index).appending("name")
            let folded = Self.folded(entity.name)
            if let first = indexByName[entity.name] {
                problems.report(pointer, "duplicates the name of the entity at \(Self.entityPointer(first))")
            } else if let other = indexByFoldedName[folded] {
                problems.report(pointer, "differs only in case from the entity at \(Self.entityPointer(other)) (\(Self.storeNamesIgnoreCase))")
                indexByName[entity.name] = index
            } else {
                indexByName[entity.name] = index
                indexByFoldedName[folded] = index
            }
            if folded.hasPrefix("sqlite_") {
                problems.report(pointer, "names beginning with 'sqlite_' are reserved (the store names a table after the entity)")
            }
        }
        relationshipsByName = model.entities.map { entity in
            Dictionary(entity.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
        attributeNames = model.entities.map { Set($0.attributes.map(\.name)) }
    }

    /// Resolves parents, reporting dangling ones and each inheritance cycle once (at its first entity).
    private mutating func resolveParents(_ problems: inout DocumentProblems) {
        let entities = model.entities
        parentIndex = entities.enumerated().map { index, entity in
            guard let parent = entity.parent else { return nil }
            guard let found = indexByName[parent] else {
                problems.report(Self.entityPointer(index).appending("parent"), "no entity is named \(quoted(parent))")
                return nil
            }
            return found
        }
        // Follow each chain once; a chain that meets itself is a cycle.
        enum Visit { case unvisited, onPath, done }
        var visits = [Visit](repeating: .unvisited, count: entities.count)
        var onCycle: [Int] = []
        for start in entities.indices where visits[start] == .unvisited {
            var path: [Int] = []
            var next: Int? = start
            while let current = next, visits[current] == .unvisited {
                visits[current] = .onPath
                path.append(current)
                next = parentIndex[current]
            }
            if let meeting = next, visits[meeting] == .onPath, let cycleStart = path.firstIndex(of: meeting) {
                let cycle = Array(path[cycleStart...])
                let first = cycle.min()!
                let names = cycle.map { entities[$0].name } + [entities[cycle[0]].name]
                problems.report(Self.entityPointer(first).appending("parent"), "inheritance cycle: \(names.joined(separator: " -> "))")
                onCycle += cycle
            }
            for index in path { visits[index] = .done }
        }
        for index in onCycle { parentIndex[index] = nil }
    }

    /// The entities below each entity, for walking the inheritance forest top-down.
    private var children: [[Int]] {
        var children = [[Int]](repeating: [], count: model.entities.count)
        for (index, parent) in parentIndex.enumerated() { if let parent { children[parent].append(index) } }
        return children
    }

    /// Attributes and relationships share one namespace per entity, inherited names included (R-M3).
    /// A depth-first walk keeps, for each name, the stack of ancestors declaring it, so each
    /// declaration is checked once against everything it inherits.
    private func checkPropertyNames(_ problems: inout DocumentProblems) {
        let children = children
        var declaringEntities: [String: [Int]] = [:]
        // (entity, entering?) pairs; an exit pops the names its entry pushed.
        var stack: [(entity: Int, entering: Bool)] = parentIndex.indices.reversed().filter { parentIndex[$0] == nil }.map { ($0, true) }
        var pushed: [[String]] = Array(repeating: [], count: model.entities.count)
        while let (index, entering) = stack.popLast() {
            guard entering else {
                for name in pushed[index] { declaringEntities[name]!.removeLast() }
                continue
            }
            let entity = model.entities[index]
            let pointer = Self.entityPointer(index)
            let properties = entity.attributes.enumerated().map { (name: $1.name, pointer: pointer.appending("attributes").appending($0)) }
                + entity.relationships.enumerated().map { (name: $1.name, pointer: pointer.appending("relationships").appending($0)) }
            var own: [String: JSONPointer] = [:]
            var ownFolded: [String: JSONPointer] = [:]
            for property in properties where !property.name.isEmpty {
                if let earlier = own[property.name] {
                    problems.report(property.pointer.appending("name"), "duplicates the name of the property at \(earlier)")
                } else if let other = ownFolded[Self.folded(property.name)] {
                    problems.report(property.pointer.appending("name"), "differs only in case from the property at \(other) (\(Self.storeNamesIgnoreCase))")
                    own[property.name] = property.pointer
                } else if let ancestor = declaringEntities[property.name]?.last {
                    problems.report(
                        property.pointer.appending("name"),
                        "duplicates the property \(quoted(property.name)) that \(entity.name) inherits from \(model.entities[ancestor].name)"
                    )
                    own[property.name] = property.pointer
                } else {
                    own[property.name] = property.pointer
                    ownFolded[Self.folded(property.name)] = property.pointer
                    declaringEntities[property.name, default: []].append(index)
                    pushed[index].append(property.name)
                }
            }
            stack.append((index, false))
            stack += children[index].reversed().map { ($0, true) }
        }
    }

    /// `index` and its ancestors, nearest first.
    private func lineage(of index: Int) -> UnfoldFirstSequence<Int> {
        sequence(first: index) { parentIndex[$0] }
    }

    /// The relationship `name` declared on `index` or an ancestor, with the declaring entity's index.
    private func relationship(_ name: String, inLineageOf index: Int) -> (declaringEntity: Int, relationship: Relationship)? {
        for ancestor in lineage(of: index) {
            if let found = relationshipsByName[ancestor][name] { return (ancestor, found) }
        }
        return nil
    }

    // MARK: Fetch indexes

    /// R-M7: each element of a fetch index names an attribute of its entity (own or inherited), once;
    /// index names are unique within the entity.
    private func checkFetchIndexes(_ problems: inout DocumentProblems) {
        for (index, entity) in model.entities.enumerated() where !entity.fetchIndexes.isEmpty {
            let pointer = Self.entityPointer(index).appending("fetchIndexes")
            var names = Set<String>()
            for (position, fetchIndex) in entity.fetchIndexes.enumerated() {
                let indexPointer = pointer.appending(position)
                if !fetchIndex.name.isEmpty, !names.insert(fetchIndex.name).inserted {
                    problems.report(indexPointer.appending("name"), "duplicates the name of another fetch index of \(entity.name)")
                }
                var seen = Set<String>()
                for (elementIndex, element) in fetchIndex.elements.enumerated() where !element.attribute.isEmpty {
                    let elementPointer = indexPointer.appending("elements").appending(elementIndex)
                    if relationship(element.attribute, inLineageOf: index) != nil {
                        problems.report(elementPointer, "\(quoted(element.attribute)) is a relationship; a fetch index lists attributes (foreign keys are indexed already)")
                    } else if !lineage(of: index).contains(where: { attributeNames[$0].contains(element.attribute) }) {
                        problems.report(elementPointer, "\(entity.name) has no attribute \(quoted(element.attribute))")
                    } else if !seen.insert(element.attribute).inserted {
                        problems.report(elementPointer, "lists \(quoted(element.attribute)) twice")
                    }
                }
            }
        }
    }

    // MARK: Relationships

    /// Destinations exist; a given inverse exists on the destination and names this relationship back.
    private func checkRelationships(_ problems: inout DocumentProblems) {
        for (index, entity) in model.entities.enumerated() {
            for (position, relationship) in entity.relationships.enumerated() where !relationship.destination.isEmpty {
                let pointer = Self.entityPointer(index).appending("relationships").appending(position)
                guard let destination = indexByName[relationship.destination] else {
                    problems.report(pointer.appending("destination"), "no entity is named \(quoted(relationship.destination))")
                    continue
                }
                guard let inverseName = relationship.inverse else { continue }
                let this = "\(entity.name).\(relationship.name)"
                guard let (_, inverse) = self.relationship(inverseName, inLineageOf: destination) else {
                    problems.report(pointer.appending("inverse"), "\(relationship.destination) has no relationship named \(quoted(inverseName))")
                    continue
                }
                let that = "\(relationship.destination).\(inverseName)"
                guard let inverseOfInverse = inverse.inverse else {
                    problems.report(pointer.appending("inverse"), "\(that) names no inverse; both sides must name each other")
                    continue
                }
                // The inverse's inverse, looked up from the inverse's destination, must be this very
                // relationship (declared on this entity, not a namesake elsewhere).
                let back = indexByName[inverse.destination].flatMap { self.relationship(inverseOfInverse, inLineageOf: $0) }
                if inverseOfInverse != relationship.name || back?.declaringEntity != index {
                    problems.report(pointer.appending("inverse"), "\(that) names \(inverse.destination).\(inverseOfInverse) as its inverse, not \(this); both sides must name each other")
                }
            }
        }
    }

    // MARK: Annotations and sections

    /// R-I1 annotations name attributes of the entity (its own or inherited).
    private func checkIdentificationAnnotations(_ problems: inout DocumentProblems) {
        for (index, entity) in model.entities.enumerated() {
            for key in ["identityAttributes", "identityAttribute", "RKEntityIdentificationAttributes"] {
                guard let value = entity.userInfo[key] else { continue }
                let pointer = Self.entityPointer(index).appending("userInfo").appending(key)
                let isNameList = value.stringValue != nil || value.arrayValue?.allSatisfy { $0.stringValue != nil } == true
                guard isNameList else {
                    problems.report(pointer, "expected a comma-separated string or an array of attribute names, got \(value.kindName)")
                    continue
                }
                for name in Model.nameList(value) where !lineage(of: index).contains(where: { attributeNames[$0].contains(name) }) {
                    let isRelationship = relationship(name, inLineageOf: index) != nil
                    problems.report(
                        pointer,
                        "names \(quoted(name)), which is \(isRelationship ? "a relationship, not an attribute," : "not an attribute") of \(entity.name)"
                    )
                }
            }
        }
    }

    /// Entity mappers choose among the model's entities (R-P9).
    private func checkEntityMappers(_ problems: inout DocumentProblems) {
        for (mapperName, mapper) in model.entityMappers {
            guard let map = mapper["map"]?.objectValue else { continue }
            for (key, value) in map {
                guard let entityName = value.stringValue, indexByName[entityName] == nil else { continue }
                problems.report(
                    JSONPointer.root.appending("entityMappers").appending(mapperName).appending("map").appending(key),
                    "no entity is named \(quoted(entityName))"
                )
            }
        }
    }

    /// Annotations naming transformers or mappers that the model neither declares nor has built in
    /// (docs/model.md#validation): a warning, since only a payload that needs one fails.
    private func warnings() -> [String] {
        var warnings: [String] = []
        func check(_ userInfo: JSONObject, _ key: String, at pointer: JSONPointer, declared: JSONObject, builtIn: Set<String> = [],
                   what: String, declaration: (String) -> String) {
            guard let name = userInfo[key]?.stringValue, declared[name] == nil, !builtIn.contains(name),
                warnings.count < Self.listedWarningLimit
            else { return }
            warnings.append("\(pointer.appending("userInfo").appending(key)): \(what) \(quoted(name)) is not declared in the model and is not built in; "
                            + "declare it in the model, e.g. \(declaration(name))")
        }
        // A Core Data model names its transformer and mapper classes (`GrootTests.Transformer`): say how to declare each.
        func valueTransformer(_ name: String) -> String {
            #""valueTransformers": {"\#(name)": "StringToInteger"} to use a built-in one under this name, or {"\#(name)": {"type": "map", "map": {…}}}"#
        }
        func entityMapper(_ name: String) -> String { #""entityMappers": {"\#(name)": {"keyPath": "type", "map": {"<value>": "<Entity>"}}}"# }
        func dictionaryTransformer(_ name: String) -> String { #""dictionaryTransformers": {"\#(name)": [{"op": "copy", "from": "<key>", "to": "<key>"}]}"# }
        for (index, entity) in model.entities.enumerated() {
            let pointer = Self.entityPointer(index)
            check(entity.userInfo, "entityMapperName", at: pointer, declared: model.entityMappers, what: "the entity mapper", declaration: entityMapper)
            check(entity.userInfo, "JSONDictionaryTransformerName", at: pointer, declared: model.dictionaryTransformers,
                  what: "the dictionary transformer", declaration: dictionaryTransformer)
            for (position, attribute) in entity.attributes.enumerated() {
                check(attribute.userInfo, "JSONTransformerName", at: pointer.appending("attributes").appending(position),
                      declared: model.valueTransformers, builtIn: Self.builtInValueTransformers, what: "the value transformer", declaration: valueTransformer)
            }
            for (position, relationship) in entity.relationships.enumerated() {
                check(relationship.userInfo, "JSONTransformerName", at: pointer.appending("relationships").appending(position),
                      declared: model.valueTransformers, builtIn: Self.builtInValueTransformers, what: "the value transformer", declaration: valueTransformer)
            }
        }
        return warnings
    }
}
