// Tenants and tenant API keys (docs/api.md), and each tenant's limits (R-S2).
import CartographCore
import CartographStore

struct ControlPlaneRoutes: Sendable {
    let control: ControlStore
    let stores: StoreRegistry
    let limits: TenantLimitsInForce
    /// Long polls of a deleted tenant or a revoked key end at once.
    let changeWaiters: ChangeWaiters
    let jsonReader: JSONReader

    var routes: [Route] { [
        Route("POST", "/v1/tenants", access: .admin, body: .json) { context in
            let body = try context.jsonBody(jsonReader)
            guard case .object(let document) = body else {
                throw CartographError(.unprocessable, "The body must be an object like {\"id\": \"acme\"}.",
                                      errors: [.init(pointer: "", message: "expected an object, found \(body.kindName)")])
            }
            guard let id = document["id"]?.stringValue, Names.isResourceName(id) else {
                throw CartographError(.unprocessable, "The tenant id must be a string matching ^[a-z0-9][a-z0-9_-]{0,62}$.",
                                      errors: [.init(pointer: "/id", message: "expected a tenant name such as \"acme\"")])
            }
            return try createTenant(id)
        },
        Route("GET", "/v1/tenants", access: .admin) { _ in
            .json(["items": .array(control.tenants().map(\.json))])
        },
        Route("GET", "/v1/tenants/{tenant}", access: .admin) { context in
            let id = context.parameter("tenant")
            guard let tenant = control.tenant(id) else { throw Self.unknownTenant(id) }
            return .json(detail(tenant))
        },
        // The same creation with the id in the path, so that a router choosing a tenant's node from the
        // path (a cluster, docs/cluster.md) sends it to the node that will serve the tenant.
        Route("PUT", "/v1/tenants/{tenant}", access: .admin) { context in
            try createTenant(context.parameter("tenant"))
        },
        // R-S2: the admin sets a tenant's limits (null = the server's default, 0 = no limit).
        Route("PATCH", "/v1/tenants/{tenant}", access: .admin, body: .json) { context in
            let id = try control.existingTenant(context.parameter("tenant"))
            let current = control.tenant(id)?.limits ?? TenantLimits()
            let patched = try TenantLimits.patched(current, with: try context.jsonBody(jsonReader))
            let tenant = try control.setLimits(patched, tenantID: id)
            limits.changed(tenant: id)
            return .json(detail(tenant))
        },
        Route("DELETE", "/v1/tenants/{tenant}", access: .admin) { context in
            let id = context.parameter("tenant")
            stores.closeStores(tenant: id)
            try control.deleteTenant(id)
            limits.changed(tenant: id)
            // Its waiting long polls end now, with 404.
            changeWaiters.dismissRefused(tenant: id)
            return .noContent
        },
        Route("POST", "/v1/tenants/{tenant}/keys", access: .tenant(.admin), body: .json) { context in
            let body = try context.jsonBody(jsonReader)
            guard case .object(let document) = body else {
                throw CartographError(.unprocessable, "The body must be an object like {\"scope\": \"read\"}.",
                                      errors: [.init(pointer: "", message: "expected an object, found \(body.kindName)")])
            }
            guard let scopeName = document["scope"]?.stringValue, let scope = KeyScope(rawValue: scopeName) else {
                throw CartographError(.unprocessable, "The scope must be \"read\", \"write\" or \"admin\".",
                                      errors: [.init(pointer: "/scope", message: "expected \"read\", \"write\" or \"admin\"")])
            }
            let tenant = try control.existingTenant(context.parameter("tenant"))
            let created = try control.createKey(tenantID: tenant, scope: scope)
            var json = created.info.json
            json["apiKey"] = .string(created.token)
            return .json(.object(json), status: 201)
        },
        // Who a token is: a key's tenant and scope, so that a key alone is enough to sign in (the console).
        Route("GET", "/v1/key", access: .anyToken) { context in
            switch context.principal {
            case .key(let key):
                var json = key.json
                json["tenant"] = .string(key.tenantID)
                json["admin"] = false
                return .json(.object(json))
            case .admin:
                return .json(["admin": true])
            case .anonymous:
                throw CartographError(.unauthorized, "Send 'Authorization: Bearer <token>'.")
            }
        },
        Route("GET", "/v1/tenants/{tenant}/keys", access: .tenant(.admin)) { context in
            let tenant = try control.existingTenant(context.parameter("tenant"))
            return .json(["items": .array(control.keys(tenantID: tenant).map { JSONValue.object($0.json) })])
        },
        Route("DELETE", "/v1/tenants/{tenant}/keys/{keyId}", access: .tenant(.admin)) { context in
            let tenant = try control.existingTenant(context.parameter("tenant"))
            try control.revokeKey(tenantID: tenant, keyID: context.parameter("keyId"))
            // The key's waiting long polls end now, with 401.
            changeWaiters.dismissRefused(tenant: tenant)
            return .noContent
        },
    ] }

    /// Creates a tenant and answers 201 with its first admin-scope key (shown once); 409 if it exists.
    private func createTenant(_ id: String) throws(CartographError) -> HTTPResponse {
        let created = try control.createTenant(id: id)
        let tenant = control.tenant(id)
        return .json(["id": .string(id), "apiKey": .string(created.token), "keyId": .string(created.info.id), "scope": .string(created.info.scope.rawValue),
                      "createdAt": .string(Timestamp.render(tenant?.createdAt ?? created.info.createdAt))], status: 201)
    }

    /// One tenant for the admin: its limits as set, the limits in force, and what it uses of them.
    private func detail(_ tenant: Tenant) -> JSONValue {
        let sizes = stores.storeBytes(tenant: tenant.id)
        return ["id": .string(tenant.id), "createdAt": .string(Timestamp.render(tenant.createdAt)), "limits": tenant.limits.json,
                "effectiveLimits": limits.effective(tenant.limits).json,
                "usage": ["models": .number(JSONNumber(sizes.count)), "storeBytes": .number(JSONNumber(sizes.values.reduce(0, +)))]]
    }

    /// The 404 for a tenant that does not exist.
    static func unknownTenant(_ id: String) -> CartographError { CartographError(.notFound, "No tenant named '\(id)'.") }
}

extension ControlStore {
    /// `id` when the tenant exists, or 404 (reached only by the admin token: a key of a missing tenant cannot authenticate).
    func existingTenant(_ id: String) throws(CartographError) -> String {
        guard tenant(id) != nil else { throw ControlPlaneRoutes.unknownTenant(id) }
        return id
    }
}

extension Tenant {
    var json: JSONValue { ["id": .string(id), "createdAt": .string(Timestamp.render(createdAt)), "limits": limits.json] }
}

extension APIKeyInfo {
    var json: JSONObject {
        JSONObject([("id", .string(id)), ("scope", .string(scope.rawValue)), ("createdAt", .string(Timestamp.render(createdAt)))])
    }
}
