// The store's side of R-Q4 `shape=json`: one read snapshot as the annotation exporter's object graph.
// The store only reads objects and their related objects; what is written, and how, is
// CartographMapping's `AnnotationExporter`.
import CartographCore
import CartographMapping

/// Related objects read from one snapshot. Objects read once are kept by `_id` (unique within the
/// store), so an object that many exported objects share (a publisher) is read once per request.
final class StoreExportGraph: ExportGraph {
    private let reader: ObjectReader
    private var objects: [Int64: ExistingObject] = [:]

    init(reader: ObjectReader) { self.reader = reader }

    /// Keeps an object a query read, so its to-one ids need no query; returns it.
    func keep(_ object: ExistingObject) -> ExistingObject {
        objects[object.id] = object
        return object
    }

    func destinations(of object: ExistingObject, relationship: Relationship) throws(CartographError) -> [ExistingObject] {
        do {
            let ids = try reader.destinationIDs(of: object.id, entity: object.entity, relationship: relationship.name,
                                                toOne: objects[object.id]?.toOne)
            var destinations: [ExistingObject] = []
            destinations.reserveCapacity(ids.count)
            for id in ids {
                if let known = objects[id] {
                    destinations.append(known)
                } else if let read = try reader.object(id: id, entity: relationship.destination) {
                    objects[id] = read
                    destinations.append(read)
                }
            }
            return destinations
        } catch {
            throw CartographError.store(error, "Store read failed")
        }
    }
}
