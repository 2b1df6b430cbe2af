// Parsing valid mapping documents (docs/mapping.md): every field of its example, the attribute
// forms of R-P1, source key paths, identification (R-I1), defaults, and the normalized form that
// reads back into an equal mapping.
import CartographCore
import CartographMapping
import CartographPredicate
import Testing

struct EntityMappingParsingTests {
    @Test func R_P15_exampleParsesWithEveryField() throws {
        let mapping = try parseMapping(MappingFixtures.designExample)
        #expect(mapping.entity == "Project")
        #expect(mapping.keyPath == SourceKeyPath(components: ["project"]))
        #expect(mapping.attributes == [
            AttributeMapping(source: SourceKeyPath(components: ["id"]), attribute: "projectID"),
            AttributeMapping(source: SourceKeyPath(components: ["name"]), attribute: "name"),
            AttributeMapping(source: SourceKeyPath(components: ["userID"]), attribute: "userID"),
            AttributeMapping(source: SourceKeyPath(components: ["published_at"]), attribute: "publishedAt", transformer: "ISO8601ToDate"),
        ])
        #expect(mapping.identificationAttributes == ["projectID"])
        #expect(mapping.resolvedIdentificationAttributes == ["projectID"])
        #expect(mapping.identificationPredicate?.format == "archived == NO")
        #expect(mapping.identificationPredicate?.checked.entityName == "Project")
        #expect(mapping.modificationAttribute == "updatedAt")
        #expect(mapping.assignsDefaultValueForMissingAttributes == false)

        #expect(mapping.relationships.count == 2)
        let tasks = try #require(mapping.relationships.first)
        #expect(tasks.source == SourceKeyPath(components: ["tasks"]))
        #expect(tasks.relationship == "tasks")
        #expect(tasks.assignmentPolicy == .replace)
        #expect(tasks.mapping.entity == "Task")
        #expect(tasks.mapping.attributes.map(\.attribute) == ["id", "title"])
        #expect(tasks.mapping.attributes.map(\.source.description) == ["id", "title"])
        #expect(tasks.mapping.resolvedIdentificationAttributes == ["id"])
        let address = mapping.relationships[1]
        #expect(address.source == nil)
        #expect(address.relationship == "address")
        #expect(address.assignmentPolicy == .set)
        #expect(address.mapping.entity == "Address")
        #expect(address.mapping.resolvedIdentificationAttributes == ["identifier"])

        #expect(mapping.connections.count == 3)
        #expect(mapping.connections[0].relationship == "user")
        #expect(mapping.connections[0].kind == .foreignKey([.init(source: "userID", destination: "userID")]))
        #expect(mapping.connections[0].includesSubentities)
        #expect(mapping.connections[0].sourcePredicate == nil)
        #expect(mapping.connections[1].kind == .foreignKey([.init(source: "teamMemberIDs", destination: "userID")]))
        #expect(mapping.connections[1].destinationPredicate?.format == "active == YES")
        #expect(mapping.connections[1].destinationPredicate?.checked.entityName == "User")
        #expect(mapping.connections[2].kind == .keyPath(["user", "organization"]))

        #expect(mapping.deletionPredicate?.format == "shouldBeDeleted == true")
        #expect(mapping.discardsInvalidObjectsOnInsert == false)
        #expect(mapping.deleteMissing == nil)
        let dynamic = try #require(mapping.dynamic)
        #expect(dynamic.keyPath == SourceKeyPath(components: ["type"]))
        #expect(dynamic.cases.map(\.value) == ["text"])
        #expect(dynamic.cases[0].mapping.entity == "TextMessage")
        #expect(dynamic.cases[0].mapping.resolvedIdentificationAttributes == ["id"])
    }

    @Test func R_P1_attributesAsArrayMapToThemselves() throws {
        let mapping = try parseMapping(#"{"entity": "Task", "attributes": ["id", "title"]}"#)
        #expect(mapping.attributes == [
            AttributeMapping(source: SourceKeyPath(components: ["id"]), attribute: "id"),
            AttributeMapping(source: SourceKeyPath(components: ["title"]), attribute: "title"),
        ])
    }

    @Test func R_P1_attributesAsObjectMapKeyPathsWithOptionalTransformers() throws {
        let mapping = try parseMapping(#"""
            {"entity": "Project", "attributes": {
              "meta.title": "name", "@parent.id": "userID", "@root.page.updated": "updatedAt",
              "@metadata.receivedAt": {"to": "publishedAt", "transformer": "ISO8601ToDate"},
              "@metadata.header.X-Source": "teamMemberIDs", "flags.archived": {"to": "archived"}}}
            """#)
        #expect(mapping.attributes.map(\.source) == [
            SourceKeyPath(components: ["meta", "title"]),
            SourceKeyPath(root: .parent, components: ["id"]),
            SourceKeyPath(root: .root, components: ["page", "updated"]),
            SourceKeyPath(root: .metadata, components: ["receivedAt"]),
            SourceKeyPath(root: .metadata, components: ["header", "X-Source"]),
            SourceKeyPath(components: ["flags", "archived"]),
        ])
        #expect(mapping.attributes.map(\.transformer) == [nil, nil, nil, "ISO8601ToDate", nil, nil])
    }

    @Test func R_P1_declaredTransformersAreAccepted() throws {
        let mapping = try parseMapping(#"{"entity": "Project", "attributes": {"g": {"to": "name", "transformer": "GenderCode"}}}"#)
        #expect(mapping.attributes[0].transformer == "GenderCode")
    }

    @Test(arguments: [
        ("a", SourceKeyPath.Root.representation, ["a"]),
        ("publisher.name", .representation, ["publisher", "name"]),
        ("@parent.id", .parent, ["id"]),
        ("@parent", .parent, []),
        ("@root.meta.page", .root, ["meta", "page"]),
        ("@metadata.receivedAt", .metadata, ["receivedAt"]),
        ("@metadata.query.page", .metadata, ["query", "page"]),
        ("@metadata.header.X-Source", .metadata, ["header", "X-Source"]),
        // Only the three markers start elsewhere: JSON-LD's `@id` is a key, and `@` later is literal.
        ("@id", .representation, ["@id"]),
        ("a.@parent", .representation, ["a", "@parent"]),
        ("a-b.c d", .representation, ["a-b", "c d"]),
    ])
    func R_P1_sourceKeyPathsSplitOnDotsOnly(text: String, root: SourceKeyPath.Root, components: [String]) throws {
        let keyPath = try SourceKeyPath(parsing: text)
        #expect(keyPath.root == root)
        #expect(keyPath.components == components)
        #expect(keyPath.description == text)
    }

    @Test(arguments: [
        ("", "a key path must not be empty"),
        ("a..b", "'a..b' is not a key path: it has an empty key (keys are separated by single dots)"),
        ("a.", "'a.' is not a key path: it has an empty key (keys are separated by single dots)"),
        ("@parent.", "'@parent.' is not a key path: it has an empty key (keys are separated by single dots)"),
        ("@metadata.body", "unknown metadata 'body'; expected one of @metadata.header, @metadata.query, @metadata.receivedAt"),
        ("@metadata.receivedAt.year", "@metadata.receivedAt is a single value; it has no members"),
    ])
    func R_P1_malformedSourceKeyPathsAreRejected(text: String, message: String) {
        let error = #expect(throws: SourceKeyPath.SyntaxError.self) { try SourceKeyPath(parsing: text) }
        #expect(error?.message == message)
    }

    @Test func R_I1_mappingListWinsOverAnnotations() throws {
        let mapping = try parseMapping(#"{"entity": "User", "attributes": ["userID", "active"], "identificationAttributes": ["active"]}"#)
        #expect(mapping.resolvedIdentificationAttributes == ["active"])
        let annotated = try parseMapping(#"{"entity": "User", "attributes": ["userID"]}"#)
        #expect(annotated.identificationAttributes == nil)
        #expect(annotated.resolvedIdentificationAttributes == ["userID"])
    }

    @Test func R_I1_inferenceCanBeDisabledByTheMappingAndNestedMappingsInheritIt() throws {
        let mapping = try parseMapping(#"""
            {"entity": "Task", "attributes": ["id"], "identificationInference": false,
             "relationships": [{"to": "project", "mapping": {"attributes": {"pid": "projectID"},
               "relationships": [{"to": "address", "mapping": {"identificationInference": true}}]}}]}
            """#)
        #expect(mapping.resolvedIdentificationAttributes == [])
        let project = mapping.relationships[0].mapping
        #expect(project.identificationInference == nil)
        #expect(project.resolvedIdentificationAttributes == [])
        #expect(project.relationships[0].mapping.resolvedIdentificationAttributes == ["identifier"])
        // Annotations come before inference, so switching inference off does not hide them.
        let user = try parseMapping(#"{"entity": "User", "attributes": ["userID"], "identificationInference": false}"#)
        #expect(user.resolvedIdentificationAttributes == ["userID"])
    }

    @Test func R_I4_anEmptyListMeansNoIdentification() throws {
        let mapping = try parseMapping(#"{"entity": "Task", "attributes": ["id"], "identificationAttributes": []}"#)
        #expect(mapping.identificationAttributes == [])
        #expect(mapping.resolvedIdentificationAttributes == [])
    }

    @Test func R_I1_inheritedAttributesIdentifySubEntities() throws {
        let mapping = try parseMapping(#"{"entity": "TextMessage", "attributes": {"pid": "projectID"}, "identificationAttributes": ["projectID"]}"#)
        #expect(mapping.resolvedIdentificationAttributes == ["projectID"])
    }

    @Test func R_P5_relationshipDefaultsFromAndEntityToTheRelationship() throws {
        let mapping = try parseMapping(#"{"entity": "Project", "relationships": [{"to": "tasks", "mapping": {"attributes": ["id"]}}]}"#)
        let tasks = mapping.relationships[0]
        #expect(tasks.source == SourceKeyPath(components: ["tasks"]))
        #expect(tasks.mapping.entity == "Task")
        #expect(tasks.assignmentPolicy == .set)
    }

    @Test func R_P5_nestedMappingMayMapASubEntityOfTheDestination() throws {
        let mapping = try parseMapping(#"""
            {"entity": "Project", "relationships": [{"from": "urgent", "to": "tasks", "assignmentPolicy": "union",
              "mapping": {"entity": "UrgentTask", "attributes": ["id", "deadline"]}}]}
            """#)
        #expect(mapping.relationships[0].mapping.entity == "UrgentTask")
        #expect(mapping.relationships[0].assignmentPolicy == .union)
    }

    @Test func R_C3_connectionOptionsAreRead() throws {
        let mapping = try parseMapping(#"""
            {"entity": "Project", "connections": [
              {"relationship": "teamMembers", "connectedBy": ["userID"], "sourcePredicate": "archived == NO",
               "destinationPredicate": "active == YES", "includesSubentities": false},
              {"relationship": "organizations", "keyPath": "user.memberships", "sourcePredicate": "name != nil"}]}
            """#)
        let foreignKey = mapping.connections[0]
        #expect(foreignKey.kind == .foreignKey([.init(source: "userID", destination: "userID")]))
        #expect(foreignKey.sourcePredicate?.checked.entityName == "Project")
        #expect(foreignKey.destinationPredicate?.checked.entityName == "User")
        #expect(foreignKey.includesSubentities == false)
        #expect(mapping.connections[1].kind == .keyPath(["user", "memberships"]))
        #expect(mapping.connections[1].sourcePredicate?.format == "name != nil")
    }

    @Test func R_D5_deleteMissingIsRead() throws {
        let mapping = try parseMapping(#"""
            {"entity": "Project", "keyPath": "data.projects", "attributes": {"id": "projectID"},
             "deleteMissing": {"scope": "userID == 7", "maxDeletes": 100}}
            """#)
        #expect(mapping.keyPath == SourceKeyPath(components: ["data", "projects"]))
        #expect(mapping.deleteMissing?.scope.format == "userID == 7")
        #expect(mapping.deleteMissing?.maxDeletes == 100)
    }

    @Test func R_P9_dynamicPicksACaseByDiscriminator() throws {
        let mapping = try parseMapping(#"""
            {"entity": "Project", "attributes": {"id": "projectID"},
             "dynamic": {"keyPath": "meta.kind", "map": {"text": {"entity": "TextMessage", "attributes": ["id", "text"]},
                                                          "1": {"entity": "Project", "attributes": ["name"]},
                                                          "true": {"entity": "TextMessage"}}}}
            """#)
        let dynamic = try #require(mapping.dynamic)
        #expect(dynamic.keyPath == SourceKeyPath(components: ["meta", "kind"]))
        #expect(dynamic.mapping(forDiscriminator: "text")?.attributes.map(\.attribute) == ["id", "text"])
        #expect(dynamic.mapping(forDiscriminator: 1)?.entity == "Project")
        #expect(dynamic.mapping(forDiscriminator: true)?.entity == "TextMessage")
        #expect(dynamic.mapping(forDiscriminator: "picture") == nil)
        #expect(dynamic.mapping(forDiscriminator: nil) == nil)
    }

    @Test func R_P15_dictionaryTransformerIsNamed() throws {
        let mapping = try parseMapping(#"{"entity": "Task", "dictionaryTransformer": "LegacyIds", "attributes": ["id"]}"#)
        #expect(mapping.dictionaryTransformer == "LegacyIds")
    }

    @Test func R_P15_defaultsOfAMinimalMapping() throws {
        let mapping = try parseMapping(#"{"entity": "Organization"}"#)
        #expect(mapping == EntityMapping(entity: "Organization", resolvedIdentificationAttributes: ["id"]))
    }
}

struct EntityMappingNormalizedJSONTests {
    @Test func R_P15_exampleNormalizesWithEveryDefaultExplicit() throws {
        let mapping = try parseMapping(MappingFixtures.designExample)
        let expected = json(#"""
            {"entity": "Project", "keyPath": "project",
             "attributes": {"id": "projectID", "name": "name", "userID": "userID",
                            "published_at": {"to": "publishedAt", "transformer": "ISO8601ToDate"}},
             "identificationAttributes": ["projectID"], "identificationPredicate": "archived == NO",
             "modificationAttribute": "updatedAt", "assignsDefaultValueForMissingAttributes": false,
             "relationships": [
               {"from": "tasks", "to": "tasks", "assignmentPolicy": "replace",
                "mapping": {"entity": "Task", "attributes": {"id": "id", "title": "title"}, "assignsDefaultValueForMissingAttributes": false,
                            "relationships": [], "connections": [], "discardsInvalidObjectsOnInsert": false}},
               {"from": null, "to": "address", "assignmentPolicy": "set",
                "mapping": {"entity": "Address", "attributes": {"street": "street"}, "assignsDefaultValueForMissingAttributes": false,
                            "relationships": [], "connections": [], "discardsInvalidObjectsOnInsert": false}}],
             "connections": [
               {"relationship": "user", "connectedBy": {"userID": "userID"}, "includesSubentities": true},
               {"relationship": "teamMembers", "connectedBy": {"teamMemberIDs": "userID"}, "destinationPredicate": "active == YES", "includesSubentities": true},
               {"relationship": "organization", "keyPath": "user.organization"}],
             "deletionPredicate": "shouldBeDeleted == true", "discardsInvalidObjectsOnInsert": false,
             "dynamic": {"keyPath": "type", "map": {"text": {"entity": "TextMessage", "attributes": {"id": "id", "text": "text"},
               "assignsDefaultValueForMissingAttributes": false, "relationships": [], "connections": [], "discardsInvalidObjectsOnInsert": false}}}}
            """#)
        #expect(mapping.json == expected)
    }

    /// Parsing the normalized form gives an equal mapping, whose normalized form is the same.
    @Test(arguments: [
        MappingFixtures.designExample,
        #"{"entity": "Task", "attributes": ["id", "title"], "identificationInference": false, "dictionaryTransformer": "LegacyIds"}"#,
        #"""
        {"entity": "Project", "keyPath": "data.items", "attributes": {"@metadata.query.page": "name", "@parent.x": {"to": "userID", "transformer": "StringToInteger"}},
         "identificationAttributes": [], "assignsDefaultValueForMissingAttributes": true, "discardsInvalidObjectsOnInsert": true,
         "relationships": [{"to": "tasks", "assignmentPolicy": "union", "mapping": {"entity": "UrgentTask", "attributes": ["id", "deadline"], "deletionPredicate": "deadline < CAST(0, 'NSDate')"}}],
         "connections": [{"relationship": "teamMembers", "connectedBy": ["userID"], "sourcePredicate": "archived == NO", "includesSubentities": false},
                         {"relationship": "organizations", "keyPath": "user.memberships", "sourcePredicate": "TRUEPREDICATE"}],
         "deleteMissing": {"scope": "userID == 7", "maxDeletes": 0},
         "dynamic": {"keyPath": "@parent.kind", "map": {"t": {"entity": "TextMessage", "identificationPredicate": "text != nil"}}}}
        """#,
    ])
    func R_P15_normalizedFormRoundTrips(document: String) throws {
        let mapping = try parseMapping(document)
        let reparsed = try EntityMapping.parse(mapping.json, model: MappingFixtures.model)
        #expect(reparsed == mapping)
        #expect(reparsed.json == mapping.json)
    }
}
