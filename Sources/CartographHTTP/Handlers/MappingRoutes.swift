// Mapping documents (DESIGN §5): registered per model, validated against it with a JSON Pointer per
// problem, stored normalized in the model's store.
import CartographCore
import CartographMapping
import CartographStore

enum MappingRoutes {
    static let mappings = "/v1/tenants/{tenant}/models/{model}/mappings"
    static let mapping = mappings + "/{mapping}"

    static let all: [Route] = [
        Route("GET", mappings, access: .tenant(.read)) { context in
            let store = try ModelRoutes.existingModel(context)
            let items: [JSONValue] = try store.mappings().map { entry in
                ["name": .string(entry.name), "entity": entry.document["entity"] ?? .null]
            }
            return .json(["items": .array(items)])
        },
        Route("PUT", mapping, access: .tenant(.admin), body: .json) { context in
            let store = try ModelRoutes.existingModel(context)
            guard let model = store.model else { throw CartographError(.notFound, "Model '\(store.name)' has no schema yet.") }
            let parsed = try EntityMapping.parse(try context.jsonBody(), model: model)
            let created = try store.putMapping(name: context.parameter("mapping"), document: parsed.json)
            return .json(parsed.json, status: created ? 201 : 200)
        },
        Route("GET", mapping, access: .tenant(.read)) { context in
            let store = try ModelRoutes.existingModel(context)
            let name = context.parameter("mapping")
            guard let document = try store.mappings(named: name).first?.document else {
                throw CartographError(.notFound, "Model '\(store.name)' has no mapping '\(name)'.")
            }
            return .json(document)
        },
        Route("DELETE", mapping, access: .tenant(.admin)) { context in
            let store = try ModelRoutes.existingModel(context)
            let name = context.parameter("mapping")
            guard try store.deleteMapping(name: name) else {
                throw CartographError(.notFound, "Model '\(store.name)' has no mapping '\(name)'.")
            }
            return .noContent
        },
    ]
}
