// R-W1…R-W4 without a socket: the signature against the Standard Webhooks specification's example and
// Python's hmac, the address policy, the webhook document's 422s and the routes' answers (in process:
// no delivery is started here; WebhookLiveTests delivers).
import Foundation
import Testing
import CartographCore
import CartographTesting
@testable import CartographHTTP

struct WebhookTests {
    // MARK: R-W2 the signature

    @Test func R_W2_theSignatureIsTheStandardWebhooksExamplesSignature() throws {
        // The example of the specification's reference libraries (standard-webhooks, svix): secret, id,
        // timestamp and body give this signature.
        let signer = try #require(WebhookSigner(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let signature = signer.signature(messageID: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330,
                                         body: Array(#"{"test": 2432232314}"#.utf8))
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        let headers = signer.headers(messageID: "msg_1", timestamp: 7, body: Array("{}".utf8))
        #expect(headers.map(\.0) == ["webhook-id", "webhook-timestamp", "webhook-signature"])
        #expect(headers[1].1 == "7")
    }

    @Test func R_W2_theSignatureMatchesPythonsHMACForAnotherSecretAndBody() throws {
        let secret = "whsec_" + Data((0..<32).map { UInt8($0 * 7 % 256) }).base64EncodedString()
        let body = #"{"changes":[{"seq":1,"key":"é ✓"}],"next":1}"#
        let signature = try #require(WebhookSigner(secret: secret)).signature(messageID: "msg_abc", timestamp: 1800000000, body: Array(body.utf8))
        let script = """
            import base64, hashlib, hmac, sys
            key = base64.b64decode(sys.argv[1][len("whsec_"):])
            signed = b"msg_abc.1800000000." + sys.argv[2].encode()
            print("v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, secret, body]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == signature)
    }

    @Test func R_W2_aSecretIsWhsecAndTheBase64OfTwentyFourToSixtyFourBytes() {
        #expect(WebhookSigner(secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") == nil, "no prefix")
        #expect(WebhookSigner(secret: "whsec_" + Data(count: 23).base64EncodedString()) == nil, "too short")
        #expect(WebhookSigner(secret: "whsec_" + Data(count: 65).base64EncodedString()) == nil, "too long")
        #expect(WebhookSigner(secret: "whsec_not base64!") == nil)
        #expect(WebhookSigner(secret: "whsec_" + Data(count: 24).base64EncodedString()) != nil)
        #expect(WebhookSigner(secret: "whsec_" + Data(count: 64).base64EncodedString()) != nil)
    }

    @Test func R_W2_aBatchKeepsItsIdAcrossAttempts() {
        let first = WebhookDispatcher.messageID(tenant: "acme", webhook: "w", model: "m", epoch: "e", since: 0, next: 100)
        #expect(first == WebhookDispatcher.messageID(tenant: "acme", webhook: "w", model: "m", epoch: "e", since: 0, next: 100))
        #expect(first != WebhookDispatcher.messageID(tenant: "acme", webhook: "w", model: "m", epoch: "e", since: 100, next: 200))
        #expect(first.hasPrefix("msg_") && first.count == 36)
    }

    // MARK: R-W4 the address policy

    @Test func R_W4_onlyHttpsToPublicHostsUnlessTheOperatorAllowsTheHost() {
        let policy = WebhookAddressPolicy(allowedHosts: ["127.0.0.1", "Hooks.Internal"])
        func refused(_ url: String) -> String? { if case .refused(let why) = policy.check(url) { why } else { nil } }
        #expect(refused("https://hooks.example.com/cartograph") == nil)
        #expect(refused("https://93.184.216.34/x") == nil)
        #expect(refused("http://hooks.example.com/x")?.contains("must be https") == true)
        #expect(refused("ftp://hooks.example.com/x")?.contains("scheme must be https") == true)
        #expect(refused("https://user:pw@hooks.example.com/x")?.contains("credentials") == true)
        #expect(refused("not a url") != nil)
        #expect(refused("https:///path") != nil)
        // Loopback, private, link-local, shared, unspecified and multicast literals, IPv4 and IPv6.
        for (url, range) in [("https://127.0.0.2/x", "loopback"), ("https://10.1.2.3/x", "private"), ("https://172.16.0.1/x", "private"),
                             ("https://172.31.255.255/x", "private"), ("https://192.168.1.1/x", "private"), ("https://169.254.169.254/x", "link-local"),
                             ("https://100.64.0.1/x", "shared"), ("https://0.0.0.0/x", "unspecified"), ("https://224.0.0.1/x", "multicast"),
                             ("https://[::1]/x", "loopback"), ("https://[fd00::1]/x", "private"), ("https://[fe80::1]/x", "link-local"),
                             ("https://[::]/x", "unspecified"), ("https://[::ffff:10.0.0.1]/x", "private"), ("https://localhost/x", "loopback"),
                             ("https://api.localhost/x", "loopback")] {
            #expect(refused(url)?.contains(range) == true, "\(url): \(refused(url) ?? "allowed")")
        }
        #expect(refused("https://172.32.0.1/x") == nil, "172.32/16 is public")
        // Allowed by name (case-insensitively): plain http and loopback too.
        #expect(refused("http://127.0.0.1:8080/hook") == nil)
        #expect(refused("http://hooks.internal/hook") == nil)
        #expect(refused("http://127.0.0.2/hook")?.contains("must be https") == true, "only the named host")
    }

    @Test func R_W4_aNameIsCheckedAgainAfterResolution() {
        let policy = WebhookAddressPolicy(allowedHosts: [])
        #expect(policy.refusalAfterResolving("localhost", port: 443)?.contains("loopback") == true)
        #expect(policy.refusalAfterResolving("127.0.0.1", port: 443)?.contains("loopback") == true)
        #expect(WebhookAddressPolicy(allowedHosts: ["localhost"]).refusalAfterResolving("localhost", port: 443) == nil)
        #expect(policy.refusalAfterResolving("no-such-host.invalid", port: 443)?.contains("cannot resolve") == true)
    }

    @Test func R_W3_retriesWaitTwiceAsLongAfterEachFailureUpToACap() throws {
        let server = try InProcessServer()
        let dispatcher = server.application.webhooks
        #expect(dispatcher.retryDelay(afterFailures: 1) == .seconds(1))
        #expect(dispatcher.retryDelay(afterFailures: 2) == .seconds(2))
        #expect(dispatcher.retryDelay(afterFailures: 4) == .seconds(8))
        #expect(dispatcher.retryDelay(afterFailures: 9) == .seconds(256))
        #expect(dispatcher.retryDelay(afterFailures: 1000) == .seconds(256))
    }

    // MARK: R-W1 the routes and the document

    static let path = "/v1/tenants/acme/webhooks/mirror"
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    @Test func R_W1_aWrongDocumentIsOne422WithAPointerAtEachProblem() throws {
        try withComics { (server, key) throws in
            let answer = try server.client.sendJSON("PUT", Self.path, [
                "url": "https://hooks.example.com/x", "secret": "whsec_short", "extra": true,
                "models": [["name": "comics", "entities": ["Character", "Villain", 3]], ["name": "nope"], "comics", ["name": "comics"]],
            ], token: key)
            #expect(answer.status == 422)
            let problem = try answer.json()
            let pointers = problem["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []
            #expect(Set(pointers) == ["/extra", "/secret", "/models/0/entities/1", "/models/0/entities/2", "/models/1/name", "/models/2", "/models/3/name"])
            #expect(problem["errors"]?.arrayValue?.first { $0["pointer"] == "/models/0/entities/1" }?["message"]?.stringValue?.contains("'Villain'") == true)

            let missing = try server.client.sendJSON("PUT", Self.path, [:], token: key)
            #expect(missing.status == 422)
            #expect(Set(try missing.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []) == ["/url", "/models", "/secret"])
            #expect(try server.client.sendJSON("PUT", Self.path, ["not", "an", "object"], token: key).status == 422)
            #expect(try server.client.send("GET", Self.path, token: key).status == 404, "nothing stored")
        }
    }

    @Test func R_W1_R_W4_aURLThatIsNotAllowedIsA422SayingWhy() throws {
        try withComics { (server, key) throws in
            for (url, why) in [("http://hooks.example.com/x", "must be https"), ("https://127.0.0.1/x", "loopback address"),
                               ("https://10.0.0.8/x", "private address")] {
                let answer = try server.client.sendJSON("PUT", Self.path, ["url": .string(url), "secret": .string(Self.secret), "models": [["name": "comics"]]],
                                                        token: key)
                #expect(answer.status == 422)
                let problem = try answer.json()
                #expect(problem["detail"]?.stringValue?.hasPrefix("The webhook's URL is not allowed") == true)
                #expect(problem["detail"]?.stringValue?.contains(why) == true, "\(problem)")
                #expect(problem["errors"]?.arrayValue?.first?["pointer"] == "/url")
            }
        }
        // The operator allows the host: plain http to loopback is accepted.
        let server = try InProcessServer(arguments: ["--webhook-allow-host", "127.0.0.1"])
        let key = try registerComics(on: server)
        #expect(try server.client.sendJSON("PUT", Self.path, ["url": "http://127.0.0.1:9/x", "secret": .string(Self.secret), "models": [["name": "comics"]]],
                                           token: key).status == 201)
    }

    @Test func R_W1_putGetListAndDeleteNeverAnswerTheSecret() throws {
        try withComics { (server, key) throws in
            let document: JSONValue = ["url": "https://hooks.example.com/cartograph", "secret": .string(Self.secret),
                                       "models": [["name": "comics", "entities": ["Character"]]]]
            let created = try server.client.sendJSON("PUT", Self.path, document, token: key)
            #expect(created.status == 201)
            let webhook = try created.json()
            #expect(webhook["name"] == "mirror")
            #expect(webhook["url"] == "https://hooks.example.com/cartograph")
            #expect(webhook["models"] == [["name": "comics", "entities": ["Character"]]])
            #expect(webhook["secretSet"] == true)
            #expect(webhook["state"] == "enabled")
            #expect(webhook["consecutiveFailures"] == 0)
            #expect(webhook["positions"] == [])
            #expect(!created.text.contains(Self.secret))

            let read = try server.client.send("GET", Self.path, token: key)
            #expect(read.status == 200)
            #expect(try read.json()["deliveries"] == [])
            #expect(!read.text.contains(Self.secret))
            // Replaced without a secret: the stored one is kept; 200.
            let replaced = try server.client.sendJSON("PUT", Self.path, ["url": "https://other.example.com/x", "models": [["name": "comics"]]], token: key)
            #expect(replaced.status == 200)
            #expect(try replaced.json()["secretSet"] == true)
            #expect(try replaced.json()["models"] == [["name": "comics", "entities": []]])
            #expect(try server.client.send("GET", "/v1/tenants/acme/webhooks", token: key).json()["items"]?.arrayValue?.map { $0["name"] } == ["mirror"])

            // A read key may not see or change webhooks (they hold a secret and send the tenant's data out).
            let reader = try #require(try server.client.sendJSON("POST", "/v1/tenants/acme/keys", ["scope": "read"], token: key).json()["apiKey"]?.stringValue)
            #expect(try server.client.send("GET", Self.path, token: reader).status == 403)
            #expect(try server.client.sendJSON("PUT", Self.path, document, token: reader).status == 403)

            #expect(try server.client.send("DELETE", Self.path, token: key).status == 204)
            #expect(try server.client.send("GET", Self.path, token: key).status == 404)
            #expect(try server.client.send("DELETE", Self.path, token: key).status == 404)
        }
    }
}
