// A payload's mapping deleted while the payload's body is still arriving (R-P11): half the body is
// sent on a socket, the mapping deleted, then the rest sent.
import Foundation
import Testing
import CartographCore
import CartographTesting

@Suite(.serialized) struct MappingLifecycleLiveTests {
    @Test func R_P11_aMappingDeletedWhileItsPayloadIsInFlightStoresNothing() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping], live: true) { api in
            // Half the payload is sent; the mapping is deleted; then the rest arrives.
            let payload: JSONValue = ["users": .array((0..<2000).map { ["id": .number(JSONNumber(Int64($0))), "name": "user"] })]
            let body = payload.jsonBytes
            let client = try #require(api.client as? RawHTTPClient)
            let socket = try client.connect()
            defer { close(socket) }
            let head = "POST \(api.base)/mappings/users/payloads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(api.key)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            #expect(client.writeAll(socket, Array(head.utf8) + body.prefix(body.count / 2)))
            #expect(try api.client.send("DELETE", api.base + "/mappings/users", token: api.key).status == 204)
            #expect(client.writeAll(socket, Array(body.dropFirst(body.count / 2))))
            let response = try client.readResponse(socket)
            #expect(response.status == 404, "\(response.text)")
            #expect(try response.json()["detail"]?.stringValue?.contains("users") == true)
            #expect(try api.get("entities/User/objects?count=true")["total"] == 0, "nothing of the payload was stored")
            #expect(try api.changes().isEmpty)
        }
    }
}
