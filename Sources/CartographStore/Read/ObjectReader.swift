// Reads objects, relationships and keys from one connection, and hands them to a renderer
// (`ObjectRenderer`, R-Q4): a page's rows as they are stepped, or an object as values.
import Foundation
import CartographCore
import CartographPredicate
import CartographMapping

struct ObjectReader {
    let connection: SQLiteConnection
    let layout: StoreLayout
    /// Destination keys kept from earlier reads of the same data (a pooled read connection's); nil
    /// where reads and writes mix (a write transaction's reader).
    var keyCache: KeyCache? = nil
    var model: Model { layout.model }

    func rowReader(for table: String) -> RowReader { layout.rowReader(for: table) }

    /// The object with `id` in `entity`'s hierarchy, if it exists (and belongs to `entity` or a sub-entity).
    /// `reader` decodes the row (every attribute and to-one by default).
    func object(id: Int64, entity: String, reader: RowReader? = nil) throws(SQLiteError) -> ExistingObject? {
        let reader = reader ?? rowReader(for: layout.table(of: entity))
        let statement = try connection.cached(reader.selectByID)
        try statement.bind([.integer(id)])
        defer { try? statement.bind([]) }
        guard try statement.step() else { return nil }
        var memo = RowReader.EntityMemo()
        let object = reader.object(from: statement, memo: &memo)
        return object.entity == entity || layout.isKind(object.entity, of: entity) ? object : nil
    }

    /// The ids of `relationship`'s destinations for the object `id` of `entity`, in relationship order.
    /// `toOne` and `known`, when given, are the object's to-one destinations and its destinations read
    /// already (`prefetch`): those are not queried.
    func destinationIDs(of id: Int64, entity: String, relationship: String, toOne: [String: Int64]? = nil,
                        known: PrefetchedDestinations.OfObject? = nil) throws(SQLiteError) -> [Int64] {
        if let read = known?.destinations(of: relationship) { return read }
        switch layout.storage(of: relationship, entity: entity) {
        case .foreignKey(let table, let column):
            if let toOne { return toOne[relationship].map { [$0] } ?? [] }
            return try connection.rows("SELECT \(quoted(column)) FROM \(quoted(table)) WHERE _id = ?", [.integer(id)])
                .compactMap { $0.first?.integerValue }
        case .inverseForeignKey(let table, let column):
            return try connection.rows("SELECT _id FROM \(quoted(table)) WHERE \(quoted(column)) = ? ORDER BY _id", [.integer(id)])
                .compactMap { $0.first?.integerValue }
        case .joinTable(let name, let reversed):
            let sql = reversed
                ? "SELECT source FROM \(quoted(name)) WHERE destination = ? ORDER BY source"
                : "SELECT destination FROM \(quoted(name)) WHERE source = ? ORDER BY position, rowid"
            return try connection.rows(sql, [.integer(id)]).compactMap { $0.first?.integerValue }
        case nil:
            return []
        }
    }

    /// The API key of an object (docs/api.md#object-keys): its identification value, an array for a compound
    /// identity, or `_id` when its entity has no identification attributes.
    func key(of object: ExistingObject) -> JSONValue {
        Self.key(id: object.id, values: layout.identificationAttributes(of: object.entity).map { object.values[$0] })
    }

    /// The key made of an object's identification values (in their order; none: its `_id`).
    static func key(id: Int64, values: [AttributeValue?]) -> JSONValue {
        switch values.count {
        case 0: .number(JSONNumber(id))
        case 1: values[0]?.jsonValue ?? .null
        default: .array(values.map { $0?.jsonValue ?? .null })
        }
    }

