// Deep inputs at the largest allowed --max-json-depth (R-S2, issue 17): the process must answer, never
// crash. Each nesting level of a payload is a level of recursion in the reader and the engine, so these
// run on the real server's request threads.
import Foundation
import Testing
import CartographCore
import CartographTesting

/// Groot-style annotated `Node` whose to-one `child` points back to `Node`: one JSON level per object.
let nodeModel: JSONValue = ["entities": [
    ["name": "Node", "attributes": [["name": "id", "type": "integer64", "userInfo": ["JSONKeyPath": "id"]]],
     "relationships": [["name": "child", "destination": "Node", "inverse": "parent", "userInfo": ["JSONKeyPath": "child"]],
                       ["name": "parent", "destination": "Node", "inverse": "child"]],
     "userInfo": ["identityAttributes": "id"]],
]]

/// `{"id": 0, "child": {"id": 1, "child": …}}` with `count` objects.
func nodeChain(_ count: Int) -> JSONValue {
    var node: JSONValue = ["id": .number(JSONNumber(Int64(count - 1)))]
    for id in stride(from: count - 2, through: 0, by: -1) { node = ["id": .number(JSONNumber(Int64(id))), "child": node] }
    return node
}

@Suite(.serialized) struct DeepPayloadLiveTests {
    @Test func R_S2_anAnnotatedChainAtTheLargestJSONDepthMapsExportsAndDeletes() throws {
        let depth = 2_048
        try ModelAPI.with(model: nodeModel, serverArguments: ["--max-json-depth", "\(depth)"], live: true) { api in
            let result = try api.post("/entities/Node/payloads", nodeChain(depth - 1))
            #expect(result.status == 200, "\(result.text.prefix(300))")
            #expect(try result.json()["inserted"] == .number(JSONNumber(Int64(depth - 1))))
            #expect(try api.object("Node", "\(depth - 2)")["parent"] == .number(JSONNumber(Int64(depth - 3))))
            let exported = try api.client.send("GET", api.base + "/entities/Node/objects/0?shape=json", token: api.key)
            #expect(exported.status == 200, "\(exported.text.prefix(300))")
            let tooDeep = try api.post("/entities/Node/payloads", nodeChain(depth + 1))
            #expect(tooDeep.status == 400, "one level more is refused before it is mapped")
            let deleted = try api.client.send("DELETE", api.base + "/entities/Node/objects?where=TRUEPREDICATE", token: api.key)
            #expect(deleted.status == 200, "\(deleted.text.prefix(300))")
            #expect(try api.get("entities/Node/objects?count=true")["total"] == 0)
        }
    }
}
