// Registering a model in its store (R-M6): the schema is created, or migrated in place in one
// transaction.
import Synchronization
public import CartographCore

extension ModelStore {

    /// Registers `proposed` (version ignored): creates the schema, or migrates it in place in one
    /// transaction. Destructive changes are refused (a conflict) unless `allowDestructive`.
    public func register(_ proposed: Model, allowDestructive: Bool) throws(CartographError) -> (model: Model, outcome: ModelRegistration) {
        touchLastUsed()
        let writer = self.writer
        let result = try writeLock.withLock { () throws(CartographError) -> (model: Model, outcome: ModelRegistration) in
            var model = proposed
            model.name = name
            let old = writer.model
            if let old {
                let migration = ModelMigration(from: old, to: model)
                if migration.isEmpty { return (old, .unchanged) }
                if migration.hasDestructiveChanges && !allowDestructive {
                    let phrase = CartographError.OptionPhrase(option: "allowDestructive", words: "apply it with allowDestructive to proceed")
                    throw CartographError(
                        .conflict, "This change would lose or invalidate data; \(phrase.words).",
                        errors: migration.destructiveChanges.map { CartographError.Detail(pointer: $0.pointer, message: $0.message) },
                        optionPhrase: phrase)
                }
                model.version = old.version + 1
            } else {
                model.version = 1
            }
            try apply(model, replacing: old, writer: writer)
            remeasure(writer.connection)
            return (model, old == nil ? .created : .migrated)
        }
        if result.outcome != .unchanged {
            let text = result.model.normalizedJSON.jsonText
            published.withLock { $0 = (result.model, text) }
            modelPublished.store(true, ordering: .releasing)
        }
        return result
    }

    func apply(_ model: Model, replacing old: Model?, writer: Writer) throws(CartographError) {
        let connection = writer.connection
        let newLayout = StoreLayout(model: model)
        let oldLayout = old.map(StoreLayout.init)
        do {
            let plan = SchemaPlan(from: oldLayout, to: newLayout, existingIndexes: try SchemaPlan.existingIndexes(connection),
                                  existingSearchIndexes: try SearchIndex.existing(connection))
            let deletedAt = clock.now().millisecondsSince1970
            _ = try connection.transaction { () throws(SQLiteError) in
                // Objects of entities that leave the model (or change hierarchy) get tombstones first.
                if let oldLayout {
                    let reader = ObjectReader(connection: connection, layout: oldLayout)
                    var seq = try ChangeFeed.head(connection)
                    for entity in plan.removedEntities {
                        let table = oldLayout.table(of: entity)
                        for row in try connection.rows("SELECT _id FROM \(quoted(table)) WHERE _entity = ?", [.text(entity)]) {
                            guard let id = row[0].integerValue, let object = try reader.object(id: id, entity: entity) else { continue }
                            seq += 1
                            try ChangeFeed.recordDeletion(connection, id: id, entity: entity, key: reader.key(of: object), seq: seq, at: deletedAt)
                        }
                        if oldLayout.model.entity(named: table) != nil, newLayout.model.entity(named: table)?.parent == nil {
                            try connection.run("DELETE FROM \(quoted(table)) WHERE _entity = ?", [.text(entity)])
                        }
                    }
                }
                for index in plan.droppedIndexes { try connection.execute("DROP INDEX IF EXISTS \(quoted(index))") }
                for name in plan.droppedSearchIndexes {
                    for statement in SearchIndex.dropStatements(name: name) { try connection.execute(statement) }
                }
                for statement in plan.statements { try connection.execute(statement) }
                for fill in plan.defaultFills {
                    let marks = Array(repeating: "?", count: fill.entities.count).joined(separator: ", ")
                    try connection.run("UPDATE \(quoted(fill.table)) SET \(quoted(fill.column)) = ? WHERE _entity IN (\(marks))",
                                       [fill.value] + fill.entities.map { .text($0) })
                }
                for index in plan.indexes { try connection.execute(index.sql) }
                for index in plan.createdSearchIndexes {
                    for statement in index.createStatements { try connection.execute(statement) }
                }
                try connection.run("INSERT OR REPLACE INTO \(quoted(Self.metaTable)) (key, value) VALUES ('model', ?), ('version', ?)",
                                   [.text(model.normalizedJSON.jsonText), .integer(Int64(model.version))])
            }
        } catch {
            throw CartographError.store(error, "Cannot apply model '\(model.name)' version \(model.version)")
        }
        writer.model = model
    }
}
