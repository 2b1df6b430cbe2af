// `cartograph map`: maps a payload file into an SQLite store file with the same engine, model and
// mapping rules as `POST …/mappings/{mapping}/payloads` (or, with `--entity`, as
// `POST …/entities/{entity}/payloads`), and prints the same result document, written by the same
// `ResultDocument`.
import ArgumentParser
import Foundation
import CartographCore
import CartographHTTP
import CartographMapping
import CartographStore

struct Map: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Map a JSON payload into an SQLite store file, offline.",
        discussion: """
            Registers (or migrates) the model in the store file, then maps the payload in one transaction and \
            prints the result document a server would answer. Progress goes to stderr.
            """
    )

    @Option(help: "The model: a JSON model document or a Core Data 'contents' file.") var model: String
    @Option(help: "The mapping document (JSON).") var mapping: String?
    @Option(help: "Map with this entity's annotation mapping (Groot's JSONKeyPath annotations) instead of a mapping document.")
    var entity: String?
    @Option(help: "The SQLite store file to write (created if missing).") var store: String
    @Flag(name: .customLong("dry-run"), help: "Map and report, store nothing.") var dryRun = false
    @Flag(help: "Add the per-object trace and timings (implies --dry-run).") var explain = false
    @Flag(name: .customLong("allow-destructive"), help: "Allow a model change that loses data.") var allowDestructive = false
    @Argument(help: "The payload file (JSON).") var payload: String

    func validate() throws {
        guard (mapping == nil) != (entity == nil) else { throw ValidationError("Give either --mapping or --entity.") }
    }

    func run() throws {
        do {
            let modelDocument = try Self.read(model)
            let parsedModel = try ModelIntake.read(modelDocument, format: .of(modelDocument), name: "model")
            let modelStore = try ModelStore(name: "model", path: store)
            let (registered, _) = try modelStore.register(parsedModel, allowDestructive: allowDestructive)
            let source: MappingSource
            if let entity {
                guard registered.entity(named: entity) != nil else { throw registered.unknownEntity(entity) }
                source = .annotations(entity: entity)
            } else {
                source = .document(try JSONReader().parse(try Self.read(mapping ?? "")), name: nil)
            }
            let started = Date()
            let payloadBytes = try Self.read(payload)
            progressLine("reading \(payloadBytes.count / 1024) KiB")
            // The same operation as the server's: a large array of flat objects is mapped in chunks (bounded memory).
            let response = try modelStore.ingest(payloadBytes, mapping: source, model: registered,
                                                 options: IngestOptions(explain: explain, dryRun: dryRun),
                                                 answer: ResultDocument.bytes) { phase, done, total in
                progressLine("\(phase) \(done)/\(total) \(bar(done, total))")
            }.body
            progressLine(String(format: "done in %.2f s", Date().timeIntervalSince(started)))
            FileHandle.standardError.write(Data("\n".utf8))
            FileHandle.standardOutput.write(Data(response + [0x0A]))
        } catch let error as CartographError {
            let error = error.phrasingOption("allowDestructive", as: "run again with --allow-destructive to apply it")
            FileHandle.standardError.write(Data("\nerror: \(error.detail)\n".utf8))
            for detail in error.errors { FileHandle.standardError.write(Data("  \(detail.pointer.isEmpty ? "/" : detail.pointer): \(detail.message)\n".utf8)) }
            // An internal error's detail only says what failed: the operator running this is shown why.
            if error.code == .internalError, let cause = error.underlying { FileHandle.standardError.write(Data("  cause: \(cause)\n".utf8)) }
            throw ExitCode(1)
        }
    }

    static func read(_ path: String) throws(CartographError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CartographError(.notFound, "Cannot read '\(path)'.") }
        return Array(data)
    }
}

/// Rewrites one status line on stderr (a terminal progress bar).
private func progressLine(_ text: String) {
    FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
}

private func bar(_ done: Int, _ total: Int, width: Int = 30) -> String {
    let filled = total == 0 ? width : width * done / total
    return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
}
