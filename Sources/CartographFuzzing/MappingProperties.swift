// Properties of the mapping document reader (docs/mapping.md) against `FuzzFixtures.model`: a refused
// document is a 422 whose problems each carry a JSON Pointer into the document (and predicate
// problems an offset); an accepted one's normalized `.json`, written and read back, parses into
// an equal mapping with the same normalized form.
import CartographCore
import CartographMapping

enum MappingProperties {
    static func check(_ input: [UInt8]) throws(FuzzFailure) {
        // Bodies that are not JSON are the JSON target's business.
        guard let document = try? JSONReader().parse(input) else { return }
        let model = FuzzFixtures.model
        let mapping: EntityMapping
        do {
            mapping = try EntityMapping.parse(document, model: model)
        } catch {
            try require(error.code == .unprocessable, "mapping.locatedErrors", "unexpected error code \(error.code.rawValue): \(error.detail)")
            try JSONPointerChecks.checkDetails(of: error, document: document, property: "mapping.locatedErrors", input: input)
            for detail in error.errors {
                try require(detail.offset.map { $0 >= 0 } ?? true, "mapping.locatedErrors", "a negative offset at \(detail.pointer)")
            }
            return
        }

        let normalized = mapping.json
        let written = normalized.jsonBytes
        guard let reread = try? JSONReader().parse(written), reread == normalized else {
            throw FuzzFailure("mapping.roundTrip", "the normalized form does not read back as JSON: \(excerpt(written))")
        }
        let again: EntityMapping
        do {
            again = try EntityMapping.parse(reread, model: model)
        } catch {
            throw FuzzFailure("mapping.roundTrip", "the normalized form is refused (\(error.errors.prefix(3).map { "\($0.pointer): \($0.message)" })): \(excerpt(written)) from \(excerpt(input))")
        }
        try require(again == mapping, "mapping.roundTrip", "the normalized form parses into another mapping: \(excerpt(written)) from \(excerpt(input))")
        try require(again.json == normalized, "mapping.roundTrip", "normalizing is not stable: \(excerpt(again.json.jsonBytes)) then \(excerpt(written))")
    }
}
