// Shared helpers for RestKitPortTests: RestKit's own test data model written as a model document, a
// store with that model and some mappings (StoreHarness.swift), and the RestKit JSON fixtures copied
// into Fixtures/RestKit/ (sources in Fixtures/RestKit/SOURCES.md).
import Foundation
import CartographCore

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

// MARK: - A store with RestKit's model

/// Runs `body` against a new store of model `restkit` = `model` (none when nil) with `mappings` registered.
func withRestKitStore(model: JSONValue? = restKitModel, mappings: [(String, JSONValue)] = [],
                      _ body: (StoreHarness) throws -> Void) throws {
    try withStoreHarness(model: model, name: "restkit", mappings: mappings, body)
}

/// The `_id`s of the stored objects.
func rkIDs(_ objects: [JSONValue]) -> [JSONValue] { objects.compactMap { $0["_id"] } }