    /// The object's values, with the relationships named in `include` as embedded objects (dotted paths go
    /// deeper) and the others as their destinations' keys. `storedRelationshipsOnly` leaves out derived
    /// relationships (the change feed's form); `keys` caches destination keys across calls; `known` are
    /// destinations read already (see `destinationIDs`). `fields`, when given, limits the attributes and
    /// relationships (the identification attributes, which make the key, always come).
    func values(of object: ExistingObject, include: [[String]] = [], fields: Set<String>? = nil, storedRelationshipsOnly: Bool = false,
                known: PrefetchedDestinations.OfObject? = nil, keys: inout [Int64: JSONValue]) throws(SQLiteError) -> ObjectValues {
        let properties = layout.properties(of: object.entity)
        let keyAttributes = fields == nil ? [] : layout.identificationAttributes(of: object.entity)
        var attributes: [ObjectValues.Attribute] = []
        attributes.reserveCapacity(properties.attributes.count)
        for attribute in properties.attributes where AttributeColumn.isSelected(attribute.name, isKey: keyAttributes.contains(attribute.name), by: fields) {
            attributes.append(ObjectValues.Attribute(name: attribute.name, value: object.values[attribute.name]))
        }
        var relationships: [ObjectValues.Relationship] = []
        for relationship in properties.relationships
        where !(storedRelationshipsOnly && layout.isDerived(relationship.name, entity: object.entity))
            && (fields?.contains(relationship.name) ?? true || include.contains { $0.first == relationship.name }) {
            let nested = include.filter { $0.first == relationship.name }.map { Array($0.dropFirst()) }
            let ids = try destinationIDs(of: object.id, entity: object.entity, relationship: relationship.name, toOne: object.toOne,
                                         known: known)
            let destinations: ObjectValues.Destinations
            if nested.isEmpty {
                var found: [JSONValue] = []
                for id in ids {
                    if let key = try destinationKey(id, destination: relationship.destination, keys: &keys) { found.append(key) }
                }
                destinations = .keys(found)
            } else {
                var found: [ObjectValues] = []
                for id in ids {
                    guard let destination = try self.object(id: id, entity: relationship.destination) else { continue }
                    found.append(try values(of: destination, include: nested.filter { !$0.isEmpty }, keys: &keys))
                }
                destinations = .objects(found)
            }
            relationships.append(ObjectValues.Relationship(name: relationship.name, toMany: relationship.toMany, destinations: destinations))
        }
        return ObjectValues(id: object.id, entity: object.entity, isStub: object.isStub, attributes: attributes, relationships: relationships)
    }

    /// The key of the destination `id` (of `destination`'s hierarchy), from `keys` or read (and kept
    /// there); nil for a destination that no longer exists.
    private func destinationKey(_ id: Int64, destination: String, keys: inout [Int64: JSONValue]) throws(SQLiteError) -> JSONValue? {
        if let cached = keys[id] { return cached }
        guard let object = try self.object(id: id, entity: destination, reader: layout.keyReader(for: layout.table(of: destination))) else {
            return nil
        }
        let key = key(of: object)
        keys[id] = key
        return key
    }

    /// The documents `renderer` writes of the objects `ids` of `table`, in `ids` order (those that do not
    /// exist left out), written from their rows as they are stepped. Their relationships' destinations are
    /// read for all of them at once (`prefetch`).
    func rendered<Renderer: ObjectRenderer>(ids: [Int64], table: String, fields: Set<String>?,
                                            renderer: Renderer) throws(SQLiteError) -> [RenderedJSON] {
        let rows = layout.tableRows(for: table)
        let prepared = rows.prepared(by: renderer)
        // Rows come back in `_id` order: each takes its id's place in `ids` (the first, should an id repeat).
        var positions: [Int64: Int] = Dictionary(minimumCapacity: ids.count)
        for (position, id) in ids.enumerated().reversed() { positions[id] = position }
        var found = [RenderedHead?](repeating: nil, count: ids.count)
        try forEachRow(rows.selectByIDs, ids: ids) { statement in
            let head = rows.head(of: statement, renderer: renderer, table: prepared, fields: fields)
            if let position = positions[head.object.id] { found[position] = head }
        }
        var heads = found.compactMap { $0 }
        return try closing(&heads, fields: fields, renderer: renderer)
    }

