// `cartograph validate`: checks a model document (JSON, or a Core Data `contents` file) offline,
// with the same parser and rules as `PUT …/models/{model}`.
import ArgumentParser
import Foundation
import CartographCore
import CartographMapping

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate a model document (JSON or Core Data XML), and optionally a mapping, without a server.",
        discussion: "Prints the normalized model (or mapping) on success (exit 0), or every problem with its JSON Pointer (exit 1)."
    )

    @Argument(help: "A JSON model document, or a Core Data model (an .xcdatamodel 'contents' file).")
    var model: String

    @Argument(help: "A mapping document to validate against the model (optional).")
    var mapping: String?

    @Option(help: "The model's name in the normalized output.") var name = "model"

    func run() throws {
        guard let data = FileManager.default.contents(atPath: model) else {
            throw ValidationError("Cannot read '\(model)'.")
        }
        let bytes = Array(data)
        do {
            let parsed = try ModelIntake.read(bytes, format: .of(bytes), name: name)
            for warning in parsed.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
            guard let mapping else {
                print(parsed.normalizedJSON.jsonText)
                return
            }
            guard let mappingData = FileManager.default.contents(atPath: mapping) else { throw ValidationError("Cannot read '\(mapping)'.") }
            let document: JSONValue
            do { document = try JSONReader().parse(Array(mappingData)) } catch { throw CartographError(error) }
            print(try EntityMapping.parse(document, model: parsed).json.jsonText)
        } catch let error as CartographError {
            FileHandle.standardError.write(Data("\(mapping ?? model): \(error.detail)\n".utf8))
            for detail in error.errors { FileHandle.standardError.write(Data("  \(detail.pointer.isEmpty ? "/" : detail.pointer): \(detail.message)\n".utf8)) }
            throw ExitCode(1)
        }
    }
}
