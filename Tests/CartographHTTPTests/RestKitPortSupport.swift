// Shared helpers for RestKitPortTests: RestKit's own test data model written as a model document,
// a live server with that model and some mappings, and the RestKit JSON fixtures copied into
// Fixtures/RestKit/ (sources in Fixtures/RestKit/SOURCES.md).
import Foundation
import Testing
import CartographCore
import CartographTesting

// MARK: - Fixtures

private let restKitFixturesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/RestKit", isDirectory: true)

/// A JSON fixture copied unchanged from RestKit's `Tests/Fixtures/JSON/`.
func restKitFixture(_ name: String) throws -> JSONValue {
    let data = try Data(contentsOf: restKitFixturesDirectory.appendingPathComponent(name))
    return try JSONReader().parse([UInt8](data))
}

// MARK: - Model documents

/// An attribute of a model document; `extra` adds members such as `default`, `regex`, `optional`.
func rkAttribute(_ name: String, _ type: String, _ extra: [(String, JSONValue)] = []) -> JSONValue {
    var object = JSONObject([("name", .string(name)), ("type", .string(type))])
    for (key, value) in extra { object[key] = value }
    return .object(object)
}

/// A relationship of a model document.
func rkRelationship(_ name: String, _ destination: String, toMany: Bool = false, ordered: Bool = false, inverse: String? = nil) -> JSONValue {
    var object = JSONObject([("name", .string(name)), ("destination", .string(destination)), ("toMany", .bool(toMany))])
    if ordered { object["ordered"] = true }
    if let inverse { object["inverse"] = .string(inverse) }
    return .object(object)
}

/// An entity of a model document.
func rkEntity(_ name: String, parent: String? = nil, _ attributes: [JSONValue], relationships: [JSONValue] = [], userInfo: JSONValue? = nil) -> JSONValue {
    var object = JSONObject([("name", .string(name)), ("attributes", .array(attributes)), ("relationships", .array(relationships))])
    if let parent { object["parent"] = .string(parent) }
    if let userInfo { object["userInfo"] = userInfo }
    return .object(object)
}

/// The parts of RestKit's test data model (`Tests/Models/Data Model.xcdatamodel`, RKHuman.h, RKCat.h,
/// RKParent.h, RKChild.h, RKEvent.h) and of its plain test classes (RKTestUser, RKTestAddress and the
/// `TestMappable` class of RKMappingOperationTest.m) that the ported tests use. RestKit's model is in the
/// old binary format, so it is written out here. Identification follows R-I1 inference: Parent ->
/// parentID, Child -> childID, Event -> eventID, User -> userID, Address -> addressID, Mappable -> id;
/// Human, Cat, Storm and Cloud have no inferable attribute.
let restKitModel: JSONValue = ["entities": [
    rkEntity("Human", [
        rkAttribute("railsID", "integer64"), rkAttribute("name", "string"), rkAttribute("nickName", "string"),
        rkAttribute("birthday", "date"), rkAttribute("sex", "string"), rkAttribute("age", "integer16"),
        rkAttribute("createdAt", "date"), rkAttribute("updatedAt", "date"), rkAttribute("favoriteColors", "transformable"),
        rkAttribute("favoriteCatID", "integer64"), rkAttribute("catIDs", "transformable"),
        rkAttribute("likesDogs", "boolean", [("default", true)]), rkAttribute("isHappy", "boolean"), rkAttribute("houseID", "integer64"),
    ], relationships: [
        rkRelationship("cats", "Cat", toMany: true, inverse: "human"),
        rkRelationship("favoriteCat", "Cat", inverse: "favoriteOfHumans"),
        rkRelationship("catsInOrderByAge", "Cat", toMany: true, ordered: true),
        rkRelationship("friends", "Human", toMany: true),
    ]),
    rkEntity("Cat", [
        rkAttribute("railsID", "integer64"), rkAttribute("name", "string", [("default", "Kitty Cat!")]),
        rkAttribute("nickName", "string"), rkAttribute("age", "integer16"), rkAttribute("color", "string"),
    ], relationships: [
        rkRelationship("human", "Human", inverse: "cats"),
        rkRelationship("favoriteOfHumans", "Human", toMany: true, inverse: "favoriteCat"),
    ]),
    rkEntity("Parent", parent: "Human", [rkAttribute("parentID", "integer64")],
             relationships: [rkRelationship("children", "Child", toMany: true, inverse: "parents")]),
    rkEntity("Child", parent: "Human", [rkAttribute("childID", "integer64")],
             relationships: [rkRelationship("parents", "Parent", toMany: true, inverse: "children")]),
    rkEntity("Event", [rkAttribute("eventID", "string"), rkAttribute("summary", "string")]),
    rkEntity("Storm", [rkAttribute("name", "string")], relationships: [rkRelationship("clouds", "Cloud", toMany: true, inverse: "storm")]),
    rkEntity("Cloud", [rkAttribute("name", "string")], relationships: [rkRelationship("storm", "Storm", inverse: "clouds")]),
    // RKTestUser / RKTestAddress (RestKit's plain-object test classes) as entities.
    rkEntity("User", [
        rkAttribute("userID", "integer64"), rkAttribute("name", "string"), rkAttribute("birthDate", "date"),
        rkAttribute("website", "uri"), rkAttribute("isDeveloper", "boolean"), rkAttribute("luckyNumber", "integer32"),
        rkAttribute("weight", "decimal"), rkAttribute("country", "string"), rkAttribute("interests", "transformable"),
        rkAttribute("addressDictionary", "transformable"),
    ], relationships: [
        rkRelationship("address", "Address", inverse: "user"),
        rkRelationship("addresses", "Address", toMany: true),
        rkRelationship("friends", "User", toMany: true),
        rkRelationship("friendsOrderedSet", "User", toMany: true, ordered: true),
    ]),
    rkEntity("Address", [
        rkAttribute("addressID", "integer64"), rkAttribute("city", "string"), rkAttribute("state", "string"), rkAttribute("country", "string"),
    ], relationships: [rkRelationship("user", "User", inverse: "address")]),
    // `TestMappable` of RKMappingOperationTest.m.
    rkEntity("Mappable", [
        rkAttribute("id", "integer64"), rkAttribute("url", "uri"), rkAttribute("boolString", "string"),
        rkAttribute("boolNumber", "integer16"), rkAttribute("number", "double"), rkAttribute("longNumber", "integer64"),
        rkAttribute("date", "date"),
        // Stands in for TestMappable's key-value validation (`validateBoolString:` rejects "FAIL").
        rkAttribute("checked", "string", [("regex", "[a-z ]*")]),
    ]),
],
// RestKit's default date formatters (RKObjectMapping defaultDateFormatters) read "MM/dd/yyyy" in UTC;
// Cartograph reads only ISO 8601 without a transformer (R-P3), so the ports name these.
"valueTransformers": [
    "SlashDate": ["type": "dateFormat", "format": "MM/dd/yyyy"],
    "DashDateNewYork": ["type": "dateFormat", "format": "MM-dd-yyyy", "timeZone": "America/New_York"],
]]

