// The mapping engine's tests against a model store, without a server: a model registered, mappings
// registered and payloads mapped as the routes do it, so that what a test asserts is the engine's and
// the store's behaviour, not the transport's (RestKitPortTests, RealAPIMappingTests).
import Foundation
import Testing
import CartographCore
import CartographMapping
import CartographStore

/// A model in a store of its own, registered and mapped as the routes do it: model documents through
/// `ModelIntake` and `register`, mappings through `parseMapping` and `putMapping`, payloads through
/// `ModelStore.ingest`. What it reads back (objects, counts, the change feed, a payload's result) is in
/// StoreHarness+Reads.swift.
struct StoreHarness {
    let store: ModelStore

    /// Registers `document` as the store's model; a refused document throws its problem (the routes' 422).
    func registerModel(_ document: JSONValue) throws(CartographError) -> ModelRegistration {
        try store.register(try ModelIntake.checked(try ModelDocument.parse(json: document, name: store.name)), allowDestructive: false).outcome
    }

    /// Whether a model is registered.
    var hasModel: Bool { store.hasModel }

    /// Registers a mapping of the model as `name`, checked against it; true when it is new.
    @discardableResult
    func registerMapping(_ name: String, _ document: JSONValue) throws(CartographError) -> Bool {
        let parsed = try store.parseMapping(document, name: name, model: try model())
        return try store.putMapping(name: name, document: parsed.json)
    }

    /// The mapping document registered as `name`, normalized; nil when there is none.
    func registeredMapping(_ name: String) throws(CartographError) -> JSONValue? { try store.mappings(named: name).first?.document }

    /// Maps `payload` with the mapping registered as `mapping`, in one transaction; a refused payload
    /// throws its problem and stores nothing (R-P11).
    @discardableResult
    func map(_ mapping: String, _ payload: JSONValue) throws(CartographError) -> PayloadResult {
        guard let document = try registeredMapping(mapping) else { throw store.unknownMapping(mapping) }
        return try ingest(payload.jsonBytes, mapping: .document(document, name: mapping))
    }

    /// The problem a payload is refused with; an issue is recorded when it maps.
    func refusal(_ mapping: String, _ payload: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) -> CartographError? {
        #expect(throws: CartographError.self, sourceLocation: sourceLocation) { try map(mapping, payload) }
    }

    /// The normalized model's `identificationAttributes` of `entity` (R-I1's resolved identity).
    func identificationAttributes(of entity: String) throws(CartographError) -> JSONValue? {
        try model().normalizedJSON["entities"]?.arrayValue?.first { $0["name"] == .string(entity) }?["identificationAttributes"]
    }

    func model() throws(CartographError) -> Model {
        guard let model = store.model else { throw CartographError(.notFound, "model \(store.name) is not registered") }
        return model
    }
}

/// The problem's JSON Pointers, as a refusal lists them.
func pointers(_ error: CartographError?) -> [String] { error?.errors.map(\.pointer) ?? [] }

/// Runs `body` against a new store of model `name` = `model` (none when nil) with `mappings` registered.
func withStoreHarness(model: JSONValue?, name: String, mappings: [(String, JSONValue)] = [],
                      _ body: (StoreHarness) throws -> Void) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("harness-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = StoreHarness(store: try ModelStore(name: name, path: directory.appendingPathComponent("\(name).sqlite").path))
    if let model {
        try #require(try store.registerModel(model) == .created)
    }
    for (mapping, document) in mappings {
        try #require(try store.registerMapping(mapping, document), "mapping \(mapping)")
    }
    try body(store)
}
