// Whole-document validation of mapping documents (docs/mapping.md#errors): each mistake is one located
// problem in a single 422, with the predicate's offset where a predicate is wrong.
import CartographCore
import CartographMapping
import Testing

struct EntityMappingValidationTests {
    @Test func R_P15_unknownEntityIsReportedOnceAndNothingIsCheckedAgainstIt() {
        let problems = mappingProblems(#"{"entity": "Projekt", "attributes": ["whatever"], "identificationPredicate": "x == 1"}"#)
        #expect(problems == ["/entity": "no entity is named 'Projekt'"])
    }

    /// A predicate binds at most 32,000 values (docs/predicates.md): a mapping holding a longer one is
    /// refused when it is registered, at the predicate, rather than failing every payload.
    @Test func R_P15_R_Q2_aMappingPredicateWithMoreValuesThanAQueryTakesIsRefused() throws {
        func document(values: Int) -> String {
            #"{"entity": "Project", "attributes": ["projectID"], "identificationAttributes": ["projectID"], "identificationPredicate": "projectID IN {"#
                + (0..<values).map(String.init).joined(separator: ",") + #"}"}"#
        }
        #expect(mappingProblems(document(values: 32_001)) == [
            "/identificationPredicate": "the predicate holds 32001 values, more than the 32000 one query can take"])
        let accepted = try EntityMapping.parse(json(document(values: 32_000)), model: MappingFixtures.model)
        #expect(accepted.identificationPredicate?.format.hasSuffix("31999}") == true)
    }

    @Test func R_P15_entityIsRequiredAndADocumentIsAnObject() {
        #expect(mappingProblems(#"{"attributes": ["id"]}"#) == ["/entity": "is required"])
        #expect(mappingProblems(#"["Project"]"#) == ["": "expected a mapping object, got array"])
    }

    @Test func R_P15_unknownMembersAreReportedEverywhere() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "identificationAtributes": ["projectID"],
             "attributes": {"x": {"to": "name", "tranformer": "Trim"}},
             "relationships": [{"to": "address", "mapping": {"atributes": []}, "policy": "set"}],
             "connections": [{"relationship": "user", "connectedBy": "userID", "includeSubentities": true}],
             "deleteMissing": {"scope": "TRUEPREDICATE", "maxDeletes": 1, "max": 2},
             "dynamic": {"keyPath": "type", "map": {"t": {"entity": "TextMessage"}}, "default": {}}}
            """#)
        #expect(problems.keys.sorted() == [
            "/attributes/x/tranformer", "/connections/0/includeSubentities", "/deleteMissing/max", "/dynamic/default",
            "/identificationAtributes", "/relationships/0/mapping/atributes", "/relationships/0/policy",
        ])
        #expect(problems["/identificationAtributes"]?.hasPrefix("unknown member 'identificationAtributes'; expected one of entity, keyPath,") == true)
        #expect(problems["/attributes/x/tranformer"] == "unknown member 'tranformer'; expected one of to, transformer")
        #expect(problems["/relationships/0/policy"] == "unknown member 'policy'; expected one of from, to, assignmentPolicy, mapping")
    }

    @Test func R_P15_topLevelMembersAreRejectedInNestedMappings() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "relationships": [{"to": "tasks", "mapping": {"keyPath": "items", "deleteMissing": {"scope": "TRUEPREDICATE", "maxDeletes": 1}}}],
             "dynamic": {"keyPath": "type", "map": {"t": {"entity": "TextMessage", "keyPath": "x"}}}}
            """#)
        #expect(problems == [
            "/relationships/0/mapping/keyPath": "applies to top-level mappings only",
            "/relationships/0/mapping/deleteMissing": "applies to top-level mappings only",
            "/dynamic/map/t/keyPath": "applies to top-level mappings only",
        ])
    }

    @Test func R_P1_unknownAttributesAreReportedIncludingInheritedLookups() {
        let problems = mappingProblems(#"""
            {"entity": "TextMessage", "attributes": {"id": "id", "pid": "projectID", "x": "nmae", "u": "user", "y": {"to": "titel"}},
             "relationships": [{"to": "tasks", "mapping": {"attributes": ["id", "name"]}}]}
            """#)
        #expect(problems == [
            "/attributes/x": "TextMessage has no attribute named 'nmae'; did you mean 'name'?",
            "/attributes/u": "'user' is a relationship of TextMessage, not an attribute; map it in relationships",
            "/attributes/y/to": "TextMessage has no attribute named 'titel'",
            "/relationships/0/mapping/attributes/1": "Task has no attribute named 'name'",
        ])
    }

    @Test func R_P1_anAttributeIsMappedOnce() {
        let fromObject = mappingProblems(#"{"entity": "Project", "attributes": {"id": "projectID", "project_id": {"to": "projectID"}}}"#)
        #expect(fromObject == ["/attributes/project_id/to": "maps to 'projectID', which /attributes/id already maps; an attribute is mapped once"])
        let fromArray = mappingProblems(#"{"entity": "Task", "attributes": ["id", "title", "id"]}"#)
        #expect(fromArray == ["/attributes/2": "maps to 'id', which /attributes/0 already maps; an attribute is mapped once"])
        let repeatedKey = mappingProblems(#"{"entity": "Task", "attributes": {"id": "id", "id": "title"}}"#)
        #expect(repeatedKey == ["/attributes/id": "is given more than once"])
    }

    @Test func R_P1_malformedAttributeEntriesAreReported() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "attributes": {"a..b": "name", "@metadata.body": "userID", "n": 3, "o": {"transformer": "Trim"}}}
            """#)
        #expect(problems == [
            "/attributes/a..b": "'a..b' is not a key path: it has an empty key (keys are separated by single dots)",
            "/attributes/@metadata.body": "unknown metadata 'body'; expected one of @metadata.header, @metadata.query, @metadata.receivedAt",
            "/attributes/n": "expected an attribute name or {\"to\", \"transformer\"}, got 3",
            "/attributes/o/to": "is required",
        ])
        #expect(mappingProblems(#"{"entity": "Task", "attributes": "id"}"#)
            == ["/attributes": "expected an object of source key paths or an array of attribute names, got 'id'"])
        #expect(mappingProblems(#"{"entity": "Task", "attributes": ["id", 7, ""]}"#)
            == ["/attributes/1": "expected an attribute name, got 7", "/attributes/2": "expected an attribute name, got ''"])
    }

    @Test func R_P15_unknownTransformerIsRejectedAtRegistration() {
        let problems = mappingProblems(#"{"entity": "Project", "attributes": {"d": {"to": "publishedAt", "transformer": "ISO8601ToData"}}}"#)
        #expect(problems == ["/attributes/d/transformer": "unknown value transformer 'ISO8601ToData'; it is neither built in nor declared in the model's valueTransformers"])
    }

    @Test func R_P15_unknownDictionaryTransformerIsRejected() {
        #expect(mappingProblems(#"{"entity": "Task", "dictionaryTransformer": "Legacy"}"#)
            == ["/dictionaryTransformer": "no dictionary transformer named 'Legacy' is declared in the model's dictionaryTransformers"])
    }

    @Test func R_I1_identificationAttributesAreMappedAttributesOfTheEntity() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "attributes": {"id": "projectID"},
             "identificationAttributes": ["projectID", "projectId", "user", "name", "projectID", 4]}
            """#)
        #expect(problems == [
            "/identificationAttributes/5": "expected a name, got 4",
        ])
        let named = mappingProblems(#"""
            {"entity": "Project", "attributes": {"id": "projectID"}, "identificationAttributes": ["projectID", "projectId", "user", "name", "projectID"]}
            """#)
        #expect(named == [
            "/identificationAttributes/1": "Project has no attribute named 'projectId'; did you mean 'projectID'?",
            "/identificationAttributes/2": "'user' is a relationship of Project, not an attribute; map it in relationships",
            "/identificationAttributes/3": "'name' is not mapped by attributes, so no representation could be identified",
            "/identificationAttributes/4": "names 'projectID' more than once",
        ])
    }

    @Test func R_P7_modificationAttributeIsAnOrderableAttribute() {
        #expect(mappingProblems(#"{"entity": "Project", "modificationAttribute": "changedAt"}"#)
            == ["/modificationAttribute": "Project has no attribute named 'changedAt'"])
        #expect(mappingProblems(#"{"entity": "Project", "modificationAttribute": "archived"}"#)
            == ["/modificationAttribute": "'archived' is a boolean attribute; a modification attribute is a string, a number or a date"])
    }

    @Test func R_Q2_predicateErrorsPointAtTheirFieldWithTheOffset() throws {
        let error = try #require(mappingError(#"""
            {"entity": "Project", "identificationPredicate": "archived == ",
             "deletionPredicate": "shouldBeDeleted == true AND nmae == 'x'",
             "connections": [{"relationship": "user", "connectedBy": "userID", "sourcePredicate": "archived = = NO", "destinationPredicate": "projectID == 1"}],
             "relationships": [{"to": "tasks", "mapping": {"identificationPredicate": "title BEGINSWITH 3"}}],
             "deleteMissing": {"scope": "$owner == userID", "maxDeletes": 10}}
            """#))
        let located = Dictionary(uniqueKeysWithValues: error.errors.map { ($0.pointer, $0.offset) })
        #expect(located == [
            "/identificationPredicate": 12,
            "/deletionPredicate": 28,
            "/connections/0/sourcePredicate": 11,
            "/connections/0/destinationPredicate": 0,
            "/relationships/0/mapping/identificationPredicate": 17,
            "/deleteMissing/scope": 0,
        ])
        #expect(error.offset == 12)
        #expect(error.errors.allSatisfy { !$0.message.isEmpty })
        #expect(pairs(error)["/identificationPredicate"] == "expected a key path, a literal, a $variable, '{' or CAST, found the end of the predicate")
        #expect(pairs(error)["/deletionPredicate"]?.contains("nmae") == true)
    }

    @Test func R_P5_relationshipMappingsNameRelationships() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "relationships": [
              {"to": "task", "mapping": {"entity": "Task"}},
              {"to": "name", "mapping": {"entity": "Task"}},
              {"from": 3, "to": "tasks", "mapping": {"entity": "Task"}},
              {"to": "address"}]}
            """#)
        #expect(problems == [
            "/relationships/0/to": "Project has no relationship named 'task'",
            "/relationships/1/to": "'name' is an attribute of Project, not a relationship",
            "/relationships/2/from": "expected a string, got 3",
            "/relationships/3/mapping": "is required",
        ])
    }

    @Test func R_P5_nestedMappingEntityMustBeTheDestinationOrASubEntity() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "relationships": [
              {"to": "tasks", "mapping": {"entity": "Address"}},
              {"to": "user", "mapping": {"entity": "Usr"}}],
             "dynamic": {"keyPath": "type", "map": {"task": {"entity": "Task"}}}}
            """#)
        #expect(problems == [
            "/relationships/0/mapping/entity": "Address is not Task (the destination of 'tasks') or one of its sub-entities",
            "/relationships/1/mapping/entity": "no entity is named 'Usr'",
            "/dynamic/map/task/entity": "Task is not Project (the entity of the enclosing mapping) or one of its sub-entities",
        ])
        // The other way round: a super-entity of the destination is not enough.
        #expect(mappingProblems(#"{"entity": "Organization", "relationships": [{"to": "urgentTasks", "mapping": {"entity": "Task"}}]}"#)
            == ["/relationships/0/mapping/entity": "Task is not UrgentTask (the destination of 'urgentTasks') or one of its sub-entities"])
    }

    @Test func R_P6_unionOnToOneIsRejectedAtRegistration() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "relationships": [
              {"to": "address", "assignmentPolicy": "union", "mapping": {"entity": "Address"}},
              {"to": "tasks", "assignmentPolicy": "merge", "mapping": {"entity": "Task"}}]}
            """#)
        #expect(problems == [
            "/relationships/0/assignmentPolicy": "union adds to a to-many relationship, and 'address' is to-one; use set or replace",
            "/relationships/1/assignmentPolicy": "unknown assignment policy 'merge'; expected one of set, replace, union",
        ])
    }

    @Test func R_P6_aRelationshipIsMappedOnce() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "relationships": [{"to": "tasks", "mapping": {}}, {"from": "more_tasks", "to": "tasks", "mapping": {}}]}
            """#)
        #expect(problems == ["/relationships/1/to": "'tasks' is already mapped by /relationships/0; a relationship is mapped once"])
    }

    @Test func R_C2_connectedByNamesAttributesOnBothSides() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "connections": [
              {"relationship": "user", "connectedBy": "ownerID"},
              {"relationship": "user", "connectedBy": ["userID", "name"]},
              {"relationship": "teamMembers", "connectedBy": {"teamMemberIDs": "id", "userID": 5}},
              {"relationship": "user", "connectedBy": []},
              {"relationship": "user", "connectedBy": ["userID", "userID"]},
              {"relationship": "usr", "connectedBy": "userID"},
              {"relationship": "user", "connectedBy": 5}]}
            """#)
        #expect(problems == [
            "/connections/0/connectedBy": "'ownerID' is not an attribute of Project | 'ownerID' is not an attribute of User, the destination of 'user'",
            "/connections/1/connectedBy/1": "'name' is not an attribute of User, the destination of 'user'",
            "/connections/2/connectedBy/teamMemberIDs": "'id' is not an attribute of User, the destination of 'teamMembers'",
            "/connections/2/connectedBy/userID": "expected a destination attribute name, got 5",
            "/connections/3/connectedBy": "names no attributes",
            "/connections/4/connectedBy/1": "names the source attribute 'userID' more than once",
            "/connections/5/relationship": "Project has no relationship named 'usr'",
            "/connections/6/connectedBy": "expected an attribute name, an array of them, or an object of source -> destination attributes, got 5",
        ])
    }

    @Test func R_C4_connectionsHaveExactlyOneMethodAndForeignKeyOptionsOnlyWithForeignKeys() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "connections": [
              {"relationship": "user", "connectedBy": "userID", "keyPath": "user"},
              {"relationship": "user"},
              {"relationship": "organization", "keyPath": "user.organization", "destinationPredicate": "id == 1", "includesSubentities": false}]}
            """#)
        #expect(problems == [
            "/connections/0/keyPath": "a connection has either connectedBy (foreign keys) or keyPath, not both",
            "/connections/1": "a connection needs connectedBy (foreign keys) or keyPath",
            "/connections/2/destinationPredicate": "applies to foreign-key connections (connectedBy) only",
            "/connections/2/includesSubentities": "applies to foreign-key connections (connectedBy) only",
        ])
    }

    @Test func R_C4_keyPathConnectionsFollowRelationshipsToTheDestination() {
        let problems = mappingProblems(#"""
            {"entity": "Project", "connections": [
              {"relationship": "organization", "keyPath": "user.company"},
              {"relationship": "organization", "keyPath": "user.userID"},
              {"relationship": "organization", "keyPath": "user"},
              {"relationship": "organization", "keyPath": "teamMembers.organization"},
              {"relationship": "organizations", "keyPath": "teamMembers.organization"},
              {"relationship": "organization", "keyPath": "@root.org"}]}
            """#)
        #expect(problems == [
            "/connections/0/keyPath": "'user.company' does not lead to objects: User has no relationship named 'company'",
            "/connections/1/keyPath": "'user.userID' does not lead to objects: User has no relationship named 'userID'",
            "/connections/2/keyPath": "'user' leads to User, which is not Organization (the destination of 'organization') or one of its sub-entities",
            "/connections/3/keyPath": "'teamMembers.organization' crosses the to-many relationship 'teamMembers', so it leads to many objects, and 'organization' is to-one",
            "/connections/5/keyPath": "follows relationships of the mapped object; @root applies to source key paths only",
        ])
    }

    @Test func R_D5_deleteMissingNeedsAScopeAndALimit() {
        #expect(mappingProblems(#"{"entity": "Project", "deleteMissing": {}}"#)
            == ["/deleteMissing/scope": "is required", "/deleteMissing/maxDeletes": "is required"])
        #expect(mappingProblems(#"{"entity": "Project", "deleteMissing": {"scope": "TRUEPREDICATE", "maxDeletes": -1}}"#)
            == ["/deleteMissing/maxDeletes": "expected a non-negative integer, got -1"])
    }

    @Test func R_P9_dynamicNeedsAKeyPathAndCases() {
        #expect(mappingProblems(#"{"entity": "Project", "dynamic": {"map": {}}}"#)
            == ["/dynamic/keyPath": "is required", "/dynamic/map": "has no cases"])
        #expect(mappingProblems(#"{"entity": "Project", "dynamic": {"keyPath": "type", "map": {"a": {"entity": "TextMessage"}, "a": {"entity": "Project"}}}}"#)
            == ["/dynamic/map/a": "is given more than once"])
        #expect(mappingProblems(#"{"entity": "Project", "dynamic": {"keyPath": "type", "map": {"a": "TextMessage"}}}"#)
            == ["/dynamic/map/a": "expected a mapping object, got 'TextMessage'"])
    }

    @Test func R_P2_keyPathSelectsFromThePayload() {
        #expect(mappingProblems(#"{"entity": "Project", "keyPath": "@root.items"}"#)
            == ["/keyPath": "selects representations in the payload; @root applies to source key paths only"])
        #expect(mappingProblems(#"{"entity": "Project", "keyPath": ""}"#) == ["/keyPath": "a key path must not be empty"])
    }

    @Test func R_P15_wrongKindsAreReported() {
        let problems = mappingProblems(#"""
            {"entity": 5, "discardsInvalidObjectsOnInsert": "no", "assignsDefaultValueForMissingAttributes": 1,
             "relationships": {}, "connections": "user", "identificationInference": "false", "deletionPredicate": 1}
            """#)
        #expect(problems == [
            "/entity": "expected a string, got 5",
            "/discardsInvalidObjectsOnInsert": "expected true or false, got 'no'",
            "/assignsDefaultValueForMissingAttributes": "expected true or false, got 1",
            "/relationships": "expected an array of relationship mappings, got object",
            "/connections": "expected an array of connections, got 'user'",
            "/identificationInference": "expected true or false, got 'false'",
            "/deletionPredicate": "expected a string, got 1",
        ])
    }

    @Test func R_P15_everyProblemIsListedInOneError() throws {
        let error = try #require(mappingError(#"{"entity": "Task", "attributes": ["a", "b", "c"], "modificationAttribute": "d"}"#))
        #expect(error.errors.count == 4)
        #expect(error.detail == "The mapping document is invalid (4 problems).")
    }

    @Test func R_P15_aHugeNumberOfProblemsIsCountedButListedUpToALimit() throws {
        let names = (0..<150).map { "\"missing\($0)\"" }.joined(separator: ", ")
        let error = try #require(mappingError(#"{"entity": "Task", "attributes": [\#(names)]}"#))
        #expect(error.errors.count == 100)
        #expect(error.errors.last?.pointer == "/attributes/99")
        #expect(error.detail == "The mapping document is invalid (150 problems). The first 100 are listed; 50 more were found.")
    }
}
