// Tenants and tenant API keys (docs/api.md), and each tenant's limits (R-S2).
import Foundation
import CartographCore
import CartographStore

enum ControlPlaneRoutes {
    static let all: [Route] = [
        Route("POST", "/v1/tenants", access: .admin, body: .json) { context in
            let body = try context.jsonBody()
            guard case .object(let document) = body else {
                throw CartographError(.unprocessable, "The body must be an object like {\"id\": \"acme\"}.",
                                      errors: [.init(pointer: "", message: "expected an object, found \(body.kindName)")])
            }
            guard let id = document["id"]?.stringValue, Names.isResourceName(id) else {
                throw CartographError(.unprocessable, "The tenant id must be a string matching ^[a-z0-9][a-z0-9_-]{0,62}$.",
                                      errors: [.init(pointer: "/id", message: "expected a tenant name such as \"acme\"")])
            }
            return try createTenant(id, context.application)
        },
        Route("GET", "/v1/tenants", access: .admin) { context in
            .json(["items": .array(context.application.control.tenants().map(\.json))])
        },
        Route("GET", "/v1/tenants/{tenant}", access: .admin) { context in
            let id = context.parameter("tenant")
            guard let tenant = context.application.control.tenant(id) else { throw unknownTenant(id) }
            return .json(detail(tenant, context.application))
        },
        // The same creation with the id in the path, so that a router choosing a tenant's node from the
        // path (a cluster, docs/cluster.md) sends it to the node that will serve the tenant.
        Route("PUT", "/v1/tenants/{tenant}", access: .admin) { context in
            try createTenant(context.parameter("tenant"), context.application)
        },
        // R-S2: the admin sets a tenant's limits (null = the server's default, 0 = no limit).
        Route("PATCH", "/v1/tenants/{tenant}", access: .admin, body: .json) { context in
            let id = try existingTenant(context)
            let application = context.application
            let current = application.control.tenant(id)?.limits ?? TenantLimits()
            let limits = try TenantLimits.patched(current, with: try context.jsonBody())
            let tenant = try application.control.setLimits(limits, tenantID: id)
            application.tenantLimitsChanged(id)
            return .json(detail(tenant, application))
        },
        Route("DELETE", "/v1/tenants/{tenant}", access: .admin) { context in
            context.application.stores.closeStores(tenant: context.parameter("tenant"))
            try context.application.control.deleteTenant(context.parameter("tenant"))
            context.application.tenantLimitsChanged(context.parameter("tenant"))
            // Its waiting long polls end now, with 404.
            context.application.changeWaiters.dismissRefused(tenant: context.parameter("tenant"))
            return .noContent
        },
        Route("POST", "/v1/tenants/{tenant}/keys", access: .tenant(.admin), body: .json) { context in
            let body = try context.jsonBody()
            guard case .object(let document) = body else {
                throw CartographError(.unprocessable, "The body must be an object like {\"scope\": \"read\"}.",
                                      errors: [.init(pointer: "", message: "expected an object, found \(body.kindName)")])
            }
            guard let scopeName = document["scope"]?.stringValue, let scope = KeyScope(rawValue: scopeName) else {
                throw CartographError(.unprocessable, "The scope must be \"read\", \"write\" or \"admin\".",
                                      errors: [.init(pointer: "/scope", message: "expected \"read\", \"write\" or \"admin\"")])
            }
            let tenant = try existingTenant(context)
            let created = try context.application.control.createKey(tenantID: tenant, scope: scope)
            var json = created.info.json
            json["apiKey"] = .string(created.token)
            return .json(.object(json), status: 201)
        },
        Route("GET", "/v1/tenants/{tenant}/keys", access: .tenant(.admin)) { context in
            let tenant = try existingTenant(context)
            return .json(["items": .array(context.application.control.keys(tenantID: tenant).map { JSONValue.object($0.json) })])
        },
        Route("DELETE", "/v1/tenants/{tenant}/keys/{keyId}", access: .tenant(.admin)) { context in
            let tenant = try existingTenant(context)
            try context.application.control.revokeKey(tenantID: tenant, keyID: context.parameter("keyId"))
            // The key's waiting long polls end now, with 401.
            context.application.changeWaiters.dismissRefused(tenant: tenant)
            return .noContent
        },
    ]

    /// Creates a tenant and answers 201 with its first admin-scope key (shown once); 409 if it exists.
    static func createTenant(_ id: String, _ application: Application) throws(CartographError) -> HTTPResponse {
        let created = try application.control.createTenant(id: id)
        let tenant = application.control.tenant(id)
        return .json(["id": .string(id), "apiKey": .string(created.token), "keyId": .string(created.info.id),
                      "createdAt": .string(Timestamp.render(tenant?.createdAt ?? created.info.createdAt))], status: 201)
    }

    /// One tenant for the admin: its limits as set, the limits in force, and what it uses of them.
    static func detail(_ tenant: Tenant, _ application: Application) -> JSONValue {
        let sizes = application.stores.storeBytes(tenant: tenant.id)
        return ["id": .string(tenant.id), "createdAt": .string(Timestamp.render(tenant.createdAt)), "limits": tenant.limits.json,
                "effectiveLimits": application.configuration.effectiveLimits(tenant.limits).json,
                "usage": ["models": .number(JSONNumber(sizes.count)), "storeBytes": .number(JSONNumber(sizes.values.reduce(0, +)))]]
    }

    /// The path's tenant, or 404 (reached only by the admin token: a key of a missing tenant cannot authenticate).
    static func existingTenant(_ context: RequestContext) throws(CartographError) -> String {
        let id = context.parameter("tenant")
        guard context.application.control.tenant(id) != nil else { throw unknownTenant(id) }
        return id
    }

    /// The 404 for a tenant that does not exist.
    static func unknownTenant(_ id: String) -> CartographError { CartographError(.notFound, "No tenant named '\(id)'.") }
}

extension Tenant {
    var json: JSONValue { ["id": .string(id), "createdAt": .string(Timestamp.render(createdAt)), "limits": limits.json] }
}

extension APIKeyInfo {
    var json: JSONObject {
        JSONObject([("id", .string(id)), ("scope", .string(scope.rawValue)), ("createdAt", .string(Timestamp.render(createdAt)))])
    }
}