    /// The document `renderer` writes of the object whose key is `rawKey` (see `object(entity:rawKey:)`),
    /// read with one query for its row (a get is mostly this).
    func rendered<Renderer: ObjectRenderer>(entity: String, rawKey: String, fields: Set<String>?,
                                            renderer: Renderer) throws(CartographError) -> RenderedJSON? {
        guard let key = try identity(ofKey: rawKey, entity: entity) else { return nil }
        let rows = layout.tableRows(for: layout.table(of: entity))
        let prepared = rows.prepared(by: renderer)
        let lookup = layout.keyLookup(entity: entity)
        var bindings = lookup.filter
        switch key {
        case .id(let id): bindings.append(.integer(id))
        case .values(let values): bindings += values.map(ValueStorage.sqlite)
        }
        return try storeRead { () throws(SQLiteError) -> RenderedJSON? in
            let statement = try connection.cached(lookup.sql)
            try statement.bind(bindings)
            defer { try? statement.bind([]) }
            guard try statement.step() else { return nil }
            var heads = [rows.head(of: statement, renderer: renderer, table: prepared, fields: fields)]
            return try closing(&heads, fields: fields, renderer: renderer).first
        }
    }

    /// An object's document as far as `ObjectRenderer.writeHead` writes it, and what its relationships need.
    struct RenderedHead {
        let object: ExistingObject
        var bytes: [UInt8]
    }

    /// The documents of `heads`, in their order, each closed with its relationships (`writeRelationships`),
    /// whose destinations are read for all of them at once (`prefetch`). Written in place: `heads` is
    /// left holding the documents.
    func closing<Renderer: ObjectRenderer>(_ heads: inout [RenderedHead], fields: Set<String>?,
                                           renderer: Renderer) throws(SQLiteError) -> [RenderedJSON] {
        var keys = keyCache?.take() ?? [:]
        // What was read is this snapshot's: kept for the next read, even if this one fails.
        defer { keyCache?.keep(keys) }
        let prefetched = try prefetch(for: heads.map(\.object), fields: fields, keys: &keys)
        // One list of a to-many's keys for the whole page, emptied for the next (no array per relationship).
        var destinationKeys: [JSONValue] = []
        for position in heads.indices {
            let object = heads[position].object
            try writeRelationships(of: object, fields: fields, known: prefetched.of(objectAt: position), keys: &keys,
                                   destinationKeys: &destinationKeys, renderer: renderer, into: &heads[position].bytes)
        }
        return heads.map { RenderedJSON(bytes: $0.bytes) }
    }

    /// Has `renderer` close an object it opened (`writeHead`) with its relationships (those in `fields`,
    /// when given): the keys of their destinations. A to-one's destination is the row's (`writeHead` read it).
    private func writeRelationships<Renderer: ObjectRenderer>(of object: ExistingObject, fields: Set<String>?,
                                                              known: PrefetchedDestinations.OfObject, keys: inout [Int64: JSONValue],
                                                              destinationKeys: inout [JSONValue], renderer: Renderer,
                                                              into bytes: inout [UInt8]) throws(SQLiteError) {
        for relationship in layout.properties(of: object.entity).relationships where fields?.contains(relationship.name) ?? true {
            guard relationship.toMany else {
                let key = try object.toOne[relationship.name].flatMap { (id) throws(SQLiteError) in
                    try destinationKey(id, destination: relationship.destination, keys: &keys)
                }
                renderer.writeToOne(relationship.name, key: key, into: &bytes)
                continue
            }
            destinationKeys.removeAll(keepingCapacity: true)
            for id in try destinationIDs(of: object.id, entity: object.entity, relationship: relationship.name, known: known) {
                if let key = try destinationKey(id, destination: relationship.destination, keys: &keys) { destinationKeys.append(key) }
            }
            renderer.writeToMany(relationship.name, keys: destinationKeys, into: &bytes)
        }
        renderer.close(&bytes)
    }

    /// The to-many destinations `prefetch` read: by relationship name, then by the position of the object
    /// among those it was given (flat lists, not a dictionary per object).
    struct PrefetchedDestinations {
        /// Nil where the object's entity has no such to-many relationship, or the object repeats one
        /// given before it.
        fileprivate var lists: [String: [[Int64]?]] = [:]

        /// What was read for the object at `position`.
        func of(objectAt position: Int) -> OfObject { OfObject(lists: lists, position: position) }

        /// What was read for one object.
        struct OfObject {
            fileprivate let lists: [String: [[Int64]?]]
            fileprivate let position: Int

            /// The object's destinations through `relationship`, if they were read.
            func destinations(of relationship: String) -> [Int64]? { lists[relationship]?[position] ?? nil }
        }
    }

