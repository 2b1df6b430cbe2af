// Issue 16: a 404 for an unknown entity, model or mapping, and a 400 for an unknown attribute in
// `where`, `orderBy` or `fields`, name the closest valid name and list the valid ones.
import Foundation
import Testing
import CartographCore
import CartographTesting

@Suite struct UnknownNameTests {
    static let model: JSONValue = [
        "entities": [
            ["name": "Article", "attributes": [["name": "id", "type": "integer64"], ["name": "title", "type": "string"]],
             "relationships": [["name": "author", "destination": "Author"]]],
            ["name": "Author", "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]]],
        ],
    ]

    /// The problem detail of a GET under the model, after checking its status.
    func detail(_ api: ModelAPI, _ path: String, status: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let response = try api.client.send("GET", api.base + path, token: api.key)
        #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
        return try response.json()["detail"]?.stringValue ?? ""
    }

    @Test func unknownEntitiesModelsAndMappingsAre404sNamingTheClosestValidName() throws {
        try ModelAPI.with(model: Self.model, mappings: ["articles": ["entity": "Article", "attributes": ["id", "title"]]]) { api in
            #expect(try detail(api, "/entities/Artcle/objects", status: 404)
                    == "No entity 'Artcle' in model 'm'; did you mean 'Article'? (entities: Article, Author).")
            #expect(try detail(api, "/entities/Zebra/objects/1", status: 404) == "No entity 'Zebra' in model 'm'; (entities: Article, Author).")
            #expect(try detail(api, "/mappings/article", status: 404)
                    == "No mapping 'article' in model 'm'; did you mean 'articles'? (mappings: articles). Register one with PUT …/models/m/mappings/article (docs/mapping.md).")
            let model = try api.client.send("GET", "/v1/tenants/acme/models/n", token: api.key)
            #expect(try model.json()["detail"] == "No model 'n' in tenant 'acme'; did you mean 'm'? (models: m).")
        }
    }

    @Test func unknownAttributesInWhereOrderByAndFieldsAre400sNamingTheClosest() throws {
        try ModelAPI.with(model: Self.model) { api in
            let predicate = try detail(api, "/entities/Article/objects?where=titel%20%3D%3D%20%22x%22", status: 400)
            #expect(predicate.contains("Article has no attribute or relationship 'titel'; did you mean 'title'? (its attributes and relationships: author, id, title)"))
            let order = try detail(api, "/entities/Article/objects?orderBy=-titel", status: 400)
            #expect(order.contains("unknown attribute 'titel'; did you mean 'title'? (its attributes: id, title)"))
            let orderPath = try detail(api, "/entities/Article/objects?orderBy=autor.name", status: 400)
            #expect(orderPath.contains("did you mean 'author'?"))
            #expect(try detail(api, "/entities/Article/objects?fields=titel", status: 400)
                == "Unknown fields for 'Article': 'titel' (did you mean 'title'?) (its attributes and relationships: author, id, title).")
        }
    }

    @Test func comparingAnIntegerWithTextThatIsNoNumberSaysSoOnce() throws {
        try ModelAPI.with(model: Self.model) { api in
            let message = try detail(api, "/entities/Article/objects?where=id%20%3D%3D%20%2212x%22", status: 400)
            #expect(message == #"Invalid predicate: cannot compare with an integer64 value: "12x" is not a number (at offset 6)."#)
        }
    }

    /// Issue 30: a store file without a model (its registration never committed) answered "No model 'ghost' …;
    /// did you mean 'ghost'? (models: ghost, m)".
    @Test func R_S12_theNameAskedForIsNeitherSuggestedNorListed() throws {
        #expect(NameSuggestion.hint(for: "ledger", among: ["ledger"], kind: "models") == "")
        #expect(NameSuggestion.hint(for: "ledger", among: ["ledger", "ledgers"], kind: "models") == "; did you mean 'ledgers'? (models: ledgers)")
        #expect(NameSuggestion.hint(for: "ledger", among: ["Ledger"], kind: "models") == "; did you mean 'Ledger'? (models: Ledger)")
        try ModelAPI.with(model: Self.model) { api in
            let server = try #require(api.client as? InProcessServer)
            let ghost = server.dataDirectory.appendingPathComponent("data/tenants/acme/ghost.sqlite")
            #expect(FileManager.default.createFile(atPath: ghost.path, contents: Data()))
            let response = try api.client.send("GET", "/v1/tenants/acme/models/ghost", token: api.key)
            #expect(response.status == 404)
            #expect(try response.json()["detail"] == "No model 'ghost' in tenant 'acme'; (models: m).")
            #expect(try api.client.send("GET", "/v1/tenants/acme/models", token: api.key).json()["items"]?.arrayValue?.map { $0["name"] } == ["m"])
        }
    }

    @Test func longListsAreCutShort() {
        let names = (1...30).map { "entity\($0)" }
        let hint = NameSuggestion.hint(for: "entity7x", among: names, kind: "entities")
        #expect(hint.hasPrefix("; did you mean 'entity7'? (entities: entity1, entity10,"))
        #expect(hint.hasSuffix(" and 10 more)"))
    }
}
