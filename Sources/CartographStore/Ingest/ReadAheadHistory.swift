// How a load's next payload is read (docs/mapping.md, "How a payload is read"): shallowly on a re-load,
// whole on a first load, decided by what R-P7's read-ahead found of the mapping's last payload.
import Synchronization
import CartographMapping

/// Whether the last payload of each mapping was mostly new objects (`ReadPayload.mostlyNew`): the next
/// one is then parsed whole rather than read shallowly (a re-load's identities and modification values
/// first). The first payload of a re-load that follows a first load is parsed whole, and the next ones
/// are read shallowly again.
final class ReadAheadHistory: Sendable {
    private let mostlyNew = Mutex<[String: Bool]>([:])
    /// At most this many mappings are remembered (ad hoc documents are keyed by their entity).
    static let limit = 256

    /// The registered mapping's name, or the entity an ad hoc or annotation mapping maps.
    static func key(_ source: MappingSource, mapping: EntityMapping) -> String {
        switch source {
        case .document(_, let name?): "mapping:" + name
        case .document(_, nil), .annotations: "entity:" + mapping.entity
        }
    }

    func wasMostlyNew(_ key: String) -> Bool { mostlyNew.withLock { $0[key] ?? false } }

    func record(_ key: String, mostlyNew value: Bool) {
        mostlyNew.withLock { (mostlyNew) in
            if mostlyNew.count >= Self.limit, mostlyNew[key] == nil { mostlyNew.removeAll() }
            mostlyNew[key] = value
        }
    }
}
