// Unknown query parameters are refused (issue 16, "Requests"): `DELETE …/objects?where=…&dryRun=true`
// deleted the object while the client believed it was a dry run. Every route takes the parameters
// openapi.yaml documents for it (RouterTests checks the table) and answers 400 naming any other. The
// payload routes also take what their mapping reads through `@metadata.query.<name>` (R-P1, issue 32).
import Foundation
import Testing
import CartographCore
import CartographTesting

struct QueryParameterTests {
    @Test func anUnknownQueryParameterIs400NamingItAndNothingIsWritten() throws {
        let model: JSONValue = ["entities": [["name": "Item", "userInfo": ["identityAttributes": "identifier"],
                                              "attributes": [["name": "identifier", "type": "integer64"]]]]]
        try ModelAPI.with(model: model, mappings: ["items": ["entity": "Item", "attributes": ["identifier"]]]) { api in
            try api.map("items", [["identifier": 5], ["identifier": 6]])
            let delete = try api.client.send("DELETE", api.base + "/entities/Item/objects?where=identifier%20==%205&dryRun=true", token: api.key)
            #expect(delete.status == 400)
            #expect(delete.text.contains("'dryRun'"))
            #expect(try delete.json()["errors"]?.arrayValue?.first?["pointer"] == "/dryRun")
            #expect(try api.client.send("GET", api.base + "/entities/Item/objects/5", token: api.key).status == 200, "nothing was deleted")

            let list = try api.client.send("GET", api.base + "/entities/Item/objects?limit=1&sort=identifier&order=desc", token: api.key)
            #expect(list.status == 400)
            #expect(list.text.contains("'order', 'sort'"))
            let health = try api.client.send("GET", "/healthz?verbose=1")
            #expect(health.status == 400)
            #expect(health.text.contains("'verbose'") && health.text.contains("takes no query parameters"))
            // What a route documents still works, and a payload's dry run stores nothing.
            #expect(try api.client.send("GET", api.base + "/entities/Item/objects?limit=1&orderBy=-identifier&count=true", token: api.key).status == 200)
            #expect(try api.post("items", [["identifier": 7]], query: "?dryRun=true").status == 200)
            #expect(try api.client.send("GET", api.base + "/entities/Item/objects/7", token: api.key).status == 404)
        }
    }

    /// A GitHub search page posted with the search that produced it: the mapping reads `q` and the
    /// nested mapping it refers to reads `page` (registered first: the mappings are registered by name).
    private static let searchModel: JSONValue = ["entities": [
        ["name": "Issue", "userInfo": ["identityAttributes": "number"],
         "attributes": [["name": "number", "type": "integer64"], ["name": "search", "type": "string"]],
         "relationships": [["name": "labels", "destination": "Label", "toMany": true, "inverse": "issues"]]],
        ["name": "Label", "userInfo": ["identityAttributes": "name"],
         "attributes": [["name": "name", "type": "string", "userInfo": ["JSONKeyPath": "name"]], ["name": "page", "type": "string", "optional": true],
                        ["name": "source", "type": "string", "optional": true, "userInfo": ["JSONKeyPath": "@metadata.query.source"]]],
         "relationships": [["name": "issues", "destination": "Issue", "toMany": true, "inverse": "labels"]]],
    ]]
    private static let searchMappings: [String: JSONValue] = [
        "github-labels": ["entity": "Label", "attributes": ["name": "name", "@metadata.query.page": "page"]],
        "issues": ["entity": "Issue", "keyPath": "items", "attributes": ["number": "number", "@metadata.query.q": "search"],
                   "relationships": [["from": "labels", "to": "labels", "mapping": ["ref": "github-labels"]]]],
    ]

    @Test func R_P1_aPayloadRouteTakesTheQueryParametersItsMappingReads() throws {
        try ModelAPI.with(model: Self.searchModel, mappings: Self.searchMappings) { api in
            let page: JSONValue = ["items": [["number": 1347, "labels": [["name": "Bug"]]]]]
            let posted = try api.post("issues", page, query: "?q=github3+label:Bug&page=2")
            #expect(posted.status == 200, "\(posted.text)")
            #expect(try api.object("Issue", "1347")["search"] == "github3 label:Bug")
            #expect(try api.object("Label", "Bug")["page"] == "2", "read by the mapping the payload's mapping refers to")

            // The entity payload route takes what the entity's annotations read.
            let annotated = try api.client.send("POST", api.base + "/entities/Label/payloads?source=search", headers: [("Content-Type", "application/json")],
                                                body: ([["name": "Feature"]] as JSONValue).jsonBytes, token: api.key)
            #expect(annotated.status == 200, "\(annotated.text)")
            #expect(try api.object("Label", "Feature")["source"] == "search")
        }
    }

    @Test func R_P1_aQueryParameterNoMappingReadsIsStill400AndNothingIsWritten() throws {
        try ModelAPI.with(model: Self.searchModel, mappings: Self.searchMappings) { api in
            let page: JSONValue = ["items": [["number": 7, "labels": [["name": "Docs"]]]]]
            // A misspelt dryRun is never a silent write, whatever the mapping reads.
            let misspelt = try api.post("issues", page, query: "?q=x&dryrun=true")
            #expect(misspelt.status == 400)
            #expect(try misspelt.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } == ["/dryrun"])
            #expect(misspelt.text.contains("and those its mapping reads (@metadata.query.<name>)"))
            #expect(try api.client.send("GET", api.base + "/entities/Issue/objects/7", token: api.key).status == 404, "nothing was written")
            // `page` is read by the issues mapping (through its reference), not by the annotations of Label.
            let entityRoute = try api.client.send("POST", api.base + "/entities/Label/payloads?page=2", headers: [("Content-Type", "application/json")],
                                                  body: ([["name": "Docs"]] as JSONValue).jsonBytes, token: api.key)
            #expect(entityRoute.status == 400)
            #expect(try entityRoute.json()["errors"]?.arrayValue?.first?["pointer"] == "/page")
            #expect(try api.client.send("GET", api.base + "/entities/Label/objects/Docs", token: api.key).status == 404)
        }
    }
}
