// Mapping documents through the routes, in process: registration with whole-document validation against
// the model, normalized storage, GET/list/DELETE (docs/mapping.md, issue 5's registration part).
import Foundation
import Testing
import CartographCore
import CartographTesting

let characterMapping: JSONValue = [
    "entity": "Character", "keyPath": "characters",
    "attributes": ["id": "identifier", "name": "name", "real_name": ["to": "realName", "transformer": "Trim"]],
    "relationships": [["from": "publisher", "to": "publisher",
                       "mapping": ["entity": "Publisher", "attributes": ["id": "identifier", "name": "name"]]]],
]

@Suite(.serialized) struct MappingRoutesTests {
    @Test func mappingsRegisterNormalizedAndCanBeListedReadAndDeleted() throws {
        try withComics { (server, key) throws in
            let client = server.client
            let base = "/v1/tenants/acme/models/comics/mappings"
            let created = try client.sendJSON("PUT", base + "/characters", characterMapping, token: key)
            #expect(created.status == 201)
            let document = try created.json()
            #expect(document["entity"] == "Character")
            #expect(try client.sendJSON("PUT", base + "/characters", characterMapping, token: key).status == 200)
            #expect(try client.send("GET", base + "/characters", token: key).json() == document)
            let list = try client.send("GET", base, token: key).json()
            #expect(list["items"] == [["name": "characters", "entity": "Character"]])
            #expect(try client.send("DELETE", base + "/characters", token: key).status == 204)
            #expect(try client.send("GET", base + "/characters", token: key).status == 404)
            #expect(try client.send("DELETE", base + "/characters", token: key).status == 404)
        }
    }

    @Test(arguments: [
        (["entity": "Nobody"] as JSONValue, "/entity"),
        (["entity": "Character", "attributes": ["id": "nope"]] as JSONValue, "/attributes"),
        (["entity": "Character", "attributes": ["id": ["to": "name", "transformer": "NoSuchTransformer"]]] as JSONValue, "/attributes"),
        (["entity": "Character", "relationships": [["from": "publisher", "to": "publisher", "assignmentPolicy": "union",
                                                    "mapping": ["entity": "Publisher", "attributes": ["id"]]]]] as JSONValue, "/relationships/0"),
        (["entity": "Character", "identificationPredicate": "name =="] as JSONValue, "/identificationPredicate"),
    ])
    func invalidMappingsAre422WithPointers(document: JSONValue, pointerPrefix: String) throws {
        try withComics { (server, key) throws in
            let response = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/comics/mappings/bad", document, token: key)
            #expect(response.status == 422, "\(document.jsonText): \(response.text)")
            let pointers = try response.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []
            #expect(pointers.contains { $0.hasPrefix(pointerPrefix) }, "\(pointers)")
            #expect(try server.client.send("GET", "/v1/tenants/acme/models/comics/mappings/bad", token: key).status == 404)
        }
    }

    @Test func aReadKeyCannotRegisterMappings() throws {
        try withComics { (server, key) throws in
            let reader = try #require(try server.client.sendJSON("POST", "/v1/tenants/acme/keys", ["scope": "read"], token: key).json()["apiKey"]?.stringValue)
            #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/models/comics/mappings/m", characterMapping, token: reader).status == 403)
            #expect(try server.client.send("GET", "/v1/tenants/acme/models/comics/mappings", token: reader).json()["items"] == [])
        }
    }

    @Test func malformedDeclaredTransformersFailModelRegistration() throws {
        try withComics { (server, key) throws in
            var document = comicsModel.objectValue!
            document["valueTransformers"] = ["Gender": ["type": "map"]]
            let response = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/other", .object(document), token: key)
            #expect(response.status == 422)
            #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"]?.stringValue?.hasPrefix("/valueTransformers/Gender") == true)
        }
    }
}
