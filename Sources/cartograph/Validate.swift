// `cartograph validate`: checks a model document (JSON, or a Core Data `contents` file) offline,
// with the same parser and rules as `PUT …/models/{model}`.
import ArgumentParser
import Foundation
import CartographCore

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate a model document (JSON or Core Data XML) without a server.",
        discussion: "Prints the normalized model on success (exit 0), or every problem with its JSON Pointer (exit 1)."
    )

    @Argument(help: "A JSON model document, or a Core Data model (an .xcdatamodel 'contents' file).")
    var model: String

    @Option(help: "The model's name in the normalized output.") var name = "model"

    func run() throws {
        guard let data = FileManager.default.contents(atPath: model) else {
            throw ValidationError("Cannot read '\(model)'.")
        }
        let bytes = Array(data)
        let isXML = bytes.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }.first == UInt8(ascii: "<")
        do {
            let parsed = isXML ? try ModelDocument.parse(coreDataXML: bytes, name: name) : try ModelDocument.parse(jsonBytes: bytes, name: name)
            for warning in parsed.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
            print(parsed.normalizedJSON.jsonText)
        } catch {
            FileHandle.standardError.write(Data("\(model): \(error.detail)\n".utf8))
            for detail in error.errors { FileHandle.standardError.write(Data("  \(detail.pointer.isEmpty ? "/" : detail.pointer): \(detail.message)\n".utf8)) }
            throw ExitCode(1)
        }
    }
}
