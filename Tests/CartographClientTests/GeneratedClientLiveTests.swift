// R-S7: the client swift-openapi-generator generated from openapi.yaml (Generated/, committed; see
// scripts/generate-client.sh) walks the README's flow, then every other operation, against the real
// `cartograph serve`. Requests and responses go through the generated types only, so a spec that
// disagrees with the server fails here: an undocumented status, a body that does not decode.
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import Testing
import CartographTesting

@Suite(.serialized) struct GeneratedClientLiveTests {
    @Test func R_S7_generatedClientWalksTheReadmeFlow() async throws {
        let server = try LiveServer()
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let started = Date()
        let admin = try Self.client(server, token: server.adminToken)

        // Is it up?
        #expect(try await admin.getHealth().ok.body.json.status == "ok")

        // Create a tenant with the admin token: 201 with its first admin-scope key, shown once.
        let tenant = try await admin.createTenant(body: .json(.init(id: "acme"))).created.body.json
        #expect(tenant.id == "acme")
        #expect(tenant.apiKey.hasPrefix("cg_"))
        #expect(!tenant.keyId.isEmpty)
        #expect(abs(tenant.createdAt.timeIntervalSince(started)) < 300, "createdAt decodes as a date-time (with milliseconds)")
        let acme = try Self.client(server, token: tenant.apiKey)

        // A read-only key; the list shows ids and scopes, never secrets.
        let reader = try await acme.createKey(path: .init(tenant: "acme"), body: .json(.init(scope: .read))).created.body.json
        #expect(reader.scope == .read)
        #expect(reader.apiKey.hasPrefix("cg_"))
        let keys = try await acme.listKeys(path: .init(tenant: "acme")).ok.body.json.items
        #expect(keys.map(\.scope) == [.admin, .read])
        #expect(keys.map(\.id) == [tenant.keyId, reader.id])

        // Scopes nest: the read key may not create keys (403, a problem document).
        let readClient = try Self.client(server, token: reader.apiKey)
        let forbidden = try await readClient.createKey(path: .init(tenant: "acme"), body: .json(.init(scope: .admin)))
            .forbidden.body.applicationProblemJson
        #expect(forbidden.status == 403)
        #expect(forbidden._type.hasPrefix("urn:cartograph:problem:"))
        #expect(forbidden.detail?.contains("scope 'read'") == true)

        // Revoked, the read key stops working at once (401 with WWW-Authenticate).
        _ = try await acme.revokeKey(path: .init(tenant: "acme", keyId: reader.id)).noContent
        let revoked = try await readClient.listKeys(path: .init(tenant: "acme")).unauthorized
        #expect(revoked.headers.wwwAuthenticate == "Bearer")
        #expect(try revoked.body.applicationProblemJson.status == 401)

        // Register the README's model: 201, version 1, identification resolved.
        let model = try await acme.putModel(path: .init(tenant: "acme", model: "comics"), body: .json(.init(entities: [
            Self.object("""
                {"name": "Publisher", "attributes": [{"name": "identifier", "type": "integer64"}, {"name": "name", "type": "string"}],
                 "relationships": [{"name": "characters", "destination": "Character", "toMany": true, "inverse": "publisher"}]}
                """),
            Self.object("""
                {"name": "Character", "attributes": [{"name": "identifier", "type": "integer64"}, {"name": "name", "type": "string"}],
                 "relationships": [{"name": "publisher", "destination": "Publisher", "inverse": "characters"}],
                 "userInfo": {"identityAttributes": "identifier"}}
                """),
        ]))).created.body.json
        #expect(model.name == "comics")
        #expect(model.version == 1)
        let character = try #require(model.entities?.first { $0.value["name"] as? String == "Character" })
        #expect(character.value["identificationAttributes"] as? [String] == ["identifier"])

        // The README's mapping: 201, read back normalized.
        let mapping = try await acme.putMapping(
            path: .init(tenant: "acme", model: "comics", mapping: "characters"),
            body: .json(.init(
                entity: "Character", keyPath: "results",
                attributes: .case1(Self.object(#"{"id": "identifier", "name": "name"}"#)),
                relationships: [Self.object("""
                    {"from": "publisher", "to": "publisher",
                     "mapping": {"entity": "Publisher", "attributes": {"id": "identifier", "name": "name"}}}
                    """)]))
        ).created.body.json
        #expect(mapping.entity == "Character")
        #expect(mapping.keyPath == "results")
        guard case .case1(let attributes) = mapping.attributes else {
            Issue.record("attributes come back as an object: \(String(describing: mapping.attributes))")
            return
        }
        #expect(attributes.value["id"] as? String == "identifier")
        #expect(mapping.relationships?.count == 1)

        // Post what the API returned: the shared publisher is stored once (3 objects); again, nothing changes.
        let payload = try Self.value("""
            {"results": [{"id": 1699, "name": "Spider-Man", "publisher": {"id": 10, "name": "Marvel"}},
                         {"id": 1455, "name": "Iron Man",   "publisher": {"id": 10, "name": "Marvel"}}]}
            """)
        let mappingPath = Operations.PostMappingPayload.Input.Path(tenant: "acme", model: "comics", mapping: "characters")
        let first = try await acme.postMappingPayload(path: mappingPath, body: .json(payload)).ok.body.json
        #expect([first.inserted, first.updated, first.unchanged, first.deleted] as [Int] == [3, 0, 0, 0])
        #expect(first.discarded.isEmpty)
        #expect(first.objects.count == 2)
        let again = try await acme.postMappingPayload(path: mappingPath, body: .json(payload)).ok.body.json
        #expect([again.inserted, again.updated, again.unchanged, again.deleted] as [Int] == [0, 0, 3, 0])

        // Query with the README's predicate, order and count.
        let characters = Operations.ListObjects.Input.Path(tenant: "acme", model: "comics", entity: "Character")
        let page = try await acme.listObjects(path: characters, query: .init(
            _where: "name BEGINSWITH[c] 'spider' AND publisher.name == 'Marvel'", orderBy: "-name", count: true
        )).ok.body.json
        #expect(page.items.map { $0.value["name"] as? String } == ["Spider-Man"])
        #expect(page.items.first?.value["publisher"] as? Int == 10)
        #expect(page.items.first?.value["_entity"] as? String == "Character")
        #expect(page.total == 1)
        #expect(page.next == nil)

        // The same through the JSON query body: both characters, publisher embedded, one per page.
        let queryPath = Operations.QueryObjects.Input.Path(tenant: "acme", model: "comics", entity: "Character")
        let queried = try await acme.queryObjects(path: queryPath, body: .json(.init(
            _where: "publisher.identifier == $p", arguments: Self.object(#"{"p": 10}"#),
            orderBy: .case2(["-name"]), limit: 1, include: .case1("publisher"), count: true
        ))).ok.body.json
        #expect(queried.items.map { $0.value["name"] as? String } == ["Spider-Man"])
        #expect((queried.items.first?.value["publisher"] as? [String: (any Sendable)?])?["name"] as? String == "Marvel")
        #expect(queried.total == 2)
        let cursor = try #require(queried.next)
        let secondPage = try await acme.queryObjects(path: queryPath, body: .json(.init(
            _where: "publisher.identifier == 10", orderBy: .case1("-name"), limit: 1, cursor: cursor
        ))).ok.body.json
        #expect(secondPage.items.map { $0.value["name"] as? String } == ["Iron Man"])

        // One object by key, in both shapes.
        let objectPath = Operations.GetObject.Input.Path(tenant: "acme", model: "comics", entity: "Character", key: "1699")
        let spiderMan = try await acme.getObject(path: objectPath).ok.body.json
        #expect(spiderMan.value["name"] as? String == "Spider-Man")
        #expect(spiderMan.value["identifier"] as? Int == 1699)
        #expect(spiderMan.value["_id"] is Int)
        let embedded = try await acme.getObject(path: objectPath, query: .init(include: "publisher")).ok.body.json
        #expect((embedded.value["publisher"] as? [String: (any Sendable)?])?["identifier"] as? Int == 10)

        // Every write is in the change feed: three upserts, once each.
        let feed = try await acme.getChanges(path: .init(tenant: "acme", model: "comics"), query: .init(since: 0)).ok.body.json
        #expect(feed.changes.map(\.op) == [.upsert, .upsert, .upsert])
        #expect(Set(feed.changes.map { "\($0.entity) \($0.key.value ?? "nil")" }) == ["Publisher 10", "Character 1699", "Character 1455"])
        #expect(feed.changes.allSatisfy { $0.object != nil && $0.deletedAt == nil })
        #expect(feed.next == feed.changes.map(\.seq).max())

        // Delete an object: 204, gone (404 as a problem), and a tombstone in the feed.
        let ironMan = Operations.DeleteObject.Input.Path(tenant: "acme", model: "comics", entity: "Character", key: "1455")
        _ = try await acme.deleteObject(path: ironMan).noContent
        let missing = try await acme.getObject(path: .init(tenant: "acme", model: "comics", entity: "Character", key: "1455"))
        // openapi.yaml lists every status an operation answers, so the client types the 404 itself.
        let notFound = try missing.notFound.body.applicationProblemJson
        #expect(notFound.status == 404)
        #expect(notFound.title == "Not Found")
        #expect(notFound._type.hasPrefix("urn:cartograph:problem:"))
        let tail = try await acme.getChanges(path: .init(tenant: "acme", model: "comics"), query: .init(since: feed.next)).ok.body.json
        let tombstone = try #require(tail.changes.last)
        #expect(tombstone.op == .delete)
        #expect(tombstone.entity == "Character")
        #expect(tombstone.key.value as? Int == 1455)
        #expect(tombstone.object == nil)
        #expect(try abs(#require(tombstone.deletedAt).timeIntervalSince(started)) < 300)
        #expect(tail.next == tombstone.seq)

        // A mapping the model cannot take: 422 with a JSON Pointer per problem.
        let invalid = try await acme.putMapping(
            path: .init(tenant: "acme", model: "comics", mapping: "broken"),
            body: .json(.init(entity: "Character", attributes: .case2(["id", "nickname"]))))
        let unprocessable = try invalid.unprocessableContent.body.applicationProblemJson
        #expect(unprocessable.status == 422)
        #expect(unprocessable.errors?.isEmpty == false)
        #expect(unprocessable.errors?.allSatisfy { $0.pointer.hasPrefix("/attributes") } == true)

        // The admin token sees every tenant.
        #expect(try await admin.listTenants().ok.body.json.items.map(\.id) == ["acme"])
    }

    /// The operations the README does not walk, each once through the generated client: service
    /// routes (text and YAML bodies), tenants, Core Data XML and migration, annotation mappings and
    /// entity payloads, payload options and headers, bulk deletes and every DELETE.
    @Test func R_S7_generatedClientCoversEveryOtherOperation() async throws {
        let server = try LiveServer()
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let admin = try Self.client(server, token: server.adminToken)

        #expect(try await admin.getReadiness().ok.body.json.status == "ready")
        let served = try await admin.getOpenAPI().ok.body.yaml
        let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../openapi.yaml")
        #expect(try await Data(collecting: served, upTo: 1 << 20) == Data(contentsOf: spec))

        // The browser console's page and a file of it (docs/console.md). (`getRoot`'s 302 is left out:
        // URLSession follows it to the page.)
        let page = try await admin.getConsole().ok
        #expect(page.headers.xContentTypeOptions == .nosniff)
        #expect(page.headers.contentSecurityPolicy?.contains("default-src 'self'") == true)
        #expect(String(decoding: try await Data(collecting: page.body.html, upTo: 1 << 20), as: UTF8.self).contains("/console/console.js"))
        let script = try await admin.getConsoleAsset(path: .init(asset: .yaml_js)).ok.body.textJavascript
        #expect(String(decoding: try await Data(collecting: script, upTo: 1 << 20), as: UTF8.self).contains("CartographYAML"))

        let tenant = try await admin.createTenant(body: .json(.init(id: "globex"))).created.body.json
        let duplicate = try await admin.createTenant(body: .json(.init(id: "globex"))).conflict.body.applicationProblemJson
        #expect(duplicate.status == 409)
        // R-N1: the same creation with the id in the path (what a cluster's router routes).
        let initech = try await admin.putTenant(path: .init(tenant: "initech")).created.body.json
        #expect(initech.id == "initech" && initech.apiKey.hasPrefix("cg_"))
        #expect(try await admin.putTenant(path: .init(tenant: "initech")).conflict.body.applicationProblemJson.status == 409)
        let shown = try await admin.getTenant(path: .init(tenant: "globex")).ok.body.json
        #expect(shown.id == "globex")
        #expect(shown.createdAt == tenant.createdAt)
        #expect(tenant.scope == .admin)
        let key = try Self.client(server, token: tenant.apiKey)
        // A key says which tenant it belongs to and its scope (R-S1).
        let identity = try await key.getKey().ok.body.json
        #expect(identity.tenant == "globex" && identity.scope == .admin && identity.admin == false && identity.id == tenant.keyId)
        #expect(try await admin.getKey().ok.body.json.admin == true)

        // A Core Data `contents` file (application/xml), then a migration to version 2.
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Note" syncable="YES">
                    <attribute name="identifier" attributeType="Integer 64" usesScalarValueType="YES"/>
                </entity>
            </model>
            """
        let notes = Operations.PutModel.Input.Path(tenant: "globex", model: "notes")
        let created = try await key.putModel(path: notes, body: .xml(HTTPBody(xml))).created.body.json
        #expect(created.version == 1)
        #expect(created.entities?.compactMap { $0.value["name"] as? String } == ["Note"])
        var document = Components.Schemas.ModelDocument(entities: created.entities)
        var entity = try #require(document.entities?.first?.value)
        entity["attributes"] = (entity["attributes"] as? [(any Sendable)?] ?? []) + [["name": "text", "type": "string"] as [String: (any Sendable)?]]
        document.entities = [try OpenAPIObjectContainer(unvalidatedValue: entity)]
        let migrated = try await key.putModel(path: notes, body: .json(document)).ok.body.json
        #expect(migrated.version == 2)

        // A model with Groot annotations: its compiled mapping, and a payload through it.
        let cards = Operations.GetModel.Input.Path(tenant: "globex", model: "cards")
        _ = try await key.putModel(path: .init(tenant: "globex", model: "cards"), body: .json(.init(entities: [Self.object("""
            {"name": "Card", "userInfo": {"identityAttributes": "identifier"},
             "attributes": [{"name": "identifier", "type": "integer64", "userInfo": {"JSONKeyPath": "id"}},
                            {"name": "title", "type": "string", "userInfo": {"JSONKeyPath": "title"}},
                            {"name": "deckID", "type": "integer64"}],
             "relationships": [{"name": "deck", "destination": "Deck", "inverse": "cards"}]}
            """), Self.object("""
            {"name": "Deck", "userInfo": {"identityAttributes": "deckID"}, "attributes": [{"name": "deckID", "type": "integer64"}],
             "relationships": [{"name": "cards", "destination": "Card", "toMany": true, "inverse": "deck"}]}
            """)]))).created
        #expect(try await key.getModel(path: cards).ok.body.json.entities?.count == 2)
        #expect(try await key.listModels(path: .init(tenant: "globex")).ok.body.json.items.compactMap { $0.value["name"] as? String }
            == ["cards", "notes"])
        let compiled = try await key.getAnnotationMapping(path: .init(tenant: "globex", model: "cards", entity: "Card")).ok.body.json
        #expect(compiled.entity == "Card")
        guard case .case1(let compiledAttributes) = compiled.attributes else {
            Issue.record("a compiled mapping's attributes are an object: \(String(describing: compiled.attributes))")
            return
        }
        #expect(compiledAttributes.value["id"] as? String == "identifier")
        #expect(compiledAttributes.value["title"] as? String == "title")
        let cardPayload = Operations.PostEntityPayload.Input.Path(tenant: "globex", model: "cards", entity: "Card")
        let dryRun = try await key.postEntityPayload(path: cardPayload, query: .init(dryRun: true, explain: true),
                                                     body: .json(Self.value(#"[{"id": 1, "title": "Ace"}, {"id": 2, "title": "King"}]"#)))
            .ok.body.json
        #expect(dryRun.inserted == 2)
        #expect(dryRun.explain?.compactMap { $0.value["action"] as? String } == ["insert", "insert"])
        let stored = try await key.postEntityPayload(path: cardPayload, headers: .init(idempotencyKey: "cards-1"),
                                                     body: .json(Self.value(#"[{"id": 1, "title": "Ace"}, {"id": 2, "title": "King"}]"#)))
            .ok.body.json
        #expect(stored.inserted == 2)
        #expect(stored.changeSeq != nil)
        let exported = try await key.listObjects(path: .init(tenant: "globex", model: "cards", entity: "Card"),
                                                 query: .init(orderBy: "identifier", shape: .json)).ok.body.json
        #expect(exported.items.map { $0.value["title"] as? String } == ["Ace", "King"])
        #expect(exported.items.allSatisfy { $0.value["_id"] == nil })

        // Mappings: listed, read, deleted.
        let mappingPath = Operations.PutMapping.Input.Path(tenant: "globex", model: "cards", mapping: "cards")
        _ = try await key.putMapping(path: mappingPath, body: .json(.init(entity: "Card", attributes: .case2(["title"])))).created
        let replaced = try await key.putMapping(path: mappingPath, body: .json(.init(entity: "Card", keyPath: "cards",
                                                                                    attributes: .case2(["title"])))).ok.body.json
        #expect(replaced.keyPath == "cards")
        // A connection: `connectedBy` is sent as a string and read back normalized, as an object.
        _ = try await key.putMapping(path: .init(tenant: "globex", model: "cards", mapping: "dealt"), body: .json(.init(
            entity: "Card", attributes: .case2(["deckID"]),
            connections: [.init(relationship: "deck", connectedBy: .case1("deckID"))]))).created
        let dealt = try await key.getMapping(path: .init(tenant: "globex", model: "cards", mapping: "dealt")).ok.body.json
        #expect(dealt.entity == "Card")
        #expect(dealt.connections?.first?.connectedBy == .case3(.init(additionalProperties: ["deckID": "deckID"])))
        // R-P16, R-P17: a mapping without a cursor has none to answer; what its payloads drifted is kept per mapping.
        let dealtPath = Operations.GetMappingDrift.Input.Path(tenant: "globex", model: "cards", mapping: "dealt")
        #expect(try await key.getMappingCursor(path: .init(tenant: "globex", model: "cards", mapping: "dealt"))
            .notFound.body.applicationProblemJson.status == 404)
        #expect(try await key.getMappingDrift(path: dealtPath).ok.body.json.drift.isEmpty)
        #expect(try await key.listMappings(path: .init(tenant: "globex", model: "cards")).ok.body.json.items.count == 2)
        _ = try await key.deleteMapping(path: .init(tenant: "globex", model: "cards", mapping: "dealt")).noContent
        _ = try await key.deleteMapping(path: .init(tenant: "globex", model: "cards", mapping: "cards")).noContent

        // A bulk delete by predicate, then the model and the tenant.
        let bulk = try await key.deleteObjects(path: .init(tenant: "globex", model: "cards", entity: "Card"),
                                               query: .init(_where: "identifier > 1")).ok.body.json
        #expect(bulk.deleted == 1)
        _ = try await key.deleteModel(path: .init(tenant: "globex", model: "notes")).noContent
        _ = try await admin.deleteTenant(path: .init(tenant: "globex")).noContent
        #expect(try await admin.getTenant(path: .init(tenant: "globex")).notFound.body.applicationProblemJson.status == 404)

        // Metrics (text/plain), after the traffic above.
        let metrics = try await admin.getMetrics().ok.body.plainText
        #expect(try await String(collecting: metrics, upTo: 1 << 22).contains("cartograph_http_requests_total"))
    }

    /// R-S2 through R-S7: the admin sets a tenant's limits with `PATCH /v1/tenants/{tenant}`
    /// (`updateTenant`), reads them back with `getTenant` and `listTenants`; a partial update keeps the
    /// other limits, and an out-of-range value is a 422 problem that changes nothing.
    @Test func R_S2_R_S7_generatedClientSetsAndReadsTenantLimits() async throws {
        let server = try LiveServer()
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let admin = try Self.client(server, token: server.adminToken)
        _ = try await admin.createTenant(body: .json(.init(id: "initech"))).created
        let initech = Operations.UpdateTenant.Input.Path(tenant: "initech")

        // A new tenant has no limits of its own, and the server's defaults are off.
        let fresh = try await admin.getTenant(path: .init(tenant: "initech")).ok.body.json
        #expect(fresh.limits == .init())
        #expect(fresh.effectiveLimits == .init())
        #expect(fresh.usage == .init(models: 0, storeBytes: 0))

        let set = try await admin.updateTenant(path: initech, body: .json(.init(limits: .init(
            requestsPerSecond: 2.5, burst: 100, maxStoreBytes: 1_073_741_824, maxModels: 10)))).ok.body.json
        let expected = Components.Schemas.TenantLimits(requestsPerSecond: 2.5, burst: 100, maxStoreBytes: 1_073_741_824, maxModels: 10)
        #expect(set.id == "initech")
        #expect(set.limits == expected)
        #expect(set.effectiveLimits == .init(requestsPerSecond: 2.5, burst: 100, maxStoreBytes: 1_073_741_824, maxModels: 10))
        #expect(try await admin.getTenant(path: .init(tenant: "initech")).ok.body.json.limits == expected)

        // Merge-patch: only the limit sent changes; 0 means no limit for this tenant (none in force).
        let partial = try await admin.updateTenant(path: initech, body: .json(.init(limits: .init(maxModels: 0)))).ok.body.json
        #expect(partial.limits == .init(requestsPerSecond: 2.5, burst: 100, maxStoreBytes: 1_073_741_824, maxModels: 0))
        #expect(partial.effectiveLimits.maxModels == nil)
        #expect(partial.effectiveLimits.burst == 100)

        // A burst below 1 is refused with a pointer to it, and nothing changes.
        let refused = try await admin.updateTenant(path: initech, body: .json(.init(limits: .init(burst: 0, maxModels: 5))))
            .unprocessableContent.body.applicationProblemJson
        #expect(refused.status == 422)
        #expect(refused._type == "urn:cartograph:problem:unprocessable")
        #expect(refused.errors?.map(\.pointer) == ["/limits/burst"])
        #expect(refused.errors?.first?.message.contains("from 1 to") == true)
        let after = try await admin.listTenants().ok.body.json.items
        #expect(after.map(\.id) == ["initech"])
        #expect(after.first?.limits == partial.limits)

        // A tenant that does not exist: 404, a problem document.
        let missing = try await admin.updateTenant(path: .init(tenant: "nobody"), body: .json(.init(limits: .init(maxModels: 1))))
            .notFound.body.applicationProblemJson
        #expect(missing.status == 404)
        #expect(missing.detail?.contains("nobody") == true)
    }

    /// A tenant's webhooks through the generated client (R-W1): registered (the secret never answered),
    /// read back, listed, deleted. The receiver's host is allowed; nothing listens there, so deliveries fail.
    @Test func R_W1_R_S7_generatedClientRegistersReadsListsAndDeletesAWebhook() async throws {
        let server = try LiveServer(arguments: ["--webhook-allow-host", "127.0.0.1"])
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let admin = try Self.client(server, token: server.adminToken)
        let tenant = try await admin.createTenant(body: .json(.init(id: "hooks"))).created.body.json
        let key = try Self.client(server, token: tenant.apiKey)
        _ = try await key.putModel(path: .init(tenant: "hooks", model: "m"), body: .json(.init(entities: [Self.object("""
            {"name": "Item", "userInfo": {"identityAttributes": "id"}, "attributes": [{"name": "id", "type": "integer64"}]}
            """)]))).created
        let path = Operations.PutWebhook.Input.Path(tenant: "hooks", webhook: "crm")
        let document = Components.Schemas.WebhookDocument(url: "http://127.0.0.1:9/hook", secret: "whsec_" + Data(repeating: 7, count: 24).base64EncodedString(),
                                                          models: [.init(name: "m")])
        let registered = try await key.putWebhook(path: path, body: .json(document)).created.body.json
        #expect(registered.name == "crm" && registered.secretSet && registered.state == .enabled && registered.models.map(\.name) == ["m"])
        let read = try await key.getWebhook(path: .init(tenant: "hooks", webhook: "crm")).ok.body.json
        #expect(read.url == "http://127.0.0.1:9/hook" && read.secretSet)
        #expect(try await key.listWebhooks(path: .init(tenant: "hooks")).ok.body.json.items.map(\.name) == ["crm"])
        _ = try await key.deleteWebhook(path: .init(tenant: "hooks", webhook: "crm")).noContent
        #expect(try await key.getWebhook(path: .init(tenant: "hooks", webhook: "crm")).notFound.body.applicationProblemJson.status == 404)
    }

    /// A mapping's archive through the generated client (R-P18): a payload archived, listed and read back,
    /// its discarded object a dead letter, and a replay of the unchanged mapping that changes nothing.
    @Test func R_P18_R_S7_generatedClientListsReadsAndReplaysTheArchive() async throws {
        let server = try LiveServer()
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let admin = try Self.client(server, token: server.adminToken)
        let tenant = try await admin.createTenant(body: .json(.init(id: "kept"))).created.body.json
        let key = try Self.client(server, token: tenant.apiKey)
        _ = try await key.putModel(path: .init(tenant: "kept", model: "m"), body: .json(.init(entities: [Self.object("""
            {"name": "Item", "userInfo": {"identityAttributes": "id"},
             "attributes": [{"name": "id", "type": "integer64"}, {"name": "name", "type": "string", "optional": false}]}
            """)]))).created
        let mapping = Operations.PutMapping.Input.Path(tenant: "kept", model: "m", mapping: "items")
        _ = try await key.putMapping(path: mapping, body: .json(.init(entity: "Item", keyPath: "items", attributes: .case2(["id", "name"]),
                                                                      discardsInvalidObjectsOnInsert: true, archive: .init(days: 7)))).created
        let posted = try await key.postMappingPayload(path: .init(tenant: "kept", model: "m", mapping: "items"),
                                                      body: .json(Self.value(#"{"items": [{"id": 1, "name": "one"}, {"id": 2}]}"#))).ok.body.json
        let archiveId = try #require(posted.archive?.id)
        let listed = try await key.listMappingArchive(path: .init(tenant: "kept", model: "m", mapping: "items")).ok.body.json
        #expect(listed.items.map(\.id) == [archiveId] && listed.items.first?.changeSeq == posted.changeSeq.map(Int64.init))
        let body = try await key.getArchivedPayload(path: .init(tenant: "kept", model: "m", mapping: "items", archiveId: String(archiveId))).ok.body.json
        #expect(body.value as? [String: (any Sendable)?] != nil)
        let letters = try await key.listMappingDeadLetters(path: .init(tenant: "kept", model: "m", mapping: "items")).ok.body.json
        #expect(letters.items.map(\.pointer) == ["/items/1"] && letters.items.first?.archiveId == archiveId)
        let replayed = try await key.replayMappingArchive(path: .init(tenant: "kept", model: "m", mapping: "items"),
                                                          body: .json(.init(from: archiveId, to: archiveId))).ok.body.json
        #expect(replayed.replayed.map(\.archiveId) == [archiveId] && replayed.inserted == 0 && replayed.updated == 0 && replayed.deleted == 0)
    }

    @Test func R_Q6_R_Q8_R_Q9_R_P19_R_S7_generatedClientPostsNDJSONSearchesFacetsAndAggregates() async throws {
        let server = try LiveServer()
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let admin = try Self.client(server, token: server.adminToken)
        let tenant = try await admin.createTenant(body: .json(.init(id: "reads"))).created.body.json
        let key = try Self.client(server, token: tenant.apiKey)
        _ = try await key.putModel(path: .init(tenant: "reads", model: "m"), body: .json(.init(entities: [Self.object("""
            {"name": "Note", "userInfo": {"identityAttributes": "id"},
             "attributes": [{"name": "id", "type": "integer64"}, {"name": "kind", "type": "string"},
                            {"name": "text", "type": "string", "searchable": true}, {"name": "size", "type": "integer64"}]}
            """)]))).created
        _ = try await key.putMapping(path: .init(tenant: "reads", model: "m", mapping: "notes"),
                                     body: .json(.init(entity: "Note", attributes: .case2(["id", "kind", "text", "size"])))).created
        let lines = """
            {"id": 1, "kind": "bug", "text": "the spider crawls", "size": 3}
            {"id": 2, "kind": "bug", "text": "a quiet web", "size": 5}
            {"id": 3, "kind": "idea", "text": "spider silk", "size": 7}

            """
        let posted = try await key.postMappingPayload(path: .init(tenant: "reads", model: "m", mapping: "notes"),
                                                      body: .applicationXNdjson(HTTPBody(lines))).ok.body.json
        #expect(posted.inserted == 3)
        let notes = Operations.ListObjects.Input.Path(tenant: "reads", model: "m", entity: "Note")
        let found = try await key.listObjects(path: notes, query: .init(search: "spider", facets: "kind")).ok.body.json
        #expect(Set(found.items.compactMap { $0.value["id"] as? Int }) == [1, 3])
        let kinds = try #require(found.facets?.additionalProperties["kind"])
        #expect(kinds.values.map(\.count) == [1, 1] && kinds.otherValues == 0)
        let grouped = try await key.aggregateObjects(path: .init(tenant: "reads", model: "m", entity: "Note"), body: .json(.init(
            groupBy: .case1("kind"), aggregates: .init(additionalProperties: ["n": "count", "total": "sum:size"]), orderBy: .case1("kind")
        ))).ok.body.json
        #expect(grouped.more == false)
        #expect(grouped.groups.map { [$0.value["kind"] as? String, ($0.value["n"] as? Int).map(String.init), ($0.value["total"] as? Int).map(String.init)] }
                == [["bug", "2", "8"], ["idea", "1", "7"]])
    }

    @Test func R_S2_R_S7_aQueryPastTheTimeLimitIsTheSpecs503() async throws {
        let server = try LiveServer(arguments: ["--request-time-limit", "1"])
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let admin = try Self.client(server, token: server.adminToken)
        let tenant = try await admin.createTenant(body: .json(.init(id: "slow"))).created.body.json
        let key = try Self.client(server, token: tenant.apiKey)
        _ = try await key.putModel(path: .init(tenant: "slow", model: "m"), body: .json(.init(entities: [Self.object("""
            {"name": "Item", "userInfo": {"identityAttributes": "id"},
             "attributes": [{"name": "id", "type": "integer64", "userInfo": {"JSONKeyPath": "id"}},
                            {"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}}]}
            """)]))).created
        let backtracking = String(repeating: "a", count: 30) + "!"
        let items = (1...5).map { #"{"id": \#($0), "name": "\#(backtracking)"}"# }.joined(separator: ", ")
        let stored = try await key.postEntityPayload(path: .init(tenant: "slow", model: "m", entity: "Item"),
                                                     body: .json(Self.value("[\(items)]"))).ok.body.json
        #expect(stored.inserted == 5)
        // `(a+)+$` backtracks on every name: the query outlives the 1 s limit.
        let stopped = try await key.listObjects(path: .init(tenant: "slow", model: "m", entity: "Item"),
                                                query: .init(_where: "name MATCHES '(a+)+$'"))
            .serviceUnavailable.body.applicationProblemJson
        #expect(stopped.status == 503)
        #expect(stopped._type == "urn:cartograph:problem:time-limit-exceeded")
        let listed = try await key.listObjects(path: .init(tenant: "slow", model: "m", entity: "Item"), query: .init(count: true)).ok.body.json
        #expect(listed.total == 5)
    }

    /// A generated client for `server` that sends `token` as a bearer token; dates as the server
    /// writes them (ISO 8601 with milliseconds, docs/api.md#json).
    static func client(_ server: LiveServer, token: String) throws -> Client {
        Client(
            serverURL: try #require(URL(string: "http://127.0.0.1:\(server.port)")),
            configuration: Configuration(dateTranscoder: .iso8601WithFractionalSeconds),
            transport: URLSessionTransport(),
            middlewares: [BearerToken(token: token)]
        )
    }

    /// A free-form JSON object of the spec (`type: object`) from JSON text.
    static func object(_ json: String) throws -> OpenAPIObjectContainer {
        try JSONDecoder().decode(OpenAPIObjectContainer.self, from: Data(json.utf8))
    }

    /// Any JSON value of the spec (`schema: {}`) from JSON text.
    static func value(_ json: String) throws -> OpenAPIValueContainer {
        try JSONDecoder().decode(OpenAPIValueContainer.self, from: Data(json.utf8))
    }
}

/// Adds `Authorization: Bearer <token>` to every request: the spec's `bearer` security scheme, which
/// the generated client leaves to a middleware.
struct BearerToken: ClientMiddleware {
    let token: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}