    /// What rendering `objects` reads besides them, read for all of them at once: each rendered to-many
    /// relationship's destinations (one query per relationship), and the API keys of every
    /// destination, to-one and to-many (one query per destination table; `_id`s are unique across a
    /// store's tables, so one cache serves them all). A page of 50 articles by 50 authors with their tags
    /// is a handful of queries, not 100. `fields` leaves out what is not rendered.
    func prefetch(for objects: [ExistingObject], fields: Set<String>?, keys: inout [Int64: JSONValue]) throws(SQLiteError)
        -> PrefetchedDestinations {
        var prefetched = PrefetchedDestinations()
        // Destinations whose keys are not known yet, by table (repeats removed before reading).
        var wanted: [String: [Int64]] = [:]
        // A destination row names its object by `_id`: the object's position (the first, should one repeat).
        var positions: [Int64: Int] = Dictionary(minimumCapacity: objects.count)
        for (position, object) in objects.enumerated().reversed() { positions[object.id] = position }
        // The objects' positions by entity. A page's objects are mostly of one entity: each is compared with
        // the last group's before the others (grouping them in a dictionary hashed every object's entity).
        var groups: [(entity: String, positions: [Int])] = []
        for position in objects.indices {
            let entity = objects[position].entity
            if let last = groups.indices.last, groups[last].entity == entity {
                groups[last].positions.append(position)
            } else if let index = groups.firstIndex(where: { $0.entity == entity }) {
                groups[index].positions.append(position)
            } else {
                groups.append((entity, [position]))
            }
        }
        for (entity, group) in groups {
            for relationship in layout.properties(of: entity).relationships where fields?.contains(relationship.name) ?? true {
                let destinationTable = layout.table(of: relationship.destination)
                guard relationship.toMany else {
                    for position in group {
                        if let id = objects[position].toOne[relationship.name], keys[id] == nil { wanted[destinationTable, default: []].append(id) }
                    }
                    continue
                }
                guard let storage = layout.storage(of: relationship.name, entity: entity),
                      let query = layout.destinationsQuery(of: storage) else { continue }
                var lists = prefetched.lists[relationship.name] ?? Array(repeating: nil, count: objects.count)
                for position in group where positions[objects[position].id] == position { lists[position] = [] }
                var destinations: [Int64] = []
                try forEachRow(query, ids: group.map { objects[$0].id }) { statement in
                    guard let owner = statement.column(0).integerValue, let destination = statement.column(1).integerValue,
                          let position = positions[owner] else { return }
                    lists[position]?.append(destination)
                    if keys[destination] == nil { destinations.append(destination) }
                }
                wanted[destinationTable, default: []] += destinations
                prefetched.lists[relationship.name] = lists
            }
        }
        for (table, ids) in wanted {
            var unique: [Int64] = []
            unique.reserveCapacity(ids.count)
            for id in ids.sorted() where id != unique.last { unique.append(id) }
            // A key is made of identification attributes: only those columns are read.
            let reader = layout.keyReader(for: table)
            try forEachRow(reader.selectByIDs, ids: unique) { statement in
                if let (id, key) = reader.key(from: statement) { keys[id] = key }
            }
        }
        return prefetched
    }

    /// The rows of `table` whose `_id` is one of `ids`, by `_id`, every attribute and to-one decoded.
    func objects(ids: [Int64], table: String) throws(SQLiteError) -> [Int64: ExistingObject] {
        let reader = layout.rowReader(for: table)
        var found: [Int64: ExistingObject] = Dictionary(minimumCapacity: ids.count)
        var memo = RowReader.EntityMemo()
        try forEachRow(reader.selectByIDs, ids: ids) { statement in
            let object = reader.object(from: statement, memo: &memo)
            found[object.id] = object
        }
        return found
    }