// MARK: - A live server with a model and mappings

/// Tenant `restkit`, model `restkit` (or the model given) and the mappings given, on a fresh server.
struct RestKitStore {
    let client: any HTTPTestClient
    let key: String

    /// PUT model `restkit`.
    func putModel(_ document: JSONValue) throws -> RawResponse {
        try client.sendJSON("PUT", "/v1/tenants/restkit/models/restkit", document, token: key)
    }

    /// PUT a mapping of model `restkit`.
    func putMapping(_ name: String, _ document: JSONValue) throws -> RawResponse {
        try client.sendJSON("PUT", "/v1/tenants/restkit/models/restkit/mappings/\(name)", document, token: key)
    }

    /// POST a payload through a mapping; the raw response.
    func post(_ mapping: String, _ payload: JSONValue, query: String = "") throws -> RawResponse {
        try client.send("POST", "/v1/tenants/restkit/models/restkit/mappings/\(mapping)/payloads" + query,
                        headers: [("Content-Type", "application/json")], body: payload.jsonBytes, token: key)
    }

    /// POST a payload that must succeed (200); the result document (R-P12).
    func map(_ mapping: String, _ payload: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        let response = try post(mapping, payload)
        #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
        return try response.json()
    }

    /// GET a path under `/v1/tenants/restkit/models/restkit/`.
    func get(_ path: String) throws -> JSONValue {
        try client.send("GET", "/v1/tenants/restkit/models/restkit/" + path, token: key).json()
    }

    /// Every stored object of an entity (and its sub-entities), in the store's default order (`_id`).
    func objects(_ entity: String, where predicate: String? = nil) throws -> [JSONValue] {
        var query = "limit=1000"
        if let predicate { query += "&where=" + rkPercentEncoded(predicate) }
        return try get("entities/\(entity)/objects?\(query)")["items"]?.arrayValue ?? []
    }

    /// How many objects an entity (and its sub-entities) has.
    func count(_ entity: String, where predicate: String? = nil) throws -> Int {
        var query = "count=true&limit=1"
        if let predicate { query += "&where=" + rkPercentEncoded(predicate) }
        return Int(try get("entities/\(entity)/objects?\(query)")["total"]?.numberValue?.int64Value ?? -1)
    }

    /// One object by key; the values of a compound key are joined by `,` (docs/api.md#object-keys).
    func object(_ entity: String, _ key: String...) throws -> JSONValue {
        try get("entities/\(entity)/objects/" + key.map(rkPercentEncoded).joined(separator: ","))
    }

    /// The normalized model (with each entity's resolved `identificationAttributes`).
    func identificationAttributes(of entity: String) throws -> JSONValue? {
        let model = try client.send("GET", "/v1/tenants/restkit/models/restkit", token: key).json()
        return model["entities"]?.arrayValue?.first { $0["name"] == .string(entity) }?["identificationAttributes"]
    }
}

func rkPercentEncoded(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
}

/// Runs `body` against a fresh server (in process: the port is of mapping behaviour) with tenant
/// `restkit`, model `restkit` = `model` (none when nil) and `mappings` registered.
func withRestKitStore(model: JSONValue? = restKitModel, mappings: [(String, JSONValue)] = [],
                      _ body: (RestKitStore) throws -> Void) throws {
    let server = try InProcessServer()
    do {
        let client: any HTTPTestClient = server
        let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "restkit"], token: server.adminToken).json()["apiKey"]?.stringValue)
        let store = RestKitStore(client: client, key: key)
        if let model {
            let registered = try store.putModel(model)
            try #require(registered.status == 201, "model: \(registered.text)")
        }
        for (name, document) in mappings {
            let response = try store.putMapping(name, document)
            try #require(response.status == 201, "mapping \(name): \(response.text)")
        }
        try body(store)
    }
}

/// The `_id`s of the stored objects matching `predicate`.
func rkIDs(_ objects: [JSONValue]) -> [JSONValue] { objects.compactMap { $0["_id"] } }
