// Properties of the model document readers (R-M4, R-M5, docs/model.md). JSON documents: every refusal
// is a CartographError, a 400 with the byte offset when the body is not JSON, else a 422 whose
// problems each carry a JSON Pointer into the document. Core Data XML: every refusal is a located
// 422, and no accepted document declares a DTD (so no entity is ever expanded or fetched). Both: an
// accepted model's normalized form reads back into an equal model.
import CartographCore
import Foundation
import FoundationXML

enum ModelDocumentProperties {
    static func checkJSON(_ input: [UInt8]) throws(FuzzFailure) {
        let model: Model
        do {
            model = try ModelDocument.parse(jsonBytes: input, name: "fuzz")
        } catch {
            let document = try? JSONReader().parse(input)
            switch error.code {
            case .badRequest:
                try require(document == nil, "model.locatedErrors", "a 400 for a body that is JSON: \(error.detail)")
                try require(error.errors.count == 1 && error.errors[0].pointer == "", "model.locatedErrors", "a 400 without its one problem at the root")
                try require(error.offset.map { (0...input.count).contains($0) } == true, "model.locatedErrors",
                            "a 400 at offset \(String(describing: error.offset)) in \(input.count) bytes")
            case .unprocessable:
                try require(document != nil, "model.locatedErrors", "a 422 for a body that is not JSON: \(error.detail)")
                // Problems of a wrapped Core Data model point into the normalized form, not the wrapper.
                let wrapsXML = document?["coreDataModel"]?.stringValue != nil
                try JSONPointerChecks.checkDetails(of: error, document: wrapsXML ? nil : document, property: "model.locatedErrors", input: input)
            default:
                throw FuzzFailure("model.locatedErrors", "unexpected error code \(error.code.rawValue): \(error.detail)")
            }
            return
        }
        try checkNormalizedRoundTrip(model, property: "model.normalizedRoundTrip", input: input)
    }

    static func checkCoreDataXML(_ input: [UInt8]) throws(FuzzFailure) {
        let model: Model
        do {
            model = try ModelDocument.parse(coreDataXML: input, name: "fuzz")
        } catch {
            try require(error.code == .unprocessable, "coredata.locatedErrors", "unexpected error code \(error.code.rawValue): \(error.detail)")
            try JSONPointerChecks.checkDetails(of: error, document: nil, property: "coredata.locatedErrors", input: input)
            for detail in error.errors {
                try require(detail.pointer.isEmpty || detail.pointer.utf8.starts(with: "/entities".utf8), "coredata.locatedErrors",
                            "«\(detail.pointer)» is not in the normalized form's entities")
            }
            return
        }
        try checkNoDTD(input)
        try checkNormalizedRoundTrip(model, property: "coredata.normalizedRoundTrip", input: input)
    }

    /// `model.normalizedJSON`, written and read back, is an equal model with the same normalized form.
    static func checkNormalizedRoundTrip(_ model: Model, property: String, input: [UInt8]) throws(FuzzFailure) {
        let normalized = model.normalizedJSON
        let reread: Model
        do {
            reread = try ModelDocument.parse(jsonBytes: normalized.jsonBytes, name: model.name)
        } catch {
            throw FuzzFailure(property, "the normalized form is refused (\(error.detail) \(error.errors.prefix(3).map { "\($0.pointer): \($0.message)" })) for \(excerpt(input))")
        }
        try require(reread == model, property, "the normalized form reads back into another model: \(excerpt(normalized.jsonBytes)) for \(excerpt(input))")
        try require(reread.normalizedJSON == normalized, property, "normalizing is not stable for \(excerpt(input))")
    }

    // MARK: No DTD

    /// An XML declaration's `encoding` pseudo-attributes (written independently of the importer's check).
    static let declaredEncoding = try! NSRegularExpression(pattern: #"encoding\s*=\s*(["'])(.*?)\1"#)

    /// An accepted document has no DTD, and is read as UTF-8, where the importer's byte search for
    /// one is sound: valid UTF-8 without NUL bytes (so not UTF-16 or UTF-32), an XML declaration that
    /// names no other encoding, no `<!DOCTYPE` or `<!ENTITY`, and no declaration a parser reports.
    static func checkNoDTD(_ input: [UInt8]) throws(FuzzFailure) {
        guard !input.contains(0), let text = String(validating: input, as: UTF8.self) else {
            throw FuzzFailure("coredata.noDTD", "accepted a document that is not UTF-8: \(excerpt(input))")
        }
        // By scalars, not Characters, so that a combining mark cannot hide the declaration.
        var body = text.unicodeScalars[...]
        if body.first == "\u{FEFF}" { body = body.dropFirst() }
        if body.starts(with: "<?xml".unicodeScalars), let blank = body.dropFirst(5).first, [" ", "\t", "\n", "\r"].contains(blank) {
            let end = body.firstRange(of: "?>".unicodeScalars)?.lowerBound ?? body.endIndex
            let declaration = String(String.UnicodeScalarView(body[..<end]))
            let range = NSRange(declaration.startIndex..., in: declaration)
            for match in declaredEncoding.matches(in: declaration, range: range) {
                let name = Range(match.range(at: 2), in: declaration).map { declaration[$0] } ?? ""
                try require(name.lowercased() == "utf-8", "coredata.noDTD", "accepted a document declared as \(name): \(excerpt(input))")
            }
        }
        for marker in ["<!DOCTYPE", "<!ENTITY"] where input.firstRange(of: Array(marker.utf8)) != nil {
            throw FuzzFailure("coredata.noDTD", "accepted a document with \(marker): \(excerpt(input))")
        }
        let probe = DTDProbe()
        let parser = XMLParser(data: Data(input))
        parser.shouldResolveExternalEntities = false
        parser.delegate = probe
        _ = parser.parse()
        if let declaration = probe.declarations.first {
            throw FuzzFailure("coredata.noDTD", "accepted a document that declares \(declaration): \(excerpt(input))")
        }
    }
}

/// Records the DTD declarations and entity references a parser reports.
private final class DTDProbe: NSObject, XMLParserDelegate {
    var declarations: [String] = []

    func parser(_ parser: XMLParser, foundElementDeclarationWithName name: String, model: String) { declarations.append("element \(name)") }
    func parser(_ parser: XMLParser, foundAttributeDeclarationWithName name: String, forElement element: String, type: String?, defaultValue: String?) {
        declarations.append("attribute \(name)")
    }
    func parser(_ parser: XMLParser, foundNotationDeclarationWithName name: String, publicID: String?, systemID: String?) { declarations.append("notation \(name)") }
    func parser(_ parser: XMLParser, foundUnparsedEntityDeclarationWithName name: String, publicID: String?, systemID: String?, notationName: String?) {
        declarations.append("unparsed entity \(name)")
    }
    func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) { declarations.append("entity \(name)") }
    func parser(_ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?, systemID: String?) {
        declarations.append("external entity \(name)")
    }
    func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
        declarations.append("a reference to entity \(name)")
        return nil
    }
}