    /// Runs `query` for `ids`, `IDListQuery.maximumCount` of them at a time; `body` gets each row.
    private func forEachRow(_ query: IDListQuery, ids: [Int64], _ body: (SQLiteStatement) -> Void) throws(SQLiteError) {
        for start in stride(from: 0, to: ids.count, by: IDListQuery.maximumCount) {
            let chunk = ids[start..<min(start + IDListQuery.maximumCount, ids.count)]
            let statement = try connection.cached(query.sql(count: chunk.count))
            try statement.bind([])
            defer { try? statement.bind([]) }
            for (offset, id) in chunk.enumerated() { try statement.bind(.integer(id), at: Int32(offset + 1)) }
            while try statement.step() { body(statement) }
        }
    }

    private static func placeholders(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ", ") }

    /// Identification (R-I1…R-I3), foreign-key connections (R-C2) and key lookups: the objects of `entity`
    /// (and sub-entities) whose `attributes` equal one of `identities`, keyed by identity, oldest first
    /// (identification and to-one connections take the first). One query per chunk of identities.
    /// `predicate` (an identificationPredicate or destinationPredicate) is compiled into the query;
    /// without one no predicate is compiled at all (key lookups are a hot path). `reading` names the
    /// attributes decoded besides `attributes` (nil: every attribute and to-one): a lookup that needs
    /// few values does not decode whole rows.
    func findAll(entity: String, attributes: [String], identities: [[AttributeValue]], predicate: CheckedPredicate? = nil,
                 reading: [String]? = nil) throws(CartographError) -> [[AttributeValue]: [ExistingObject]] {
        guard !identities.isEmpty else { return [:] }
        let columns = attributes.compactMap { layout.column(ofAttribute: $0, entity: entity) }
        guard columns.count == attributes.count, !columns.isEmpty else { return [:] }
        let rowReader = layout.rowReader(for: layout.table(of: entity), attributes: reading.map { Set(attributes + $0) })
        var from = "", alias = quoted("t0")
        var conditions: [String] = []
        var fixedBindings: [SQLiteValue] = []
        if let predicate {
            let compiled: SQLPredicate
            do { compiled = try predicate.sql(schema: layout) } catch {
                throw CartographError(.unprocessable, "The identification predicate cannot be compiled: \(error.message)", underlying: error)
            }
            (from, alias) = (compiled.fromClause, compiled.alias)
            conditions.append(compiled.whereClause)
            fixedBindings = compiled.bindings.map(SQLiteValue.init)
        } else if let filter = layout.entityFilter(entity, alias: alias) {
            conditions.append(filter.sql)
            fixedBindings = filter.bindings
        }
        if predicate == nil { from = "\(quoted(layout.table(of: entity))) AS \(alias)" }
        /// The query for `count` identities.
        func lookupSQL(count: Int) -> String {
            let tuple = columns.count == 1 ? "\(alias).\(quoted(columns[0]))" : "(\(columns.map { "\(alias).\(quoted($0))" }.joined(separator: ", ")))"
            let placeholder = columns.count == 1 ? "?" : "(\(Self.placeholders(columns.count)))"
            let list = Array(repeating: placeholder, count: count).joined(separator: ", ")
            // A row value `IN (VALUES …)` is searched through an index of all its columns only: with one on
            // the first column alone (the entity's identity, when the mapping adds an attribute from
            // `@metadata`), SQLite scanned the table for every chunk of identities. Each column's own `IN`
            // lets it search whichever index there is; the row value keeps the match exact.
            let eachColumn = columns.count == 1 ? [] : columns.map {
                "\(alias).\(quoted($0)) IN (\(Self.placeholders(count)))"
            }
            return "SELECT \(rowReader.selectList(alias: alias)) FROM \(from) WHERE "
                + (conditions + ["\(tuple) IN (\(columns.count == 1 ? list : "VALUES " + list))"] + eachColumn).joined(separator: " AND ")
        }
        var found: [[AttributeValue]: [ExistingObject]] = Dictionary(minimumCapacity: identities.count)
        var memo = RowReader.EntityMemo()
        // Identities are not made unique first (hashing every one): `IN` matches a row once however often
        // its list names it, and a row that two chunks both find is kept once below.
        let chunkSize = max(1, 900 / columns.count)
        for start in stride(from: 0, to: identities.count, by: chunkSize) {
            let chunk = identities[start..<min(start + chunkSize, identities.count)]
            // Without a predicate the text depends on nothing else: the layout keeps it (a lookup by key builds no SQL).
            let sql = predicate == nil
                ? layout.lookupSQL(entity: entity, attributes: attributes, reading: reading, count: chunk.count) { lookupSQL(count: chunk.count) }
                : lookupSQL(count: chunk.count)
            var bindings = fixedBindings + chunk.flatMap { $0.map(ValueStorage.sqlite) }
            if columns.count > 1 {
                for column in columns.indices { bindings += chunk.map { ValueStorage.sqlite($0[column]) } }
            }
            try storeRead { () throws(SQLiteError) in
                let statement = try connection.cached(sql)
                try statement.bind(bindings)
                defer { try? statement.bind([]) }
                while try statement.step() {
                    let object = rowReader.object(from: statement, memo: &memo)
                    let identity = attributes.compactMap { object.values[$0] }
                    guard identity.count == attributes.count else { continue }
                    if chunkSize < identities.count, found[identity]?.contains(where: { $0.id == object.id }) == true { continue }
                    found[identity, default: []].append(object)
                }
            }
        }
        // Oldest first, sorted here rather than by the query: an ORDER BY sorts every row, and almost
        // every identity has one.
        for (identity, objects) in found where objects.count > 1 { found[identity] = objects.sorted { $0.id < $1.id } }
        return found
    }

    /// R-P7's read-ahead (`MappingLookup.firstObjects`): for each of `identities`, in order, the oldest
    /// object `findAll` would find for it, and its values of `reading` (the objects' own `values` stay
    /// empty: no dictionary per object). Without a predicate, one query per chunk joins a numbered
    /// VALUES list to the identity index: each row names the identity it answers by position, so no
    /// identity is read back, hashed or kept in a dictionary (in a re-load's lookup, under the write
    /// lock, that was a third of its time). With a predicate, `findAll`.
    func findFirst(entity: String, attributes: [String], identities: [[AttributeValue]], predicate: CheckedPredicate?,
                   reading: [String]) throws(CartographError) -> FirstObjects {
        var result = FirstObjects(count: identities.count, width: reading.count)
        if let predicate {
            let found = try findAll(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
            for (position, identity) in identities.enumerated() {
                guard let object = found[identity]?.first else { continue }
                result.objects[position] = object
                for (k, name) in reading.enumerated() { result.values[position * reading.count + k] = object.values[name] }
            }
            return result
        }
        let columns = attributes.compactMap { layout.column(ofAttribute: $0, entity: entity) }
        let attributeList = layout.properties(of: entity).attributes
        let read = reading.compactMap { (name) -> (column: String, type: AttributeType)? in
            guard let column = layout.column(ofAttribute: name, entity: entity), let attribute = attributeList.first(where: { $0.name == name }) else { return nil }
            return (column, attribute.type)
        }
        guard columns.count == attributes.count, !columns.isEmpty, read.count == reading.count else { return result }
        let table = layout.table(of: entity)
        let alias = quoted("t0"), filter = layout.entityFilter(entity, alias: alias)
        /// `WITH "v"("p", "c0", …) AS (VALUES (0, ?, …), …) SELECT "v"."p", _id, _entity, _stub, <reading> FROM "v"
        /// CROSS JOIN <table> ON <identity> = "v"."c0" …`: CROSS JOIN keeps the list outside, so each
        /// identity is one index search.
        func positionalSQL(count: Int) -> String {
            let names = columns.indices.map { quoted("c\($0)") }
            let row = Self.placeholders(columns.count)
            let values = (0..<count).map { "(\($0), \(row))" }.joined(separator: ", ")
            let matches = zip(columns, names).map { "\(alias).\(quoted($0)) = \(quoted("v")).\($1)" } + (filter.map { [$0.sql] } ?? [])
            let selected = ([StoreLayout.idColumn, StoreLayout.entityColumn, StoreLayout.stubColumn] + read.map(\.column)).map { "\(alias).\(quoted($0))" }
            return "WITH \(quoted("v"))(\(quoted("p")), \(names.joined(separator: ", "))) AS (VALUES \(values)) "
                + "SELECT \(quoted("v")).\(quoted("p")), \(selected.joined(separator: ", ")) FROM \(quoted("v")) CROSS JOIN \(quoted(table)) AS \(alias) "
                + "ON " + matches.joined(separator: " AND ")
        }
        var lastEntity = LastEntity<String>()
        let chunkSize = max(1, 900 / columns.count)
        for start in stride(from: 0, to: identities.count, by: chunkSize) {
            let chunk = identities[start..<min(start + chunkSize, identities.count)]
            let sql = layout.lookupSQL(entity: entity, attributes: attributes, reading: reading, count: chunk.count, positional: true) {
                positionalSQL(count: chunk.count)
            }
            // Parameters number in the text's order: the list's values, then the entity filter's.
            let bindings = chunk.flatMap { $0.map(ValueStorage.sqlite) } + (filter?.bindings ?? [])
            try storeRead { () throws(SQLiteError) in
                let statement = try connection.cached(sql)
                try statement.bind(bindings)
                defer { try? statement.bind([]) }
                while try statement.step() {
                    let position = start + Int(statement.columnInteger(0))
                    let id = statement.columnInteger(1)
                    // Oldest first: a later row for the same identity is a younger duplicate.
                    if let kept = result.objects[position], kept.id < id { continue }
                    let entity = lastEntity.value(in: statement, column: 2) { $0 } ?? table
                    result.objects[position] = ExistingObject(id: id, entity: entity, isStub: statement.columnInteger(3) == 1, values: [:])
                    for (k, field) in read.enumerated() {
                        result.values[position * read.count + k] = ValueStorage.attributeValue(statement.column(4 + Int32(k)), type: field.type)
                    }
                }
            }
        }
        return result
    }

    /// What a key names: the `_id` of an object whose entity has no identification attributes, or the
    /// values of its identification attributes in their order.
    enum KeyIdentity {
        case id(Int64)
        case values([AttributeValue])
    }

    /// The identity named by `rawKey` — the `{key}` path segment (docs/api.md#object-keys): the identity
    /// value, for a compound identity the values joined by ',' each percent-encoded, or `_id` when the
    /// entity has no identification attributes. Values are coerced to their types (R-I2); nil when a
    /// value coerces to nil, which no object has.
    func identity(ofKey rawKey: String, entity: String) throws(CartographError) -> KeyIdentity? {
        let names = layout.identificationAttributes(of: entity)
        if names.isEmpty {
            guard let text = PercentDecoding.decode(rawKey), let id = Int64(text) else {
                throw CartographError(.badRequest, "'\(entity)' has no identification attributes: its key is the integer _id.")
            }
            return .id(id)
        }
        let parts = names.count == 1 ? [rawKey] : rawKey.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == names.count else {
            throw CartographError(.badRequest, "The key of '\(entity)' has \(names.count) values (\(names.joined(separator: ", "))) joined by ','.")
        }
        var values: [AttributeValue] = []
        for (name, part) in zip(names, parts) {
            guard let text = PercentDecoding.decode(part), let attribute = model.attribute(name, of: entity) else {
                throw CartographError(.badRequest, "The key value for '\(name)' is not valid percent-encoding.")
            }
            do {
                guard let value = try AttributeValue.coerce(.string(text), to: attribute.type) else { return nil }
                values.append(value)
            } catch {
                throw CartographError(.badRequest, "The key value '\(text)' is not a valid \(attribute.type) for '\(name)': \(error)",
                                      underlying: error)
                    .quotingRequestValues()
            }
        }
        return .values(values)
    }

    /// The object whose key is `rawKey` (see `identity(ofKey:entity:)`); several matches (possible
    /// through identificationPredicate) resolve to the oldest.
    func object(entity: String, rawKey: String) throws(CartographError) -> ExistingObject? {
        switch try identity(ofKey: rawKey, entity: entity) {
        case nil:
            return nil
        case .id(let id)?:
            return try storeRead { () throws(SQLiteError) in try object(id: id, entity: entity) }
        case .values(let values)?:
            return try findAll(entity: entity, attributes: layout.identificationAttributes(of: entity), identities: [values])[values]?.first
        }
    }

    private func storeRead<T>(_ body: () throws(SQLiteError) -> T) throws(CartographError) -> T {
        do { return try body() } catch { throw CartographError.store(error, "Store read failed") }
    }
}
