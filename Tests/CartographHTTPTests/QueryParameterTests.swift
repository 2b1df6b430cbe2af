// Unknown query parameters are refused (issue 16, "Requests"): `DELETE …/objects?where=…&dryRun=true`
// deleted the object while the client believed it was a dry run. Every route takes the parameters
// openapi.yaml documents for it (RouterTests checks the table) and answers 400 naming any other.
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
}
