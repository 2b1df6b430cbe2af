// Mappings that refer to registered mappings by name (`{"ref": "organization"}`, RestKit's recursive
// mappings): trees of any depth, mappings that refer to each other, and what registration checks.
// Beside the router: a mapping another refers to is refused deletion by the route (409), and the deepest
// trees map on the real server's request threads (MappingReferenceLiveTests).
import Foundation
import Testing
import CartographCore
import CartographTesting

let organizationsModel: JSONValue = ["entities": [
    ["name": "Organization", "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]],
     "relationships": [["name": "children", "destination": "Organization", "toMany": true, "ordered": true, "inverse": "parent"],
                       ["name": "parent", "destination": "Organization", "inverse": "children"],
                       ["name": "members", "destination": "User", "toMany": true, "inverse": "organization"]]],
    ["name": "User", "attributes": [["name": "id", "type": "integer64"], ["name": "login", "type": "string"]],
     "relationships": [["name": "organization", "destination": "Organization", "inverse": "members"]]],
]]

let organizationMapping: JSONValue = [
    "entity": "Organization", "keyPath": "organizations", "attributes": ["id", "name"],
    "relationships": [["from": "children", "to": "children", "mapping": ["ref": "organization"]]],
]

/// An organization whose first child has a child, and so on, `depth` levels in all (ids 1…depth).
func organizationChain(depth: Int) -> JSONValue {
    var node: JSONValue = ["id": .number(JSONNumber(Int64(depth))), "name": .string("level \(depth)")]
    for level in stride(from: depth - 1, through: 1, by: -1) {
        node = ["id": .number(JSONNumber(Int64(level))), "name": .string("level \(level)"), "children": [node]]
    }
    return ["organizations": [node]]
}

@Suite struct MappingReferenceTests {
    @Test func R_P5_aMappingThatRefersToItselfMapsATreeOfAnyDepth() throws {
        try ModelAPI.with(model: organizationsModel, mappings: ["organization": organizationMapping]) { api in
            #expect(try api.get("mappings/organization")["relationships"]?.arrayValue?.first?["mapping"] == ["ref": "organization"])
            let result = try api.map("organization", organizationChain(depth: 12))
            #expect(result["inserted"] == 12)
            #expect(result["objects"] == [["entity": "Organization", "key": 1]], "only the top level is listed")
            #expect(try api.object("Organization", "11")["children"] == [12])
            #expect(try api.object("Organization", "12")["parent"] == 11)
            #expect(try api.object("Organization", "12")["name"] == "level 12")
            // The referenced mapping's keyPath applies at the top level only: nested, `children` is read as it is.
            #expect(try api.object("Organization", "1")["children"] == [2])
        }
    }

