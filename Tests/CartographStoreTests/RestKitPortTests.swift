// Ports of the expressible cases of RestKit's own test suite (repository RestKit/RestKit, commit
// d902e6a6fc3d765939c739c21ee5b6b3f25f2470, Apache-2.0) for identification (docs/mapping.md#identification-r-i1, R-I1…R-I6) and
// mapping (§5, R-P1…R-P8, R-P11, R-P12): JSON into a model store through `ModelStore.ingest`, stored objects out.
//
// Each test is named `<rule>_<RestKit test class>_<RestKit test name without "test">`. RestKit maps onto
// an object it is handed; a server finds the object by its identity, so where a RestKit test maps onto a
// target object that has no identity in the payload, the port adds one (`"id": 1`) and says so.
// The model is RestKit's test data model written as a model document (RestKitPortSupport.swift); the
// fixtures are copied unchanged into Fixtures/RestKit/ (SOURCES.md names each one's source).
// Where Cartograph's rules (docs/rules.md) deliberately differ from RestKit, the port follows them and says so in a comment.
// No case needs the router: a refused document or payload is checked by its problem's code
// (`unprocessable`, which the routes answer 422) and JSON Pointers, as the routes hand them on.
import Foundation
import Testing
import CartographCore
import CartographStore

// MARK: - Mappings shared by several ports

/// `Human` identified by `railsID` (read from `id`), as RKManagedObjectMappingOperationDataSourceTest sets it up.
private let humansByRailsID: JSONValue = ["entity": "Human", "attributes": ["id": "railsID", "name": "name"], "identificationAttributes": ["railsID"]]

/// `Cat` identified by its name (RestKit's `catMapping.identificationAttributes = @[ @"name" ]`).
private let catsByName: JSONValue = ["entity": "Cat", "attributes": ["name"], "identificationAttributes": ["name"]]

/// A Human mapping with the `cats` / `favoriteCat` relationships (RKEntityMappingTest, assignment-policy tests).
private func humanWithCats(policy: String = "set", cats: JSONValue = catsByName, extra: [(String, JSONValue)] = []) -> JSONValue {
    var document = JSONObject([
        ("entity", "Human"), ("attributes", ["id": "railsID", "name": "name"]), ("identificationAttributes", ["railsID"]),
        ("relationships", [
            ["from": "cats", "to": "cats", "assignmentPolicy": .string(policy), "mapping": cats],
            ["from": "favoriteCat", "to": "favoriteCat", "assignmentPolicy": .string(policy == "union" ? "set" : policy), "mapping": cats],
        ]),
    ])
    for (key, value) in extra { document[key] = value }
    return .object(document)
}

/// RKTestUser's basic mapping (`id` -> userID, `name` -> name), plus `extra` members.
private func userMapping(_ attributes: [(String, JSONValue)] = [], extra: [(String, JSONValue)] = []) -> JSONValue {
    var mapped = JSONObject([("id", "userID"), ("name", "name")])
    for (key, value) in attributes { mapped[key] = value }
    var document = JSONObject([("entity", "User"), ("attributes", .object(mapped))])
    for (key, value) in extra { document[key] = value }
    return .object(document)
}

/// A to-many of User identified by `userID`, for the friends relationships.
private func friendsRelationship(_ to: String, from: String? = nil, policy: String = "set") -> JSONValue {
    ["from": .string(from ?? to), "to": .string(to), "assignmentPolicy": .string(policy),
     "mapping": ["entity": "User", "attributes": ["id": "userID", "name": "name"]]]
}

private func keys(_ value: JSONValue?) -> [JSONValue] { value?.arrayValue ?? [] }
private func sortedInts(_ value: JSONValue?) -> [Int64] { keys(value).compactMap { $0.numberValue?.int64Value }.sorted() }

// MARK: - Helpers for one-attribute ports

/// The problem a payload was refused with (nil when it mapped), and the one object it stored.
private typealias OneObject = (refusal: CartographError?, object: JSONValue?)

