// The offline commands of the `cartograph` binary.
import Foundation
import Testing
import CartographCore
import CartographTesting

struct CommandTests {
    /// Runs the binary; returns (exit status, stdout, stderr).
    func run(_ arguments: [String]) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = LiveServer.binary
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile(), stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    @Test func R_M5_validateReportsEveryProblemWithItsPointer() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("model-\(UUID().uuidString).json")
        try Data(#"{"entities":[{"name":"A","attributes":[{"name":"x","type":"nope"}],"relationships":[{"name":"b","destination":"Nope"}]}]}"#.utf8).write(to: file)
        let (status, stdout, stderr) = try run(["validate", file.path])
        #expect(status == 1)
        #expect(stdout.isEmpty)
        #expect(stderr.contains("/entities/0/attributes/0/type"))
        #expect(stderr.contains("/entities/0/relationships/0/destination"))
    }

    @Test func R_M4_validatePrintsTheNormalizedModelOfACoreDataFile() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../shared/fixtures/groot/Model.xcdatamodeld/Model.xcdatamodel/contents")
        let (status, stdout, stderr) = try run(["validate", fixture.path, "--name", "groot"])
        #expect(status == 0)
        let model = try JSONReader().parse(stdout)
        #expect(model["name"] == "groot")
        #expect(model["entities"]?.arrayValue?.contains { $0["name"] == "Character" } == true)
        #expect(stderr.contains("warning:"), "undeclared Groot transformers are warnings")
    }

    @Test func versionPrintsTheVersion() throws {
        let (status, stdout, _) = try run(["version"])
        #expect(status == 0)
        #expect(stdout.hasPrefix("cartograph "))
    }
}