    @Test func R_Q4_R_P5_anExportThroughASelfReferencingMappingNestsTheTree() throws {
        try ModelAPI.with(model: organizationsModel, mappings: ["organization": organizationMapping]) { api in
            try api.map("organization", organizationChain(depth: 3))
            let exported = try api.get("entities/Organization/objects/1?shape=json&mapping=organization")
            #expect(exported == ["id": 1, "name": "level 1", "children": [
                ["id": 2, "name": "level 2", "children": [["id": 3, "name": "level 3", "children": []]]]]])
        }
    }

    @Test func R_P5_mappingsMayReferToEachOtherInACycle() throws {
        let users: JSONValue = ["entity": "User", "keyPath": "users", "attributes": ["id", "login"],
                                "relationships": [["from": "organization", "to": "organization", "mapping": ["ref": "organization"]]]]
        var organizations = try #require(organizationMapping.objectValue)
        organizations["relationships"] = [["from": "members", "to": "members", "mapping": ["ref": "user"]]]
        try ModelAPI.with(model: organizationsModel, mappings: ["organization": organizationMapping]) { api in
            // Each needs the other registered: register one, then the other, then the first again.
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/user", users, token: api.key).status == 201)
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/organization", .object(organizations), token: api.key).status == 200)
            let result = try api.map("user", ["users": [["id": 1, "login": "ada", "organization": [
                "id": 10, "name": "Analytical", "members": [["id": 1], ["id": 2, "login": "charles", "organization": ["id": 10]]]]]]])
            #expect(result["inserted"] == 3, "ada, charles and their organization, each once: \(result)")
            #expect(try api.object("User", "1")["organization"] == 10)
            #expect(try api.object("User", "2")["login"] == "charles")
            #expect(try api.object("Organization", "10")["members"] == [1, 2])
            #expect(try api.object("Organization", "10")["name"] == "Analytical")
        }
    }

    @Test func R_P5_aReferenceIsCheckedWhenTheMappingIsRegistered() throws {
        try ModelAPI.with(model: organizationsModel, mappings: ["organization": organizationMapping]) { api in
            func problems(_ document: JSONValue) throws -> [JSONValue: JSONValue] {
                let response = try api.client.sendJSON("PUT", api.base + "/mappings/other", document, token: api.key)
                #expect(response.status == 422, "\(response.text)")
                return Dictionary(try response.json()["errors"]?.arrayValue?.map { ($0["pointer"] ?? .null, $0["message"] ?? .null) } ?? [],
                                  uniquingKeysWith: { a, _ in a })
            }
            let unknown = try problems(["entity": "User", "attributes": ["id"],
                                        "relationships": [["from": "org", "to": "organization", "mapping": ["ref": "nope"]]]])
            #expect(unknown == ["/relationships/0/mapping/ref": "no mapping named 'nope' is registered in this model"])
            let misplaced = try problems(["entity": "Organization", "attributes": ["id"],
                                          "relationships": [["from": "members", "to": "members", "mapping": ["ref": "organization"]]]])
            #expect(misplaced == ["/relationships/0/mapping/ref": "'organization' maps Organization, which is not User (the destination of 'members') or one of its sub-entities"])
            #expect(try problems(["ref": "organization"]) == ["/ref": "applies inside a relationship's or a dynamic case's mapping only"])
            let extra = try problems(["entity": "User", "attributes": ["id"],
                                      "relationships": [["from": "org", "to": "organization", "mapping": ["ref": "organization", "attributes": ["id"]]]]])
            #expect(extra == ["/relationships/0/mapping/attributes": "a reference to a mapping has only ref"])
        }
    }

    /// A store keeps mappings parsed between payloads (`ModelStore.preparedMapping`), yet a payload maps
    /// with the mappings as registered when it is posted: a mapping another one refers to, registered
    /// again, applies through the reference; a mapping registered again applies itself.
    @Test func R_P5_aPayloadMapsWithTheMappingsRegisteredWhenItIsPosted() throws {
        let users: JSONValue = ["entity": "User", "keyPath": "users", "attributes": ["id", "login"],
                                "relationships": [["from": "organization", "to": "organization", "mapping": ["ref": "organization"]]]]
        try ModelAPI.with(model: organizationsModel, mappings: ["organization": organizationMapping, "user": users]) { api in
            try api.map("user", ["users": [["id": 1, "login": "ada", "organization": ["id": 10, "name": "Analytical"]]]])
            #expect(try api.object("Organization", "10")["name"] == "Analytical")
            var titled = try #require(organizationMapping.objectValue)
            titled["attributes"] = ["id": "id", "title": "name"]
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/organization", .object(titled), token: api.key).status == 200)
            try api.map("user", ["users": [["id": 1, "login": "ada", "organization": ["id": 10, "title": "Engine"]]]])
            #expect(try api.object("Organization", "10")["name"] == "Engine", "the referenced mapping as registered now")

            let plain: JSONValue = ["entity": "User", "keyPath": "users", "attributes": ["id", "login"]]
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/plain", plain, token: api.key).status == 201)
            try api.map("plain", ["users": [["id": 2, "login": "charles"]]])
            try api.map("plain", ["users": [["id": 3, "login": "ada"]]])
            let handles: JSONValue = ["entity": "User", "keyPath": "users", "attributes": ["id": "id", "handle": "login"]]
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/plain", handles, token: api.key).status == 200)
            try api.map("plain", ["users": [["id": 2, "handle": "babbage"]]])
            #expect(try api.object("User", "2")["login"] == "babbage", "the mapping as registered now")
            #expect(try api.object("User", "3")["login"] == "ada")
        }
    }

    @Test func R_P5_aMappingAnotherRefersToIsNotDeleted() throws {
        let users: JSONValue = ["entity": "User", "keyPath": "users", "attributes": ["id"],
                                "relationships": [["from": "organization", "to": "organization", "mapping": ["ref": "organization"]]]]
        try ModelAPI.with(model: organizationsModel, mappings: ["organization": organizationMapping, "user": users]) { api in
            let refused = try api.client.send("DELETE", api.base + "/mappings/organization", token: api.key)
            #expect(refused.status == 409)
            #expect(try refused.json()["detail"]?.stringValue?.contains("'user'") == true, "\(refused.text)")
            #expect(try api.get("mappings/organization")["entity"] == "Organization", "still registered")
            #expect(try api.client.send("DELETE", api.base + "/mappings/user", token: api.key).status == 204)
            #expect(try api.client.send("DELETE", api.base + "/mappings/organization", token: api.key).status == 204,
                    "a mapping that refers to itself only can go")
        }
    }
}

@Suite(.serialized) struct MappingReferenceLiveTests {
    @Test(arguments: [(limit: 512, depth: 250), (limit: 2_048, depth: 1_020)])
    func R_P5_aTreeAsDeepAsTheJSONDepthLimitAllowsMapsOnARequestThread(limit: Int, depth: Int) throws {
        try ModelAPI.with(model: organizationsModel, mappings: ["organization": organizationMapping],
                          serverArguments: ["--max-json-depth", "\(limit)"], live: true) { api in
            let result = try api.map("organization", organizationChain(depth: depth))
            #expect(result["inserted"] == .number(JSONNumber(Int64(depth))))
            #expect(try api.object("Organization", "\(depth)")["parent"] == .number(JSONNumber(Int64(depth - 1))))
        }
    }
}