/// Maps `payload` with `mapping` in `store`; the refusal, and the object of `entity` with `key` when one is stored.
private func mapOne(_ store: StoreHarness, _ mapping: String, _ payload: JSONValue, entity: String, key: String) throws -> OneObject {
    var refusal: CartographError?
    do { try store.map(mapping, payload) } catch { refusal = error }
    let stored = try store.count(entity)
    if refusal != nil { #expect(stored == 0, "a failed payload stores nothing (R-P8, R-P11)") }
    return (refusal, stored == 1 ? try store.object(entity, key) : nil)
}

/// user.json (with `changes` applied) through RKTestUser's mapping plus `attributes`; the refusal and the stored user 31337.
private func mapUserFixture(_ attributes: [(String, JSONValue)], changes: [(String, JSONValue)] = []) throws -> (refusal: CartographError?, user: JSONValue?) {
    var fixture = try #require(try restKitFixture("user.json").objectValue)
    for (key, value) in changes { fixture[key] = value }
    var result: OneObject = (nil, nil)
    try withRestKitStore(mappings: [("user", userMapping(attributes))]) { (store) throws in
        result = try mapOne(store, "user", .object(fixture), entity: "User", key: "31337")
    }
    return (result.refusal, result.object)
}

/// A `TestMappable` representation (RKMappingOperationTest.m) through `{"id": "id", <attributes>}`.
private func mapMappable(_ attributes: [(String, JSONValue)], _ representation: JSONValue) throws -> OneObject {
    var mapped = JSONObject([("id", "id")])
    for (key, value) in attributes { mapped[key] = value }
    var result: OneObject = (nil, nil)
    try withRestKitStore(mappings: [("mappable", ["entity": "Mappable", "attributes": .object(mapped)])]) { (store) throws in
        result = try mapOne(store, "mappable", representation, entity: "Mappable", key: "1")
    }
    return result
}

/// Checks R-I1 for a one-entity model: the normalized model resolves `expected`, and two representations
/// with the same identity are one object (the second updates it).
private func expectIdentification(model: JSONValue, entity: String, expected: JSONValue,
                                  representation: JSONValue, key: JSONValue,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
    try withRestKitStore(model: model) { (store) throws in
        let attributes = model["entities"]?.arrayValue?.flatMap { $0["attributes"]?.arrayValue ?? [] }.compactMap { $0["name"] } ?? []
        #expect(try store.registerMapping("monkeys", ["entity": .string(entity), "attributes": .array(attributes)]), sourceLocation: sourceLocation)
        #expect(try store.identificationAttributes(of: entity) == expected, sourceLocation: sourceLocation)
        var first = try #require(representation.objectValue)
        first["nickName"] = "first"
        let inserted = try store.map("monkeys", .object(first))
        #expect(inserted.inserted == 1, sourceLocation: sourceLocation)
        #expect(inserted.objects == [["entity": .string(entity), "key": key]], sourceLocation: sourceLocation)
        first["nickName"] = "second"
        let updated = try store.map("monkeys", .object(first))
        #expect(updated.inserted == 0, sourceLocation: sourceLocation)
        #expect(updated.updated == 1, sourceLocation: sourceLocation)
        let stored = try store.objects(entity)
        #expect(stored.count == 1, sourceLocation: sourceLocation)
        #expect(stored.first?["nickName"] == "second", sourceLocation: sourceLocation)
    }
}

/// A one-entity model `name` with `attributes` (plus `nickName`, which no inference rule picks).
private func monkeyModel(_ name: String, _ attributes: [JSONValue], parent: JSONValue? = nil, userInfo: JSONValue? = nil) -> JSONValue {
    var entities: [JSONValue] = []
    if let parent { entities.append(parent) }
    entities.append(rkEntity(name, parent: parent?["name"]?.stringValue, attributes + [rkAttribute("nickName", "string")], userInfo: userInfo))
    return ["entities": .array(entities)]
}

@Suite(.serialized) struct RestKitPortTests {

    // MARK: - R-I1 identification attributes (RKEntityMappingTest.m)

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceOnInit() throws {
        // RestKit infers `parentID` for the Parent entity of its test model.
        try withRestKitStore(mappings: [("parents", ["entity": "Parent", "attributes": ["parentID", "name"]])]) { (store) throws in
            #expect(try store.identificationAttributes(of: "Parent") == ["parentID"])
            #expect(try store.map("parents", ["parentID": 1, "name": "Win"]).inserted == 1)
            let second = try store.map("parents", ["parentID": 1, "name": "Win Watters"])
            #expect(second.updated == 1)
            #expect(second.objects == [["entity": "Parent", "key": 1]])
            #expect(try store.count("Parent") == 1)
            #expect(try store.object("Parent", "1")["name"] == "Win Watters")
        }
    }

    @Test func R_I1_RKEntityMappingTest_initWithIdentifierInferenceDisabled() throws {
        let mapping: JSONValue = ["entity": "Parent", "attributes": ["parentID", "name"], "identificationInference": false]
        try withRestKitStore(mappings: [("parents", mapping)]) { (store) throws in
            #expect(try store.map("parents", ["parentID": 1, "name": "Win"]).inserted == 1)
            #expect(try store.map("parents", ["parentID": 1, "name": "Win"]).inserted == 1, "no identification: every representation inserts (R-I4)")
            #expect(try store.count("Parent") == 2)
        }
    }

    @Test func R_I4_RKEntityMappingTest_thatInitEntityIdentifierWithEmptyAttributesRaisesException() throws {
        // RestKit raises for `identificationAttributes = @[]`; docs/mapping.md makes `[]` mean
        // "no identification attributes": every representation inserts (R-I4). Following docs/rules.md.
        let mapping: JSONValue = ["entity": "Parent", "attributes": ["parentID", "name"], "identificationAttributes": []]
        try withRestKitStore(mappings: [("parents", mapping)]) { (store) throws in
            #expect(try store.map("parents", ["parentID": 7, "name": "Win"]).inserted == 1)
            let second = try store.map("parents", ["parentID": 7, "name": "Win"])
            #expect(second.inserted == 1)
            #expect(second.updated == 0)
            #expect(try store.count("Parent", where: "parentID == 7") == 2)
        }
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceForEntityWithLlamaCasedIDAttribute() throws {
        try expectIdentification(model: monkeyModel("Monkey", [rkAttribute("monkeyID", "integer64")]), entity: "Monkey",
                                 expected: ["monkeyID"], representation: ["monkeyID": 1], key: 1)
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceForEntityWithIDAttribute() throws {
        try expectIdentification(model: monkeyModel("Monkey", [rkAttribute("ID", "integer64")]), entity: "Monkey",
                                 expected: ["ID"], representation: ["ID": 1], key: 1)
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceForEntityWithIdentifierAttribute() throws {
        try expectIdentification(model: monkeyModel("Monkey", [rkAttribute("identifier", "string")]), entity: "Monkey",
                                 expected: ["identifier"], representation: ["identifier": "m-1"], key: "m-1")
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceForEntityWithURLAttribute() throws {
        try expectIdentification(model: monkeyModel("Monkey", [rkAttribute("URL", "uri")]), entity: "Monkey",
                                 expected: ["URL"], representation: ["URL": "http://restkit.org/monkeys/1"], key: "http://restkit.org/monkeys/1")
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceForEntityWithUrlAttribute() throws {
        try expectIdentification(model: monkeyModel("Monkey", [rkAttribute("url", "uri")]), entity: "Monkey",
                                 expected: ["url"], representation: ["url": "http://restkit.org/monkeys/1"], key: "http://restkit.org/monkeys/1")
    }

    @Test func R_I1_RKEntityMappingTest_inferenceOfSnakeCasedEntityName() throws {
        try expectIdentification(model: monkeyModel("Monkey", [rkAttribute("monkey_id", "integer64")]), entity: "Monkey",
                                 expected: ["monkey_id"], representation: ["monkey_id": 1], key: 1)
    }

    @Test func R_I1_RKEntityMappingTest_inferenceOfCompoundSnakeCasedEntityName() throws {
        try expectIdentification(model: monkeyModel("ArcticMonkey", [rkAttribute("arctic_monkey_id", "integer64")]), entity: "ArcticMonkey",
                                 expected: ["arctic_monkey_id"], representation: ["arctic_monkey_id": 1], key: 1)
    }

    @Test
    func R_I1_RKEntityMappingTest_inferenceOfSnakeCasedEntityNameWithAbbreviation() throws {
        try expectIdentification(model: monkeyModel("ArcticMonkeyURL", [rkAttribute("arctic_monkey_url_id", "integer64")]), entity: "ArcticMonkeyURL",
                                 expected: ["arctic_monkey_url_id"], representation: ["arctic_monkey_url_id": 1], key: 1)
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceSearchesParentEntities() throws {
        // `monkeyID` lives on the parent entity; the sub-entity Monkey infers it from its own name.
        let parent = rkEntity("Parent", [rkAttribute("monkeyID", "integer64")])
        try expectIdentification(model: monkeyModel("Monkey", [], parent: parent), entity: "Monkey",
                                 expected: ["monkeyID"], representation: ["monkeyID": 1], key: 1)
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceFromUserInfoKeyForSingleValue() throws {
        let model = monkeyModel("Monkey", [rkAttribute("monkeyID", "integer64"), rkAttribute("name", "string")],
                                userInfo: ["RKEntityIdentificationAttributes": "name"])
        try expectIdentification(model: model, entity: "Monkey", expected: ["name"],
                                 representation: ["name": "Reginald", "monkeyID": 1], key: "Reginald")
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceFromUserInfoKeyForCommaSeparatedString() throws {
        let model = monkeyModel("Monkey", [rkAttribute("monkeyID", "integer64"), rkAttribute("name", "string")],
                                userInfo: ["RKEntityIdentificationAttributes": "name,monkeyID"])
        try expectIdentification(model: model, entity: "Monkey", expected: ["name", "monkeyID"],
                                 representation: ["name": "Reginald", "monkeyID": 1], key: ["Reginald", 1])
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceFromUserInfoKeyForArrayOfValues() throws {
        let model = monkeyModel("Monkey", [rkAttribute("monkeyID", "integer64"), rkAttribute("name", "string")],
                                userInfo: ["RKEntityIdentificationAttributes": ["name", "monkeyID"]])
        try expectIdentification(model: model, entity: "Monkey", expected: ["name", "monkeyID"],
                                 representation: ["name": "Reginald", "monkeyID": 1], key: ["Reginald", 1])
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceFromUserInfoSearchesParentEntities() throws {
        let monkey = rkEntity("Monkey", [rkAttribute("monkeyID", "integer64"), rkAttribute("name", "string")],
                              userInfo: ["RKEntityIdentificationAttributes": "name"])
        try expectIdentification(model: monkeyModel("SubMonkey", [], parent: monkey), entity: "SubMonkey", expected: ["name"],
                                 representation: ["name": "Reginald", "monkeyID": 1], key: "Reginald")
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceFromUserInfoKeyRaisesErrorForInvalidValue() throws {
        // RestKit raises NSInvalidArgumentException; a model document is refused with 422 (R-M5).
        try withRestKitStore(model: nil) { (store) throws in
            let model = monkeyModel("Monkey", [rkAttribute("monkeyID", "integer64"), rkAttribute("name", "string")],
                                    userInfo: ["RKEntityIdentificationAttributes": 12345])
            let refused = #expect(throws: CartographError.self) { try store.registerModel(model) }
            #expect(refused?.code == .unprocessable, "\(String(describing: refused))")
            #expect(pointers(refused).contains { $0.hasPrefix("/entities/0") }, "\(pointers(refused))")
            #expect(!store.hasModel)
        }
    }

    @Test func R_I1_RKEntityMappingTest_entityIdentifierInferenceFromUserInfoKeyRaisesErrorForNonexistantAttributeName() throws {
        try withRestKitStore(model: nil) { (store) throws in
            let model = monkeyModel("Monkey", [rkAttribute("monkeyID", "integer64")],
                                    userInfo: ["RKEntityIdentificationAttributes": "nonExistant"])
            let refused = #expect(throws: CartographError.self) { try store.registerModel(model) }
            #expect(refused?.code == .unprocessable, "\(String(describing: refused))")
            #expect(pointers(refused).contains { $0.hasPrefix("/entities/0") }, "\(pointers(refused))")
            #expect(!store.hasModel)
        }
    }

    // MARK: - R-I2…R-I6 finding stored objects (RKManagedObjectMappingOperationDataSourceTest.m and the caches' tests)

    @Test func R_I4_RKManagedObjectMappingOperationDataSourceTest_shouldCreateNewManagedObjectInstancesWhenThereIsNoPrimaryKeyAttribute() throws {
        // Human has no attribute that inference picks, so every representation inserts.
        try withRestKitStore(mappings: [("humans", ["entity": "Human", "attributes": ["name"]])]) { (store) throws in
            #expect(try store.map("humans", ["name": "Blake"]).inserted == 1)
            let second = try store.map("humans", ["name": "Blake"])
            #expect(second.inserted == 1)
            #expect(second.updated == 0)
            #expect(try store.count("Human", where: "name == 'Blake'") == 2)
        }
    }

    @Test func R_I6_RKManagedObjectMappingOperationDataSourceTest_shouldCreateNewManagedObjectInstancesWhenThereIsNoPrimaryKeyInTheData() throws {
        // RestKit inserts a new Human for `{}`; R-I6 makes a representation without a value for an
        // identification attribute an invalid object (R-P8). Following docs/rules.md.
        let discarding: JSONValue = ["entity": "Human", "attributes": ["id": "railsID", "name": "name"], "identificationAttributes": ["railsID"],
                                     "discardsInvalidObjectsOnInsert": true]
        try withRestKitStore(mappings: [("humans", humansByRailsID), ("discarding", discarding)]) { (store) throws in
            let failed = store.refusal("humans", [:])
            #expect(failed?.code == .unprocessable, "\(String(describing: failed))")
            #expect(try store.count("Human") == 0)
            let discarded = try store.map("discarding", [:])
            #expect(discarded.inserted == 0)
            #expect(discarded.discarded.count == 1)
            #expect(try store.count("Human") == 0)
        }
    }

    @Test func R_I6_RKManagedObjectMappingOperationDataSourceTest_shouldCreateANewManagedObjectWhenThePrimaryKeyValueIsNSNull() throws {
        // RestKit inserts a new Human for `{"id": null}`; R-I6: invalid, and never a match for a stored
        // object whose identity is null. Following docs/rules.md.
        let anonymous: JSONValue = ["entity": "Human", "attributes": ["name"], "identificationAttributes": []]
        let discarding: JSONValue = ["entity": "Human", "attributes": ["id": "railsID", "name": "name"], "identificationAttributes": ["railsID"],
                                     "discardsInvalidObjectsOnInsert": true]
        try withRestKitStore(mappings: [("humans", humansByRailsID), ("anonymous", anonymous), ("discarding", discarding)]) { (store) throws in
            #expect(try store.map("anonymous", ["name": "Anonymous"]).inserted == 1, "a stored Human whose railsID is null")
            let failed = store.refusal("humans", ["id": nil, "name": "Blake"])
            #expect(failed?.code == .unprocessable, "\(String(describing: failed))")
            let discarded = try store.map("discarding", ["id": nil, "name": "Blake"])
            #expect(discarded.updated == 0)
            #expect(discarded.discarded.count == 1)
            let humans = try store.objects("Human")
            #expect(humans.count == 1)
            #expect(humans.first?["name"] == "Anonymous", "the null-identity object was not matched")
        }
    }

    @Test func R_I2_RKManagedObjectMappingOperationDataSourceTest_shouldFindExistingManagedObjectsByPrimaryKey() throws {
        // Ports both the FetchedResultsCache and the InMemoryCache variants.
        try withRestKitStore(mappings: [("humans", humansByRailsID)]) { (store) throws in
            #expect(try store.map("humans", ["id": 123]).inserted == 1)
            let found = try store.map("humans", ["id": 123, "name": "Blake"])
            #expect(found.inserted == 0)
            #expect(found.updated == 1)
            let humans = try store.objects("Human")
            #expect(humans.count == 1)
            #expect(humans.first?["railsID"] == 123)
            #expect(humans.first?["name"] == "Blake")
        }
    }

    @Test func R_I2_RKManagedObjectMappingOperationDataSourceTest_shouldFindExistingManagedObjectsByPrimaryKeyPath() throws {
        let mapping: JSONValue = ["entity": "Human", "attributes": ["monkey.id": "railsID", "monkey.name": "name"], "identificationAttributes": ["railsID"]]
        try withRestKitStore(mappings: [("humans", mapping)]) { (store) throws in
            #expect(try store.map("humans", ["monkey": ["id": 123]]).inserted == 1)
            let found = try store.map("humans", ["monkey": ["id": 123, "name": "Blake"]])
            #expect(found.inserted == 0)
            #expect(found.updated == 1)
            let humans = try store.objects("Human")
            #expect(humans.count == 1)
            #expect(humans.first?["name"] == "Blake")
        }
    }

    @Test func R_I2_RKManagedObjectMappingOperationDataSourceTest_usingDateAsIdentifierAttribute() throws {
        // Ports both the FetchRequestCache and the InMemoryCache variants; the second payload writes the same
        // instant with an offset, which R-I2 compares after transformation.
        let mapping: JSONValue = ["entity": "Human", "attributes": ["monkey.created_at": "createdAt", "monkey.name": "name"],
                                  "identificationAttributes": ["createdAt"]]
        try withRestKitStore(mappings: [("humans", mapping)]) { (store) throws in
            #expect(try store.map("humans", ["monkey": ["created_at": "2012-03-22T11:05:42Z"]]).inserted == 1)
            let same = try store.map("humans", ["monkey": ["created_at": "2012-03-22T11:05:42Z", "name": "Blake"]])
            #expect(same.inserted == 0)
            #expect(same.updated == 1)
            let offset = try store.map("humans", ["monkey": ["created_at": "2012-03-22T12:05:42+01:00", "name": "Blake Watters"]])
            #expect(offset.inserted == 0)
            #expect(offset.updated == 1)
            let humans = try store.objects("Human")
            #expect(humans.count == 1)
            #expect(humans.first?["createdAt"] == "2012-03-22T11:05:42.000Z")
            #expect(humans.first?["name"] == "Blake Watters")
        }
    }

    @Test func R_I2_RKManagedObjectMappingOperationDataSourceTest_thatCreationOfNewObjectWithIncorrectTypeValueForPrimaryKeyAddsToCache() throws {
        let mapping: JSONValue = ["entity": "Human", "attributes": ["monkey.name": "name", "monkey.railsID": "railsID"], "identificationAttributes": ["railsID"]]
        try withRestKitStore(mappings: [("humans", mapping)]) { (store) throws in
            #expect(try store.map("humans", ["monkey": ["name": "Testing", "railsID": 12345]]).inserted == 1)
            let found = try store.map("humans", ["monkey": ["railsID": "12345"]])
            #expect(found.inserted == 0)
            #expect(found.unchanged == 1, "\"12345\" is the integer 12345: nothing changed (R-P4)")
            let humans = try store.objects("Human")
            #expect(humans.count == 1)
            #expect(humans.first?["railsID"] == 12345)
            #expect(humans.first?["name"] == "Testing")
        }
    }

    @Test func R_I2_RKEntityByAttributeCacheTest_retrievalOfNumericPropertyByStringValue() throws {
        try withRestKitStore(mappings: [("humans", humansByRailsID)]) { (store) throws in
            #expect(try store.map("humans", ["id": 12345]).inserted == 1)
            let found = try store.map("humans", ["id": "12345", "name": "Blake"])
            #expect(found.inserted == 0)
            #expect(found.updated == 1)
            #expect(try store.count("Human", where: "railsID == 12345") == 1)
            #expect(try store.count("Human") == 1)
        }
    }

    @Test func R_I1_R_I2_RKFetchRequestMappingCacheTest_fetchRequestMappingCacheReturnsObjectsWithStringPrimaryKey() throws {
        // RKEvent has a string primary key `eventID`; Cartograph infers it for Event (R-I1).
        try withRestKitStore(mappings: [("events", ["entity": "Event", "attributes": ["eventID", "summary"]])]) { (store) throws in
            #expect(try store.map("events", ["eventID": "e-1234-a8-b12", "summary": "Birthday"]).inserted == 1)
            let found = try store.map("events", ["eventID": "e-1234-a8-b12", "summary": "Birthday party"])
            #expect(found.updated == 1)
            #expect(found.objects == [["entity": "Event", "key": "e-1234-a8-b12"]])
            #expect(try store.count("Event") == 1)
            #expect(try store.object("Event", "e-1234-a8-b12")["summary"] == "Birthday party")
        }
    }

    @Test func R_I2_RKManagedObjectMappingOperationDataSourceTest_customAttributeMappingValueTransformer() throws {
        // The identity value is compared after the attribute's transformer (R-I2): "blake watters" finds
        // the object stored as "BLAKE WATTERS".
        let mapping: JSONValue = ["entity": "Human", "attributes": ["name": ["to": "name", "transformer": "Uppercase"]], "identificationAttributes": ["name"]]
        try withRestKitStore(mappings: [("humans", mapping)]) { (store) throws in
            #expect(try store.map("humans", ["name": "Blake Watters"]).inserted == 1)
            #expect(try store.objects("Human").first?["name"] == "BLAKE WATTERS")
            let found = try store.map("humans", ["name": "blake watters"])
            #expect(found.inserted == 0)
            #expect(found.unchanged == 1)
            #expect(try store.count("Human") == 1)
        }
    }

    @Test func R_I2_RKManagedObjectMappingOperationDataSourceTest_compoundEntityIdentifier() throws {
        // Ports both the FetchRequestCache and the InMemoryCache variants.
        let mapping: JSONValue = ["entity": "Human", "attributes": ["monkey.id": "railsID", "monkey.name": "name", "monkey.created_at": "createdAt"],
                                  "identificationAttributes": ["railsID", "name", "createdAt"]]
        try withRestKitStore(mappings: [("humans", mapping)]) { (store) throws in
            #expect(try store.map("humans", ["monkey": ["id": 12345, "name": "Reginald", "created_at": "2012-03-22T11:05:42Z"]]).inserted == 1)
            let found = try store.map("humans", ["monkey": ["id": "12345", "name": "Reginald", "created_at": "2012-03-22T11:05:42Z"]])
            #expect(found.inserted == 0)
            #expect(found.unchanged == 1)
            #expect(try store.count("Human") == 1)
            let other = try store.map("humans", ["monkey": ["id": 12345, "name": "Other", "created_at": "2012-03-22T11:05:42Z"]])
            #expect(other.inserted == 1, "every identification attribute must match")
            #expect(try store.count("Human") == 2)
        }
    }

    @Test func R_I3_RKManagedObjectMappingOperationDataSourceTest_entityIdentifierWithPredicate() throws {
        // Two stored Humans share railsID 123; `identificationPredicate` picks the one younger than 30.
        let seed: JSONValue = ["entity": "Human", "attributes": ["railsID", "name", "age"], "identificationAttributes": []]
        let young: JSONValue = ["entity": "Human", "attributes": ["id": "railsID", "nick": "nickName"], "identificationAttributes": ["railsID"],
                                "identificationPredicate": "age < 30"]
        try withRestKitStore(mappings: [("seed", seed), ("young", young)]) { (store) throws in
            let seeded = try store.map("seed", [["railsID": 123, "name": "Colin", "age": 28], ["railsID": 123, "name": "Blake", "age": 30]])
            #expect(seeded.inserted == 2)
            let found = try store.map("young", ["id": 123, "nick": "found"])
            #expect(found.inserted == 0)
            #expect(found.updated == 1)
            #expect(try store.objects("Human", where: "name == 'Colin'").first?["nickName"] == "found")
            #expect(try store.objects("Human", where: "name == 'Blake'").first?["nickName"] == .null)
            #expect(try store.count("Human") == 2)
        }
    }

    // MARK: - R-I5 one object per identity

    @Test func R_I5_RKManagedObjectMappingOperationDataSourceTest_mappingAPayloadContainingRepeatedObjectsDoesNotYieldDuplicates() throws {
        // parents_and_children.json: Tom (2222) and Eli (3333) appear under both parents. Ports both the
        // FetchRequestMappingCache and the InMemoryMappingCache variants.
        let mapping: JSONValue = ["entity": "Parent", "keyPath": "parents", "attributes": ["parentID", "name"], "identificationAttributes": ["parentID"],
                                  "relationships": [["from": "children", "to": "children",
                                                     "mapping": ["entity": "Child", "attributes": ["name", "childID"], "identificationAttributes": ["childID"]]]]]
        try withRestKitStore(mappings: [("parents", mapping)]) { (store) throws in
            let result = try store.map("parents", try restKitFixture("parents_and_children.json"))
            #expect(result.inserted == 6)
            #expect(result.updated == 0)
            #expect(result.objects == [["entity": "Parent", "key": 12345], ["entity": "Parent", "key": 4567]])
            #expect(try store.count("Parent") == 2)
            #expect(try store.count("Child") == 4)
            #expect(try store.count("Human") == 6, "the Human hierarchy holds nothing else")
            #expect(sortedInts(try store.object("Child", "2222")["parents"]) == [4567, 12345])
            #expect(sortedInts(try store.object("Parent", "12345")["children"]) == [1111, 2222, 3333])
            #expect(sortedInts(try store.object("Parent", "4567")["children"]) == [1, 2222, 3333])
        }
    }

    @Test func R_I5_RKManagedObjectMappingOperationDataSourceTest_thatMappingObjectsWithTheSameIdentificationAttributesAcrossTwoContextsDoesNotCreateDuplicateObjects() throws {
        // Two contexts = two payloads, each mapped in its own transaction.
        let mapping: JSONValue = ["entity": "Human", "attributes": ["name", "railsID"], "identificationAttributes": ["railsID"]]
        try withRestKitStore(mappings: [("humans", mapping)]) { (store) throws in
            #expect(try store.map("humans", ["name": "Blake", "railsID": 31337]).inserted == 1)
            let second = try store.map("humans", ["name": "Blake", "railsID": 31337])
            #expect(second.inserted == 0)
            #expect(second.unchanged == 1)
            #expect(try store.count("Human", where: "railsID == 31337") == 1)
        }
    }

    // MARK: - R-P5 identity values stand for objects

    private static let catsFromIdentifiers: JSONValue = ["entity": "Human", "keyPath": "userSessions", "attributes": ["identification": "railsID"],
                                                         "identificationAttributes": ["railsID"],
                                                         "relationships": [["from": "catIDs", "to": "cats",
                                                                            "mapping": ["entity": "Cat", "attributes": ["railsID"], "identificationAttributes": ["railsID"]]]]]
    private static let catIDs: JSONValue = ["418", "419", "431", "441", "457", "486", "504"]

    @Test func R_P5_RKManagedObjectMappingOperationDataSourceTest_mappingIdentificationAttributesFromElementsOnAnArray() throws {
        try withRestKitStore(mappings: [("sessions", Self.catsFromIdentifiers)]) { (store) throws in
            let result = try store.map("sessions", ["userSessions": ["name": "Mr. User", "identification": 54321, "catIDs": Self.catIDs]])
            #expect(result.inserted == 8, "the human and seven stubs")
            let human = try #require(try store.objects("Human", where: "railsID == 54321").first)
            #expect(keys(human["cats"]).count == 7)
            let cats = try store.objects("Cat")
            #expect(cats.compactMap { $0["railsID"]?.numberValue?.int64Value }.sorted() == [418, 419, 431, 441, 457, 486, 504])
            #expect(cats.allSatisfy { $0["_stub"] == true })
            #expect(Set(keys(human["cats"])) == Set(rkIDs(cats)))
        }
    }

    @Test func R_P5_RKManagedObjectMappingOperationDataSourceTest_mappingIdentificationAttributesFromElementsOnAnArrayDoesNotDuplicateManagedObjects() throws {
        let seed: JSONValue = ["entity": "Cat", "attributes": ["railsID", "name"], "identificationAttributes": ["railsID"]]
        try withRestKitStore(mappings: [("sessions", Self.catsFromIdentifiers), ("cats", seed)]) { (store) throws in
            #expect(try store.map("cats", [["railsID": 418, "name": "Asia"], ["railsID": 419, "name": "Roy"]]).inserted == 2)
            let result = try store.map("sessions", ["userSessions": ["name": "Mr. User", "identification": 54321, "catIDs": Self.catIDs]])
            #expect(result.inserted == 6, "the human and five stubs")
            #expect(try store.count("Cat", where: "railsID == 418") == 1)
            #expect(try store.count("Cat", where: "railsID == 419") == 1)
            #expect(try store.count("Cat") == 7)
            let asia = try #require(try store.objects("Cat", where: "railsID == 418").first)
            #expect(asia["name"] == "Asia")
            #expect(asia["_stub"] == nil, "an existing object is found, not stubbed")
        }
    }

    @Test func R_P5_RKManagedObjectMappingOperationDataSourceTest_mappingStringIdentificationAttributesFromElementsOnAnArrayDoesNotDuplicateManagedObjects() throws {
        let mapping: JSONValue = ["entity": "Human", "keyPath": "userSessions", "attributes": ["identification": "railsID"], "identificationAttributes": ["railsID"],
                                  "relationships": [["from": "catIDs", "to": "cats", "mapping": catsByName]]]
        try withRestKitStore(mappings: [("sessions", mapping)]) { (store) throws in
            let result = try store.map("sessions", ["userSessions": [
                ["name": "Mr. User", "identification": 54321, "catIDs": Self.catIDs],
                ["name": "Miss User", "identification": 54322, "catIDs": Self.catIDs],
            ]])
            #expect(result.inserted == 9, "two humans and seven cats")
            #expect(try store.count("Cat", where: "name == '418'") == 1)
            #expect(try store.count("Cat", where: "name == '419'") == 1)
            #expect(try store.count("Cat") == 7)
            // Cat.human is the to-one inverse of Human.cats, so the later human ends up owning the seven cats.
            #expect(keys(try store.objects("Human", where: "railsID == 54322").first?["cats"]).count == 7)
        }
    }

    // MARK: - R-P5 nested relationships, null and empty values (RKEntityMappingTest.m, RKManagedObjectMappingOperationDataSourceTest.m)

    @Test func R_P5_RKEntityMappingTest_thatMappingAnEmptyArrayOnToAnExistingRelationshipDisassociatesTheRelatedObjects() throws {
        // RestKit maps onto the Human it is handed; the port identifies it by `"id": 1`.
        try withRestKitStore(mappings: [("humans", humanWithCats())]) { (store) throws in
            #expect(try store.map("humans", ["id": 1, "name": "Blake", "cats": [["name": "Asia"], ["name": "Roy"]]]).inserted == 3)
            #expect(keys(try store.objects("Human").first?["cats"]).count == 2)
            let result = try store.map("humans", ["id": 1, "name": "Blake Watters", "cats": []])
            #expect(result.deleted == 0)
            let human = try #require(try store.objects("Human").first)
            #expect(human["cats"] == [])
            #expect(human["name"] == "Blake Watters")
            #expect(try store.count("Cat") == 2, "set: the old cats stay in the store, disconnected (R-P6)")
            #expect(try store.objects("Cat").allSatisfy { $0["human"] == .null })
        }
    }

    @Test func R_P5_RKEntityMappingTest_thatMappingAnNullArrayOnToAnExistingToOneRelationshipDisassociatesTheRelatedObjects() throws {
        try withRestKitStore(mappings: [("humans", humanWithCats())]) { (store) throws in
            _ = try store.map("humans", ["id": 1, "name": "Blake", "favoriteCat": ["name": "Asia"]])
            #expect(try store.objects("Human").first?["favoriteCat"] != .null)
            _ = try store.map("humans", ["id": 1, "name": "Blake Watters", "favoriteCat": nil])
            #expect(try store.objects("Human").first?["favoriteCat"] == .null)
            #expect(try store.count("Cat") == 1)
        }
    }

    @Test func R_P5_RKEntityMappingTest_thatMappingAnNullArrayOnToAnExistingToManyRelationshipDisassociatesTheRelatedObjects() throws {
        try withRestKitStore(mappings: [("humans", humanWithCats())]) { (store) throws in
            _ = try store.map("humans", ["id": 1, "name": "Blake", "cats": [["name": "Asia"], ["name": "Roy"]]])
            _ = try store.map("humans", ["id": 1, "name": "Blake Watters", "cats": nil])
            #expect(try store.objects("Human").first?["cats"] == [])
            #expect(try store.count("Cat") == 2)
        }
    }

    @Test func R_P5_RKManagedObjectMappingOperationDataSourceTest_shouldLoadNestedHasManyRelationship() throws {
        // RestKit's cat mapping names `railsID` as identity without mapping it (a nil identity inserts);
        // under R-I6 that would be invalid, so the port identifies cats by name. The human gets `"id": 1`.
        let mapping: JSONValue = ["entity": "Human", "attributes": ["id": "railsID", "name": "name", "favoriteCatID": "favoriteCatID"],
                                  "identificationAttributes": ["railsID"], "relationships": [["from": "cats", "to": "cats", "mapping": catsByName]]]
        try withRestKitStore(mappings: [("humans", mapping)]) { (store) throws in
            let result = try store.map("humans", ["id": 1, "name": "Blake", "favoriteCatID": 31337, "cats": [["name": "Asia"]]])
            #expect(result.inserted == 2)
            let human = try #require(try store.objects("Human").first)
            #expect(human["favoriteCatID"] == 31337)
            let cats = try store.objects("Cat")
            #expect(cats.map { $0["name"] } == ["Asia"])
            #expect(human["cats"] == .array(rkIDs(cats)))
        }
    }

    @Test func R_P5_R_P6_RKManagedObjectMappingOperationDataSourceTest_shouldLoadOrderedHasManyRelationship() throws {
        // `cats` -> the ordered `catsInOrderByAge`; two cats (RestKit's payload has one) show the order is kept.
        let mapping: JSONValue = ["entity": "Human", "attributes": ["id": "railsID", "name": "name"], "identificationAttributes": ["railsID"],
                                  "relationships": [["from": "cats", "to": "catsInOrderByAge", "mapping": catsByName]]]
        try withRestKitStore(mappings: [("humans", mapping)]) { (store) throws in
            _ = try store.map("humans", ["id": 1, "name": "Blake", "cats": [["name": "Roy"], ["name": "Asia"]]])
            let human = try #require(try store.objects("Human", including: ["catsInOrderByAge"]).first)
            #expect(keys(human["catsInOrderByAge"]).map { $0["name"] } == ["Roy", "Asia"])
        }
    }

    @Test func R_P5_RKManagedObjectMappingOperationDataSourceTest_shouldMapNullToAHasManyRelationship() throws {
        try withRestKitStore(mappings: [("humans", humanWithCats())]) { (store) throws in
            let result = try store.map("humans", ["id": 1, "name": "Blake", "cats": nil])
            #expect(result.inserted == 1)
            #expect(try store.objects("Human").first?["cats"] == [])
        }
    }

    @Test func R_P5_RKManagedObjectMappingOperationDataSourceTest_shouldLoadNestedHasManyRelationshipWithoutABackingClass() throws {
        let mapping: JSONValue = ["entity": "Storm", "attributes": ["name"],
                                  "relationships": [["from": "clouds", "to": "clouds", "mapping": ["entity": "Cloud", "attributes": ["name"]]]]]
        try withRestKitStore(mappings: [("storms", mapping)]) { (store) throws in
            let result = try store.map("storms", ["name": "Hurricane", "clouds": [["name": "Nimbus"]]])
            #expect(result.inserted == 2)
            let storm = try #require(try store.objects("Storm").first)
            let cloud = try #require(try store.objects("Cloud").first)
            #expect(cloud["name"] == "Nimbus")
            #expect(storm["clouds"] == .array(rkIDs([cloud])))
            #expect(cloud["storm"] == storm["_id"], "the inverse is set")
        }
    }

    @Test func R_P5_RKManagedObjectMappingOperationDataSourceTest_shouldConnectManyToManyRelationships() throws {
        // RestKit identifies the parent by railsID without one in the payload; the port gives it its
        // inferred `parentID` (R-I6). Children are identified by name, as in RestKit.
        let mapping: JSONValue = ["entity": "Parent", "attributes": ["parentID", "name", "age"],
                                  "relationships": [["from": "children", "to": "children",
                                                     "mapping": ["entity": "Child", "attributes": ["name"], "identificationAttributes": ["name"]]]]]
        try withRestKitStore(mappings: [("parents", mapping)]) { (store) throws in
            let result = try store.map("parents", ["parentID": 1, "name": "Win", "age": 34, "children": [["name": "Maya"], ["name": "Brady"]]])
            #expect(result.inserted == 3)
            let parent = try #require(try store.objects("Parent", including: ["children"]).first)
            #expect(Set(keys(parent["children"]).compactMap { $0["name"]?.stringValue }) == ["Maya", "Brady"])
            let children = try store.objects("Child", including: ["parents"])
            #expect(children.count == 2)
            for child in children {
                #expect(keys(child["parents"]).map { $0["name"] } == ["Win"], "the inverse holds exactly the parent")
            }
        }
    }

    // MARK: - R-P1/R-P2 key paths and collections (RKObjectMappingNextGenTest.m with user.json, users.json, nested_user.json)

    @Test func R_P1_RKObjectMappingNextGenTest_shouldPerformBasicMapping() throws {
        try withRestKitStore(mappings: [("user", userMapping())]) { (store) throws in
            let result = try store.map("user", try restKitFixture("user.json"))
            #expect(result.inserted == 1)
            #expect(result.objects == [["entity": "User", "key": 31337]])
            let user = try store.object("User", "31337")
            #expect(user["userID"] == 31337)
            #expect(user["name"] == "Blake Watters")
        }
    }

    @Test func R_P2_RKObjectMappingNextGenTest_shouldMapACollectionOfObjects() throws {
        // Also RKObjectMappingNextGenTest.testShouldMapACollectionOfSimpleObjectDictionaries.
        try withRestKitStore(mappings: [("users", userMapping())]) { (store) throws in
            let result = try store.map("users", try restKitFixture("users.json"))
            #expect(result.inserted == 3)
            #expect(result.objects == [["entity": "User", "key": 31337], ["entity": "User", "key": 187], ["entity": "User", "key": 7]])
            #expect(try store.count("User") == 3)
            #expect(try store.object("User", "31337")["name"] == "Blake Watters")
        }
    }

    @Test func R_P2_RKObjectMappingNextGenTest_shouldMapRegisteredSubKeyPathsOfAnUnmappableDictionaryAndReturnTheResults() throws {
        try withRestKitStore(mappings: [("user", userMapping(extra: [("keyPath", "user")]))]) { (store) throws in
            let result = try store.map("user", try restKitFixture("nested_user.json"))
            #expect(result.inserted == 1)
            #expect(result.objects == [["entity": "User", "key": 31337]])
            #expect(try store.object("User", "31337")["name"] == "Blake Watters")
        }
    }

    @Test func R_P2_RKObjectMappingNextGenTest_shouldInformTheDelegateWhenCheckingForObjectMappingForKeyPathIsNotSuccessful() throws {
        // RestKit reports "No mappable object representations were found at the key paths searched." as an
        // error (also testShouldAddAnErrorWhenAttemptingToMapADictionaryWithoutAnObjectMapping); R-P2
        // makes a missing keyPath map nothing with 200 and all counts 0. Following docs/rules.md.
        try withRestKitStore(mappings: [("users", userMapping(extra: [("keyPath", "users")]))]) { (store) throws in
            let result = try store.map("users", try restKitFixture("user.json"))
            #expect(result.inserted == 0)
            #expect(result.updated == 0)
            #expect(result.unchanged == 0)
            #expect(result.deleted == 0)
            #expect(result.objects == [])
            #expect(try store.count("User") == 0)
        }
    }

    @Test func R_P5_RKObjectMappingNextGenTest_shouldIgnoreNSNullInCollections() throws {
        // RestKit maps `[users valueForKey:@"friend"]` = [null, {Anthony Stark}, null] and gets one object; the
        // port sends that array as a to-many (docs/mapping.md: null elements of a to-many are skipped).
        let users = try #require(try restKitFixture("users.json").arrayValue)
        let friendReps = JSONValue.array(users.map { $0["friend"] ?? .null })
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [friendsRelationship("friends")])]))]) { (store) throws in
            let result = try store.map("user", ["id": 1, "name": "Blake", "friends": friendReps])
            #expect(result.inserted == 2)
            #expect(try store.object("User", "1")["friends"] == [255])
            #expect(try store.object("User", "255")["name"] == "Anthony Stark")
        }
    }

    @Test func R_P1_RKObjectMappingNextGenTest_shouldMapANestedKeyPathToAnAttribute() throws {
        let mapped = try mapUserFixture([("address.country", "country")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["country"] == "USA")
    }

    @Test func R_P1_R_P3_RKObjectMappingNextGenTest_typeTransformationAtKeyPath() throws {
        // RestKit's destination is `address.addressID`; Cartograph maps to attributes only, so the port
        // keeps the dotted source and the string -> number coercion into `luckyNumber`.
        let mapped = try mapUserFixture([("this.that", "luckyNumber")], changes: [("this", ["that": "12345"])])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["luckyNumber"] == 12345)
    }

    @Test func R_P1_RKObjectMappingNextGenTest_shouldMapANestedArrayOfStringsToAnAttribute() throws {
        let mapped = try mapUserFixture([("interests", "interests")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["interests"] == ["Hacking", "Running"])
    }

    @Test func R_P1_RKObjectMappingNextGenTest_shouldMapANestedDictionaryToAnAttribute() throws {
        let mapped = try mapUserFixture([("address", "addressDictionary")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        let stored = try #require(mapped.user?["addressDictionary"]?.objectValue)
        #expect(stored["city"] == "Carrboro")
        #expect(stored["state"] == "North Carolina")
        #expect(stored["id"] == 1234)
        #expect(stored["country"] == "USA")
        #expect(stored.count == 4)
    }

    // MARK: - R-P3 coercion (RKObjectMappingNextGenTest.m with user.json; RKMappingOperationTest.m)

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapAStringToADateAttribute() throws {
        // user.json's birthdate is "11/27/1982", which RestKit's default date formatters read. R-P3 coerces
        // only ISO 8601 strings and numbers to dates, so without a transformer this is a validation error, and
        // with the declared `SlashDate` transformer (dateFormat MM/dd/yyyy, UTC) it maps. Following docs/rules.md.
        let plain = try mapUserFixture([("birthdate", "birthDate")])
        #expect(plain.refusal?.code == .unprocessable, "\(String(describing: plain.refusal))")
        let formatted = try mapUserFixture([("birthdate", ["to": "birthDate", "transformer": "SlashDate"])])
        #expect(formatted.refusal == nil, "\(String(describing: formatted.refusal))")
        #expect(formatted.user?["birthDate"] == "1982-11-27T00:00:00.000Z")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapStringToURL() throws {
        let mapped = try mapUserFixture([("website", "website")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["website"] == "http://restkit.org/")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapAStringToANumberBool() throws {
        let mapped = try mapUserFixture([("is_developer", "isDeveloper")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["isDeveloper"] == true)
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapAYesStringToANumberBool() throws {
        let mapped = try mapUserFixture([("is_developer", "isDeveloper")], changes: [("is_developer", "yes")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["isDeveloper"] == true)
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapANoStringToANumberBool() throws {
        let mapped = try mapUserFixture([("is_developer", "isDeveloper")], changes: [("is_developer", "NO")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["isDeveloper"] == false)
    }

    // RestKit also reads "T", "f", "y" and "n" as booleans. R-P3 lists exactly
    // "true"/"false"/"yes"/"no"/"1"/"0", and a value that cannot be coerced is a validation error. Following docs/rules.md.

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapAShortTrueStringToANumberBool() throws {
        let mapped = try mapUserFixture([("is_developer", "isDeveloper")], changes: [("is_developer", "T")])
        #expect(mapped.refusal?.code == .unprocessable, "\(String(describing: mapped.refusal))")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapAShortFalseStringToANumberBool() throws {
        let mapped = try mapUserFixture([("is_developer", "isDeveloper")], changes: [("is_developer", "f")])
        #expect(mapped.refusal?.code == .unprocessable, "\(String(describing: mapped.refusal))")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapAYCharacterStringToANumberBool() throws {
        let mapped = try mapUserFixture([("is_developer", "isDeveloper")], changes: [("is_developer", "y")])
        #expect(mapped.refusal?.code == .unprocessable, "\(String(describing: mapped.refusal))")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapANCharacterStringToANumberBool() throws {
        let mapped = try mapUserFixture([("is_developer", "isDeveloper")], changes: [("is_developer", "n")])
        #expect(mapped.refusal?.code == .unprocessable, "\(String(describing: mapped.refusal))")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapAStringToANumber() throws {
        let mapped = try mapUserFixture([("lucky_number", "luckyNumber")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["luckyNumber"] == 187)
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapAStringToADecimalNumber() throws {
        let mapped = try mapUserFixture([("weight", "weight")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["weight"] == "131.3", "decimals render as strings (docs/api.md#json)")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapANumberToANSDecimalNumber() throws {
        let mapped = try mapUserFixture([("lucky_number", "weight")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["weight"] == "187")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapANumberToADate() throws {
        // 1982-11-27T00:00:00Z as seconds since 1970 (RestKit computes it in the local time zone).
        let mapped = try mapUserFixture([("dateAsNumber", "birthDate")], changes: [("dateAsNumber", 407203200)])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["birthDate"] == "1982-11-27T00:00:00.000Z")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_shouldMapNSDateDistantFutureDateStringToADate() throws {
        let mapped = try mapUserFixture([("birthdate", "birthDate")], changes: [("birthdate", "3001-01-01T00:00:00Z")])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.user?["birthDate"] == "3001-01-01T00:00:00.000Z")
    }

    @Test func R_P3_RKObjectMappingNextGenTest_thatAttributeMappingToAPrimitiveValueFromUnexpectedObjectTypeDoesNotCrash() throws {
        // RestKit leaves `age` at 0 for `{"age": {"wrong": "data"}}`; R-P3: a value that cannot be
        // coerced is a validation error (422, nothing stored). Following docs/rules.md.
        let mapped = try mapUserFixture([("age", "luckyNumber")], changes: [("age", ["wrong": "data"])])
        #expect(mapped.refusal?.code == .unprocessable, "\(String(describing: mapped.refusal))")
    }

    @Test func R_P3_RKMappingOperationTest_shouldSuccessfullyMapBoolsToStrings() throws {
        // R-P3 does not list boolean -> string; RestKit (the seed's library) gives "true".
        let mapped = try mapMappable([("boolString", "boolString")], ["id": 1, "boolString": true])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["boolString"] == "true")
    }

    @Test func R_P3_RKMappingOperationTest_shouldSuccessfullyMapTrueBoolsToNSNumbers() throws {
        let mapped = try mapMappable([("boolNumber", "boolNumber")], ["id": 1, "boolNumber": true])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["boolNumber"] == 1)
    }

    @Test func R_P3_RKMappingOperationTest_shouldSuccessfullyMapFalseBoolsToNSNumbers() throws {
        let mapped = try mapMappable([("boolNumber", "boolNumber")], ["id": 1, "boolNumber": false])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["boolNumber"] == 0)
    }

    @Test func R_P3_RKMappingOperationTest_shouldSuccessfullyMapNumbersToStrings() throws {
        // Also RKObjectMappingNextGenTest.testShouldMapANumberToAString (whose fixture value is already a string).
        let mapped = try mapMappable([("number", "boolString")], ["id": 1, "number": 123])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["boolString"] == "123")
    }

    @Test func R_P3_RKMappingOperationTest_shouldSuccessfullyMapLongIntegerStringsToNumbers() throws {
        let mapped = try mapMappable([("numberString", "longNumber")], ["id": 1, "numberString": "69726278940360707"])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["longNumber"]?.numberValue?.int64Value == 69726278940360707)
    }

    @Test func R_P3_RKMappingOperationTest_shouldSuccessfullyMapFloatingPointNumberStringsToNumbers() throws {
        let mapped = try mapMappable([("numberString", "number")], ["id": 1, "numberString": "1234.5678"])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["number"]?.numberValue?.doubleValue == 1234.5678)
    }

    @Test func R_P3_RKMappingOperationTest_shouldMapAUTCDateWithoutChangingTheTimeZone() throws {
        let mapped = try mapMappable([("date", "date")], ["id": 1, "date": "2011-07-07T04:35:28Z"])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["date"] == "2011-07-07T04:35:28.000Z")
    }

    @Test
    func R_P3_RKMappingOperationTest_shouldMapAISODateStringAppropriately() throws {
        // An ISO 8601 date-time without seconds.
        let mapped = try mapMappable([("date", "date")], ["id": 1, "date": "2011-08-09T00:00Z"])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["date"] == "2011-08-09T00:00:00.000Z")
    }

    @Test func R_P3_RKMappingOperationTest_shouldMapAUnixTimestampStringAppropriately() throws {
        // RestKit reads the numeric string "457574400" as seconds since 1970 by default; R-P3 names
        // numbers (not numeric strings) for dates, so the port names `UnixSecondsToDate`.
        let mapped = try mapMappable([("date", ["to": "date", "transformer": "UnixSecondsToDate"])], ["id": 1, "date": "457574400"])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["date"] == "1984-07-02T00:00:00.000Z")
    }

    @Test func R_P3_RKMappingOperationTest_shouldMapASimpleDateStringAppropriately() throws {
        // "08/09/2011" through the declared `SlashDate` transformer (RestKit's default MM/dd/yyyy formatter).
        let mapped = try mapMappable([("date", ["to": "date", "transformer": "SlashDate"])], ["id": 1, "date": "08/09/2011"])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["date"] == "2011-08-09T00:00:00.000Z")
    }

    @Test func R_P3_RKMappingOperationTest_shouldMapAStringIntoTheLocalTimeZone() throws {
        // RestKit's formatter is "MM-dd-yyyy" in EDT (America/New_York): midnight is 05:00 UTC in November.
        let mapped = try mapMappable([("date", ["to": "date", "transformer": "DashDateNewYork"])], ["id": 1, "date": "11-27-1982"])
        #expect(mapped.refusal == nil, "\(String(describing: mapped.refusal))")
        #expect(mapped.object?["date"] == "1982-11-27T05:00:00.000Z")
    }

    // MARK: - R-P4 missing keys, null, unchanged values, defaults

    @Test func R_P4_RKMappingOperationTest_shouldNotUpdateEqualURLProperties() throws {
        let mapping: JSONValue = ["entity": "Mappable", "attributes": ["id", "url"]]
        try withRestKitStore(mappings: [("mappable", mapping)]) { (store) throws in
            #expect(try store.map("mappable", ["id": 1, "url": "http://www.restkit.org"]).inserted == 1)
            let changes = try store.changes().count
            let second = try store.map("mappable", ["id": 1, "url": "http://www.restkit.org"])
            #expect(second.unchanged == 1)
            #expect(second.updated == 0)
            #expect(try store.changes().count == changes, "an unchanged value writes no change-feed entry")
            #expect(try store.object("Mappable", "1")["url"] == "http://www.restkit.org")
        }
    }

    /// The mapping RestKit's benchmark maps benchmark_parents_and_children.json with.
    private static let benchmarkParentsMapping: JSONValue = [
        "entity": "Parent", "keyPath": "parents", "attributes": ["parentID", "name"], "identificationAttributes": ["parentID"],
        "relationships": [["from": "children", "to": "children",
                           "mapping": ["entity": "Child", "attributes": ["name", "childID"], "identificationAttributes": ["childID"]]]]]

    /// Posts benchmark_parents_and_children.json, then twice again: the copies change nothing — no object
    /// updated, no change-feed entry, every stored object as it was (R-P4, R-D3).
    private static func postBenchmarkAgain(_ store: StoreHarness, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fixture = try restKitFixture("benchmark_parents_and_children.json")
        let first = try store.map("parents", fixture)
        #expect(first.inserted == 76, sourceLocation: sourceLocation)
        #expect(try store.count("Parent") == 25, sourceLocation: sourceLocation)
        #expect(try store.count("Child") == 51, sourceLocation: sourceLocation)
        let parents = try store.objects("Parent")
        let children = try store.objects("Child")
        let head = try store.feedHead()
        for _ in 0..<2 {
            let again = try store.map("parents", fixture)
            #expect(again.inserted == 0, sourceLocation: sourceLocation)
            #expect(again.updated == 0, sourceLocation: sourceLocation)
            #expect(again.unchanged == 76, sourceLocation: sourceLocation)
            #expect(try store.feedHead() == head, "an identical payload adds no change-feed entry",
                    sourceLocation: sourceLocation)
            #expect(try store.changes(since: head) == [], sourceLocation: sourceLocation)
            #expect(try store.objects("Parent") == parents, sourceLocation: sourceLocation)
            #expect(try store.objects("Child") == children, sourceLocation: sourceLocation)
        }
    }

    @Test func R_P4_R_D3_RKManagedObjectMappingOperationDataSourceTest_mappingAPayloadContainingRepeatedObjectsPerformsAcceptably() throws {
        // RestKit's benchmark (…WithFetchRequestMappingCache and …WithInMemoryMappingCache) maps
        // benchmark_parents_and_children.json 50 times and expects 25 parents and 51 children. Its children
        // lists name one child several times, under different names, and 50 of the 51 children are named by
        // several parents (Parent.children <-> Child.parents is many-to-many in RestKit's model, unordered).
        // Mapping it again must change nothing.
        try withRestKitStore(mappings: [("parents", Self.benchmarkParentsMapping)]) { (store) throws in
            try Self.postBenchmarkAgain(store)
            var named: [Int64: Set<Int64>] = [:]
            for parent in try restKitFixture("benchmark_parents_and_children.json")["parents"]?.arrayValue ?? [] {
                for child in parent["children"]?.arrayValue ?? [] {
                    named[try #require(child["childID"]?.numberValue?.int64Value), default: []].insert(try #require(parent["parentID"]?.numberValue?.int64Value))
                }
            }
            for child in try store.objects("Child") {
                let id = try #require(child["childID"]?.numberValue?.int64Value)
                #expect(Set(sortedInts(child["parents"])) == named[id], "child \(id) belongs to every parent naming it")
            }
        }
    }

    @Test func R_P4_R_D3_RKManagedObjectMappingOperationDataSourceTest_mappingAPayloadContainingRepeatedObjectsWithAToOneInverse() throws {
        // The same payload where each child belongs to one parent (Child.parent is to-one): a child named by
        // several parents belongs to the last one (each parent's relationship is written in payload order,
        // and a child it takes leaves its previous parent). Mapping it again must change nothing either,
        // although on the way the children's earlier parents name them again.
        let model: JSONValue = ["entities": [
            rkEntity("Parent", [rkAttribute("parentID", "integer64"), rkAttribute("name", "string")],
                     relationships: [rkRelationship("children", "Child", toMany: true, inverse: "parent")]),
            rkEntity("Child", [rkAttribute("childID", "integer64"), rkAttribute("name", "string")],
                     relationships: [rkRelationship("parent", "Parent", inverse: "children")]),
        ]]
        try withRestKitStore(model: model, mappings: [("parents", Self.benchmarkParentsMapping)]) { (store) throws in
            try Self.postBenchmarkAgain(store)
            var owner: [Int64: Int64] = [:]
            for parent in try restKitFixture("benchmark_parents_and_children.json")["parents"]?.arrayValue ?? [] {
                for child in parent["children"]?.arrayValue ?? [] {
                    owner[try #require(child["childID"]?.numberValue?.int64Value)] = parent["parentID"]?.numberValue?.int64Value
                }
            }
            for child in try store.objects("Child") {
                let id = try #require(child["childID"]?.numberValue?.int64Value)
                #expect(child["parent"]?.numberValue?.int64Value == owner[id], "child \(id) belongs to the last parent naming it")
            }
            // A payload that moves a child: 77 (parent 23's) is named by parent 1, then by parent 2, which takes it.
            // Parents 1 and 2 held no child (later parents took theirs): parent 1 ends as it was, not updated.
            #expect(keys(try store.object("Parent", "1")["children"]) == [])
            #expect(keys(try store.object("Parent", "2")["children"]) == [])
            let moved = try store.map("parents", ["parents": [["parentID": 1, "children": [["childID": 77]]], ["parentID": 2, "children": [["childID": 77]]]]])
            #expect(moved.updated == 1)
            #expect(!keys(try store.object("Parent", "23")["children"]).contains(77))
            #expect(keys(try store.object("Parent", "1")["children"]) == [])
            #expect(keys(try store.object("Parent", "2")["children"]) == [77])
            #expect(try store.object("Child", "77")["parent"] == 2)
            #expect(try store.count("Child", where: "parent == nil") == 51 - 1 - (try store.count("Child", where: "parent.parentID > 2")))
        }
    }

    @Test func R_P4_RKObjectMappingNextGenTest_shouldNotSetAPropertyWhenTheValueIsTheSame() throws {
        try withRestKitStore(mappings: [("user", userMapping())]) { (store) throws in
            _ = try store.map("user", try restKitFixture("user.json"))
            let changes = try store.changes().count
            let second = try store.map("user", try restKitFixture("user.json"))
            #expect(second.unchanged == 1)
            #expect(second.updated == 0)
            #expect(try store.changes().count == changes)
        }
    }

    @Test func R_P4_RKObjectMappingNextGenTest_shouldSetNilForNSNullValues() throws {
        try withRestKitStore(mappings: [("user", userMapping())]) { (store) throws in
            var fixture = try #require(try restKitFixture("user.json").objectValue)
            _ = try store.map("user", .object(fixture))
            fixture["name"] = .null
            #expect(try store.map("user", .object(fixture)).updated == 1)
            #expect(try store.object("User", "31337")["name"] == .null)
        }
    }

    @Test func R_P4_RKObjectMappingNextGenTest_shouldNotSetTheDestinationPropertyWhenBothAreNil() throws {
        try withRestKitStore(mappings: [("user", userMapping())]) { (store) throws in
            var fixture = try #require(try restKitFixture("user.json").objectValue)
            fixture["name"] = .null
            #expect(try store.map("user", .object(fixture)).inserted == 1)
            let changes = try store.changes().count
            let second = try store.map("user", .object(fixture))
            #expect(second.unchanged == 1)
            #expect(try store.changes().count == changes)
            #expect(try store.object("User", "31337")["name"] == .null)
        }
    }

    @Test func R_P4_RKObjectMappingNextGenTest_mappingFromMissingSourceKeyPathAssignsNil() throws {
        // Despite its name, the RestKit test asserts that a missing key leaves the value untouched
        // (assignsDefaultValueForMissingAttributes = NO).
        try withRestKitStore(mappings: [("user", userMapping())]) { (store) throws in
            var fixture = try #require(try restKitFixture("user.json").objectValue)
            _ = try store.map("user", .object(fixture))
            fixture["name"] = nil
            #expect(try store.map("user", .object(fixture)).unchanged == 1)
            #expect(try store.object("User", "31337")["name"] == "Blake Watters")
        }
    }

    @Test func R_P4_RKObjectMappingNextGenTest_shouldOptionallySetDefaultValueForAMissingKeyPath() throws {
        // assignsDefaultValueForMissingAttributes = YES: a missing key resets the attribute to its default (none: nil).
        try withRestKitStore(mappings: [("user", userMapping()), ("reset", userMapping(extra: [("assignsDefaultValueForMissingAttributes", true)]))]) { (store) throws in
            var fixture = try #require(try restKitFixture("user.json").objectValue)
            _ = try store.map("user", .object(fixture))
            fixture["name"] = nil
            #expect(try store.map("reset", .object(fixture)).updated == 1)
            #expect(try store.object("User", "31337")["name"] == .null)
        }
    }

    @Test func R_P4_RKObjectMappingNextGenTest_thatMappingToNonOptionalPropertyWithDefaultSetsDefault() throws {
        // Human.likesDogs defaults to YES. A new object gets it; with assignsDefaultValueForMissingAttributes an
        // update resets it too.
        let mapping: JSONValue = ["entity": "Human", "attributes": ["id": "railsID", "name": "name", "likesDogs": "likesDogs"],
                                  "identificationAttributes": ["railsID"], "assignsDefaultValueForMissingAttributes": true]
        try withRestKitStore(mappings: [("humans", mapping)]) { (store) throws in
            _ = try store.map("humans", ["id": 1, "name": "Blake Watters"])
            #expect(try store.objects("Human").first?["likesDogs"] == true)
            _ = try store.map("humans", ["id": 1, "name": "Blake Watters", "likesDogs": false])
            #expect(try store.objects("Human").first?["likesDogs"] == false)
            #expect(try store.map("humans", ["id": 1, "name": "Blake Watters"]).updated == 1)
            #expect(try store.objects("Human").first?["likesDogs"] == true)
        }
    }

    @Test func R_P4_RKEntityMappingTest_shouldReturnTheDefaultValueForACoreDataAttribute() throws {
        // Cat.name defaults to "Kitty Cat!" in RestKit's model: a new cat without a name gets it.
        try withRestKitStore(mappings: [("cats", ["entity": "Cat", "attributes": ["railsID", "name"], "identificationAttributes": ["railsID"]])]) { (store) throws in
            #expect(try store.map("cats", ["railsID": 1]).inserted == 1)
            #expect(try store.objects("Cat").first?["name"] == "Kitty Cat!")
        }
    }

    // MARK: - R-P5 nested objects (RKObjectMappingNextGenTest.m with user.json)

    private static let addressRelationship: JSONValue = ["from": "address", "to": "address",
                                                         "mapping": ["entity": "Address", "attributes": ["id": "addressID", "city": "city"]]]

    @Test func R_P5_RKObjectMappingNextGenTest_shouldMapANestedObject() throws {
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [Self.addressRelationship])]))]) { (store) throws in
            let result = try store.map("user", try restKitFixture("user.json"))
            #expect(result.inserted == 2)
            let user = try store.object("User", "31337")
            #expect(user["name"] == "Blake Watters")
            #expect(user["address"] == 1234)
            #expect(try store.object("Address", "1234")["city"] == "Carrboro")
            #expect(try store.object("Address", "1234")["user"] == 31337, "the inverse is set")
        }
    }

    @Test func R_P5_RKObjectMappingNextGenTest_shouldMapANestedObjectToCollection() throws {
        // A single object where a to-many is expected counts as one element (R-P5).
        let relationship: JSONValue = ["from": "address", "to": "addresses", "mapping": ["entity": "Address", "attributes": ["id": "addressID", "city": "city"]]]
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [relationship])]))]) { (store) throws in
            #expect(try store.map("user", try restKitFixture("user.json")).inserted == 2)
            #expect(try store.object("User", "31337")["addresses"] == [1234])
        }
    }

    @Test func R_P5_RKObjectMappingNextGenTest_shouldMapANestedObjectCollection() throws {
        // Also testShouldMapANestedArrayIntoASet.
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [friendsRelationship("friends")])]))]) { (store) throws in
            #expect(try store.map("user", try restKitFixture("user.json")).inserted == 3)
            #expect(sortedInts(try store.object("User", "31337")["friends"]) == [7, 187])
            #expect(try store.object("User", "187")["name"] == "Jeremy Ellison")
            #expect(try store.object("User", "7")["name"] == "Rachit Shukla")
        }
    }

    @Test func R_P5_R_P6_RKObjectMappingNextGenTest_shouldMapANestedArrayIntoAnOrderedSet() throws {
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [friendsRelationship("friendsOrderedSet", from: "friends")])]))]) { (store) throws in
            #expect(try store.map("user", try restKitFixture("user.json")).inserted == 3)
            #expect(try store.object("User", "31337")["friendsOrderedSet"] == [187, 7], "payload order is kept")
        }
    }

    @Test func R_P4_R_P5_RKObjectMappingNextGenTest_shouldNotSetThePropertyWhenTheNestedObjectIsIdentical() throws {
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [Self.addressRelationship])]))]) { (store) throws in
            _ = try store.map("user", try restKitFixture("user.json"))
            let changes = try store.changes().count
            let second = try store.map("user", try restKitFixture("user.json"))
            #expect(second.inserted == 0)
            #expect(second.updated == 0)
            #expect(second.unchanged == 2)
            #expect(try store.changes().count == changes)
        }
    }

    @Test func R_P4_R_P5_RKObjectMappingNextGenTest_shouldNotSetThePropertyWhenTheNestedObjectCollectionIsIdentical() throws {
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [friendsRelationship("friends")])]))]) { (store) throws in
            _ = try store.map("user", try restKitFixture("user.json"))
            let changes = try store.changes().count
            let second = try store.map("user", try restKitFixture("user.json"))
            #expect(second.inserted == 0)
            #expect(second.updated == 0)
            #expect(second.unchanged == 3)
            #expect(try store.changes().count == changes)
        }
    }

    @Test func R_P2_R_I2_RKObjectMappingNextGenTest_updatingArrayOfExistingCats() throws {
        // ArrayOfHumans.json is an array of {"human": {...}}: the mapping's keyPath is read from each element
        // (docs/mapping.md#members), and the stored humans 201 and 202 are found, not duplicated.
        let seed: JSONValue = ["entity": "Human", "attributes": ["id": "railsID"], "identificationAttributes": ["railsID"]]
        let humans: JSONValue = ["entity": "Human", "keyPath": "human", "attributes": ["id": "railsID"], "identificationAttributes": ["railsID"]]
        try withRestKitStore(mappings: [("seed", seed), ("humans", humans)]) { (store) throws in
            #expect(try store.map("seed", [["id": 201], ["id": 202]]).inserted == 2)
            let result = try store.map("humans", try restKitFixture("ArrayOfHumans.json"))
            #expect(result.inserted == 0)
            #expect(result.unchanged == 2)
            #expect(result.objects.count == 2)
            #expect(try store.count("Human") == 2)
        }
    }

    // MARK: - R-P6 assignment policies (RKObjectMappingNextGenTest.m)

    @Test func R_P6_RKObjectMappingNextGenTest_thatAttemptingToUnionOneToOneRelationshipGeneratesMappingError() throws {
        // RestKit fails the mapping; Cartograph refuses the mapping document with 422 at registration.
        try withRestKitStore { (store) throws in
            let relationship: JSONValue = ["from": "address", "to": "address", "assignmentPolicy": "union",
                                           "mapping": ["entity": "Address", "attributes": ["id": "addressID", "city": "city"]]]
            let refused = #expect(throws: CartographError.self) { try store.registerMapping("user", userMapping(extra: [("relationships", [relationship])])) }
            #expect(refused?.code == .unprocessable, "\(String(describing: refused))")
            #expect(pointers(refused).contains { $0.hasPrefix("/relationships/0") }, "\(pointers(refused))")
            #expect(try store.registeredMapping("user") == nil)
        }
    }

    @Test func R_P6_RKObjectMappingNextGenTest_unionAssignmentPolicyWithSet() throws {
        // RestKit's friends have only names; the port gives them ids, User's identity (R-I1).
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [friendsRelationship("friends", policy: "union")])]))]) { (store) throws in
            _ = try store.map("user", ["id": 1, "friends": [["id": 2, "name": "Jeff"]]])
            _ = try store.map("user", ["id": 1, "friends": [["id": 3, "name": "Zach"]]])
            #expect(sortedInts(try store.object("User", "1")["friends"]) == [2, 3])
        }
    }

    @Test func R_P6_RKObjectMappingNextGenTest_unionAssignmentPolicyWithOrderedSet() throws {
        // Also testUnionAssignmentPolicyWithArray (an ordered to-many in a store).
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [friendsRelationship("friendsOrderedSet", policy: "union")])]))]) { (store) throws in
            _ = try store.map("user", ["id": 1, "friendsOrderedSet": [["id": 2, "name": "Jeff"]]])
            _ = try store.map("user", ["id": 1, "friendsOrderedSet": [["id": 3, "name": "Zach"]]])
            #expect(try store.object("User", "1")["friendsOrderedSet"] == [2, 3])
        }
    }

    @Test func R_P6_RKObjectMappingNextGenTest_unionAssignmentPolicyWithNilValue() throws {
        try withRestKitStore(mappings: [("user", userMapping(extra: [("relationships", [friendsRelationship("friends", policy: "union")])]))]) { (store) throws in
            #expect(try store.map("user", ["id": 1, "friends": [["id": 3, "name": "Zach"]]]).inserted == 2)
            #expect(try store.object("User", "1")["friends"] == [3])
        }
    }

    @Test func R_P6_RKObjectMappingNextGenTest_replacmentPolicyForToManyCoreDataRelationshipDeletesExistingValues() throws {
        try withRestKitStore(mappings: [("humans", humanWithCats(policy: "replace"))]) { (store) throws in
            _ = try store.map("humans", ["id": 1, "name": "Blake", "cats": [["name": "Lola"]]])
            let lola = try #require(try store.objects("Cat").first)
            let result = try store.map("humans", ["id": 1, "name": "Blake", "cats": [["name": "Roy"]]])
            #expect(result.deleted == 1)
            let cats = try store.objects("Cat")
            #expect(cats.map { $0["name"] } == ["Roy"])
            #expect(try store.objects("Human").first?["cats"] == .array(rkIDs(cats)))
            let feed = try store.changes()
            #expect(feed.contains { $0["op"] == "delete" && $0["entity"] == "Cat" && $0["key"] == lola["_id"] }, "a tombstone for Lola")
        }
    }

    @Test func R_P6_RKObjectMappingNextGenTest_replacmentPolicyForToManyCoreDataRelationshipDoesNotDeleteNewValuesOnSecondMapping() throws {
        // RestKit's cat mapping has no identification attributes, so each mapping inserts a new Roy (R-I4) and
        // replace deletes the one no longer referenced: one Roy remains.
        let cats: JSONValue = ["entity": "Cat", "attributes": ["name"]]
        try withRestKitStore(mappings: [("humans", humanWithCats(policy: "replace", cats: cats))]) { (store) throws in
            _ = try store.map("humans", ["id": 1, "name": "Blake", "cats": [["name": "Roy"]]])
            #expect(try store.objects("Cat").map { $0["name"] } == ["Roy"])
            let second = try store.map("humans", ["id": 1, "name": "Blake", "cats": [["name": "Roy"]]])
            #expect(second.inserted == 1)
            #expect(second.deleted == 1)
            let stored = try store.objects("Cat")
            #expect(stored.map { $0["name"] } == ["Roy"])
            #expect(try store.objects("Human").first?["cats"] == .array(rkIDs(stored)))
        }
    }

    @Test func R_P6_RKObjectMappingNextGenTest_replacmentPolicyForToOneCoreDataRelationshipDeletesExistingValues() throws {
        try withRestKitStore(mappings: [("humans", humanWithCats(policy: "replace"))]) { (store) throws in
            _ = try store.map("humans", ["id": 1, "name": "Blake", "favoriteCat": ["name": "Lola"]])
            let result = try store.map("humans", ["id": 1, "name": "Blake", "favoriteCat": ["name": "Roy"]])
            #expect(result.deleted == 1)
            let cats = try store.objects("Cat")
            #expect(cats.map { $0["name"] } == ["Roy"])
            #expect(try store.objects("Human").first?["favoriteCat"] == cats.first?["_id"])
        }
    }

    @Test func R_P5_R_P6_RKObjectMappingNextGenTest_unionAssignmentPolicyForToManyCoreDataRelationshipDeletesExistingValuesWithAssignsNilForMissingRelationships() throws {
        // A representation without `cats` leaves the relationship untouched (R-P5); nothing is deleted.
        try withRestKitStore(mappings: [("humans", humanWithCats(policy: "union"))]) { (store) throws in
            _ = try store.map("humans", ["id": 1, "name": "Blake", "cats": [["name": "Lola"]]])
            let result = try store.map("humans", ["id": 1, "name": "Blake"])
            #expect(result.deleted == 0)
            let cats = try store.objects("Cat")
            #expect(cats.map { $0["name"] } == ["Lola"])
            #expect(try store.objects("Human").first?["cats"] == .array(rkIDs(cats)))
        }
    }

    // MARK: - R-P1 @parent / @root identify nested objects (RKObjectMappingNextGenTest.m)

    /// Two stored "Jeff Arena"s, in houses 99999 and `house`; returns the `_id` of the one in `house`.
    private func seedJeffs(_ store: StoreHarness, house: Int) throws -> JSONValue {
        #expect(try store.map("seed", [["name": "Jeff Arena", "houseID": 99999], ["name": "Jeff Arena", "houseID": .number(JSONNumber(house))]]).inserted == 2)
        return try #require(try store.objects("Human", where: "houseID == \(house)").first?["_id"])
    }

    private static let seedHumans: JSONValue = ["entity": "Human", "attributes": ["name", "houseID"], "identificationAttributes": []]

    private func friendsBy(_ houseKeyPath: String, from: String, topAttributes: JSONValue) -> JSONValue {
        ["entity": "Human", "attributes": topAttributes,
         "relationships": [["from": .string(from), "to": "friends",
                            "mapping": ["entity": "Human", "attributes": ["name": "name", houseKeyPath: "houseID"],
                                        "identificationAttributes": ["houseID", "name"]]]]]
    }

    @Test func R_P1_R_I5_RKObjectMappingNextGenTest_identifyingNestedObjectsUsingParentRepresentationTraversal() throws {
        // Also testIdentifyingNestedObjectsUsingParentRepresentationTraversalDirectlyWithMappingOperation.
        let mapping = friendsBy("@parent.house_id", from: "friends", topAttributes: ["name": "name", "house_id": "houseID"])
        try withRestKitStore(mappings: [("seed", Self.seedHumans), ("humans", mapping)]) { (store) throws in
            let jeff = try seedJeffs(store, house: 23456)
            let result = try store.map("humans", ["name": "Blake Watters", "house_id": 23456, "friends": [["name": "Jeff Arena"]]])
            #expect(result.inserted == 1, "only Blake is new")
            let blake = try #require(try store.objects("Human", where: "name == 'Blake Watters'").first)
            #expect(blake["friends"] == [jeff])
            #expect(try store.count("Human") == 3)
        }
    }

    @Test func R_P1_RKObjectMappingNextGenTest_identifyingNestedObjectsUsingDeeplyNestedParentRepresentationTraversal() throws {
        // RestKit writes `@parent.@parent.house.house_id` because it counts the `people` step of the relationship's
        // key path `people.friends` as a level. In Cartograph `@parent` is the representation the enclosing mapping
        // maps (the human) and only the first segment is a marker, so the same value is `@parent.house.house_id`.
        let mapping = friendsBy("@parent.house.house_id", from: "people.friends", topAttributes: ["name": "name", "house.house_id": "houseID"])
        try withRestKitStore(mappings: [("seed", Self.seedHumans), ("humans", mapping)]) { (store) throws in
            let jeff = try seedJeffs(store, house: 34567)
            let result = try store.map("humans", ["name": "Blake Watters", "house": ["house_id": 34567], "people": ["friends": [["name": "Jeff Arena"]]]])
            #expect(result.inserted == 1)
            let blake = try #require(try store.objects("Human", where: "name == 'Blake Watters'").first)
            #expect(blake["houseID"] == 34567)
            #expect(blake["friends"] == [jeff])
        }
    }

    @Test func R_P1_RKObjectMappingNextGenTest_identifyingNestedObjectsUsingRootRepresentation() throws {
        // Also testUsingRootKeyDirectlyWithMappingOperation.
        let mapping = friendsBy("@root.house_id", from: "people.friends", topAttributes: ["name": "name", "house_id": "houseID"])
        try withRestKitStore(mappings: [("seed", Self.seedHumans), ("humans", mapping)]) { (store) throws in
            let jeff = try seedJeffs(store, house: 45678)
            let result = try store.map("humans", ["name": "Blake Watters", "house_id": 45678, "people": ["friends": [["name": "Jeff Arena"]]]])
            #expect(result.inserted == 1)
            let blake = try #require(try store.objects("Human", where: "name == 'Blake Watters'").first)
            #expect(blake["friends"] == [jeff])
        }
    }

    // MARK: - R-P7 modificationAttribute (RKManagedObjectMappingOperationDataSourceTest.m)
    // RestKit's code skips mapping when the stored value is equal (strings) or not older (numbers, dates);
    // R-P7 follows the code (the seed's prose words it backwards). A skipped object skips its
    // relationship mappings too and counts as `unchanged`.

    /// Humans with `railsID`, `name`, `age`, `updatedAt` and `cats`; `modificationAttribute` = `attribute`.
    private func withModification(_ attribute: String, identifiedBy identity: String = "railsID", _ body: (StoreHarness) throws -> Void) throws {
        var plain = JSONObject([("entity", "Human"), ("attributes", ["railsID", "name", "age", "updatedAt"]),
                                ("identificationAttributes", .array([.string(identity)])),
                                ("relationships", [["from": "cats", "to": "cats", "mapping": catsByName]])])
        let seed = JSONValue.object(plain)
        plain["modificationAttribute"] = .string(attribute)
        try withRestKitStore(mappings: [("seed", seed), ("humans", .object(plain))], body)
    }

    private func expectSkipped(_ store: StoreHarness, _ representation: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        let result = try store.map("humans", representation)
        #expect(result.unchanged == 1, sourceLocation: sourceLocation)
        #expect(result.updated == 0, sourceLocation: sourceLocation)
        #expect(result.inserted == 0, "the relationship mapping is skipped too", sourceLocation: sourceLocation)
        let human = try #require(try store.objects("Human").first, sourceLocation: sourceLocation)
        #expect(human["age"] == 28, sourceLocation: sourceLocation)
        #expect(human["cats"] == [], sourceLocation: sourceLocation)
        #expect(try store.count("Cat") == 0, sourceLocation: sourceLocation)
        return human
    }

    private func expectMapped(_ store: StoreHarness, _ representation: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        let result = try store.map("humans", representation)
        #expect(result.updated == 1, sourceLocation: sourceLocation)
        #expect(result.inserted == 1, "the new cat", sourceLocation: sourceLocation)
        let human = try #require(try store.objects("Human").first, sourceLocation: sourceLocation)
        #expect(human["age"] == 30, sourceLocation: sourceLocation)
        #expect(keys(human["cats"]).count == 1, sourceLocation: sourceLocation)
        return human
    }

    @Test
    func R_P7_RKManagedObjectMappingOperationDataSourceTest_thatStringEqualityCausesSkipPropertyMappingToReturnYES() throws {
        try withModification("name") { (store) throws in
            _ = try store.map("seed", ["railsID": 123, "name": "Blake Watters", "age": 28])
            _ = try expectSkipped(store, ["railsID": 123, "name": "Blake Watters", "age": 30, "cats": [["name": "Asia"]]])
        }
    }

    @Test func R_P7_RKManagedObjectMappingOperationDataSourceTest_thatStringInequalityCausesSkipPropertyMappingToReturnNO() throws {
        try withModification("name") { (store) throws in
            _ = try store.map("seed", ["railsID": 123, "name": "MISMATCH", "age": 28])
            let human = try expectMapped(store, ["railsID": 123, "name": "Blake Watters", "age": 30, "cats": [["name": "Asia"]]])
            #expect(human["name"] == "Blake Watters")
        }
    }

    @Test
    func R_P7_RKManagedObjectMappingOperationDataSourceTest_thatDateEqualityCausesSkipPropertyMappingToReturnYES() throws {
        try withModification("updatedAt") { (store) throws in
            _ = try store.map("seed", ["railsID": 123, "name": "Blake Watters", "age": 28, "updatedAt": "2024-05-01T10:00:00Z"])
            _ = try expectSkipped(store, ["railsID": 123, "age": 30, "updatedAt": "2024-05-01T10:00:00Z", "cats": [["name": "Asia"]]])
        }
    }

    @Test
    func R_P7_RKManagedObjectMappingOperationDataSourceTest_thatDateDecensionCausesSkipPropertyMappingToReturnYES() throws {
        try withModification("updatedAt") { (store) throws in
            _ = try store.map("seed", ["railsID": 123, "name": "Blake Watters", "age": 28, "updatedAt": "2024-05-02T10:00:00Z"])
            let human = try expectSkipped(store, ["railsID": 123, "age": 30, "updatedAt": "2024-05-01T10:00:00Z", "cats": [["name": "Asia"]]])
            #expect(human["updatedAt"] == "2024-05-02T10:00:00.000Z")
        }
    }

    @Test func R_P7_RKManagedObjectMappingOperationDataSourceTest_thatDateAscensionCausesSkipPropertyMappingToReturnNO() throws {
        try withModification("updatedAt") { (store) throws in
            _ = try store.map("seed", ["railsID": 123, "name": "Blake Watters", "age": 28, "updatedAt": "2024-05-01T10:00:00Z"])
            let human = try expectMapped(store, ["railsID": 123, "age": 30, "updatedAt": "2024-05-02T10:00:00Z", "cats": [["name": "Asia"]]])
            #expect(human["updatedAt"] == "2024-05-02T10:00:00.000Z")
        }
    }

    @Test
    func R_P7_RKManagedObjectMappingOperationDataSourceTest_thatNumericEqualityCausesSkipPropertyMappingToReturnYES() throws {
        // railsID is the modification attribute here, so the port identifies humans by name.
        try withModification("railsID", identifiedBy: "name") { (store) throws in
            _ = try store.map("seed", ["railsID": 123, "name": "Blake Watters", "age": 28])
            _ = try expectSkipped(store, ["railsID": 123, "name": "Blake Watters", "age": 30, "cats": [["name": "Asia"]]])
        }
    }

    @Test
    func R_P7_RKManagedObjectMappingOperationDataSourceTest_thatNumericDecensionCausesSkipPropertyMappingToReturnYES() throws {
        try withModification("railsID", identifiedBy: "name") { (store) throws in
            _ = try store.map("seed", ["railsID": 999, "name": "Blake Watters", "age": 28])
            let human = try expectSkipped(store, ["railsID": 100, "name": "Blake Watters", "age": 30, "cats": [["name": "Asia"]]])
            #expect(human["railsID"] == 999)
        }
    }

    @Test func R_P7_RKManagedObjectMappingOperationDataSourceTest_thatNumericAscensionCausesSkipPropertyMappingToReturnNO() throws {
        try withModification("railsID", identifiedBy: "name") { (store) throws in
            _ = try store.map("seed", ["railsID": 100, "name": "Blake Watters", "age": 28])
            let human = try expectMapped(store, ["railsID": 999, "name": "Blake Watters", "age": 30, "cats": [["name": "Asia"]]])
            #expect(human["railsID"] == 999)
        }
    }

    @Test func R_P7_RKEntityMappingTest_settingModificationAttributeForNameRaisesErrorIfNameIsInvalid() throws {
        try withRestKitStore { (store) throws in
            let refused = #expect(throws: CartographError.self) {
                try store.registerMapping("humans", ["entity": "Human", "attributes": ["name"], "modificationAttribute": "INVALID"])
            }
            #expect(refused?.code == .unprocessable, "\(String(describing: refused))")
            #expect(pointers(refused).contains("/modificationAttribute"), "\(pointers(refused))")
        }
    }

    // MARK: - R-P8 / R-P11 validation fails the whole payload (RKMappingOperationTest.m)

    @Test func R_P8_R_P11_RKMappingOperationTest_shouldFailTheMappingOperationIfKeyValueValidationSetsAnError() throws {
        // TestMappable's key-value validation rejects "FAIL"; the port uses the model's `regex` on `checked`.
        let mapping: JSONValue = ["entity": "Mappable", "attributes": ["id", "checked"]]
        let discarding: JSONValue = ["entity": "Mappable", "attributes": ["id", "checked"], "discardsInvalidObjectsOnInsert": true]
        try withRestKitStore(mappings: [("mappable", mapping), ("discarding", discarding)]) { (store) throws in
            let failed = store.refusal("mappable", [["id": 1, "checked": "fine"], ["id": 2, "checked": "FAIL"]])
            #expect(failed?.code == .unprocessable, "\(String(describing: failed))")
            #expect(pointers(failed).contains("/1/checked"), "\(pointers(failed))")
            #expect(try store.count("Mappable") == 0, "one transaction: nothing is stored (R-P11)")
            let discarded = try store.map("discarding", [["id": 1, "checked": "fine"], ["id": 2, "checked": "FAIL"]])
            #expect(discarded.inserted == 1)
            #expect(discarded.discarded.first?["pointer"] == "/1")
            #expect(discarded.objects.last?["discarded"] == true)
            #expect(try store.count("Mappable") == 1)
            #expect(try store.object("Mappable", "1")["checked"] == "fine")
        }
    }
}
