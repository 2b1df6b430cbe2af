// Shared helpers for the model tests: fixture files (the Groot model from the shared fixtures, the
// RestKit models copied into Fixtures/) and one-line parsing of documents that should fail.
import Foundation
import Testing
@testable import CartographCore

enum ModelFixtures {
    /// This test directory.
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: testsDirectory.appendingPathComponent(relativePath)))
    }

    /// gonzalezreal/Groot's test model (shared fixtures, MIT).
    static func grootContents() throws -> [UInt8] {
        try bytes("../../../shared/fixtures/groot/Model.xcdatamodeld/Model.xcdatamodel/contents")
    }

    /// RestKit's `VersionedModel` (Fixtures/SOURCES.md): `""` for the first version, `" 3"` for the third.
    static func restKitVersionedModel(_ suffix: String) throws -> [UInt8] {
        try bytes("Fixtures/RestKit/VersionedModel.xcdatamodeld/VersionedModel\(suffix).xcdatamodel/contents")
    }

    static func groot() throws -> Model { try ModelDocument.parse(coreDataXML: grootContents(), name: "groot") }
}

/// Parses a JSON model document.
func parseModel(_ json: String, name: String = "test") throws -> Model {
    try ModelDocument.parse(jsonBytes: Array(json.utf8), name: name)
}

/// The error a document that should be invalid fails with; a test failure when it parses.
func modelError(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> CartographError? {
    do {
        _ = try ModelDocument.parse(jsonBytes: Array(json.utf8), name: "test")
        Issue.record("the document parsed, but should not have", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The located problems of an invalid document, as `pointer: message` pairs for compact assertions.
func modelProblems(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: String] {
    let error = modelError(json, sourceLocation: sourceLocation)
    #expect(error?.code == .unprocessable, sourceLocation: sourceLocation)
    return Dictionary((error?.errors ?? []).map { ($0.pointer, $0.message) }, uniquingKeysWith: { first, second in first + " | " + second })
}

/// A one-entity document around the given attributes and relationships JSON.
func entityDocument(attributes: String = "", relationships: String = "") -> String {
    #"{"entities": [{"name": "Item", "attributes": [\#(attributes)], "relationships": [\#(relationships)]}]}"#
}
