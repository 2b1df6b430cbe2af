// Properties of the predicate language on arbitrary text, decoded as the HTTP layer decodes it:
// errors point inside the text; a parsed predicate formats to text that parses back to the same tree
// (and formats the same); checking it against `FuzzFixtures.model` gives the same result for the
// original and the formatted text, down to the compiled SQL and each object's evaluation.
// (PredicateFuzzTests runs the same pipeline on generated inputs; see docs/fuzzing.md.)
import CartographCore
import CartographPredicate

enum PredicateProperties {
    static func check(_ input: [UInt8]) throws(FuzzFailure) {
        let text = String(decoding: input, as: UTF8.self)
        let predicate: Predicate
        do {
            predicate = try Predicate(format: text)
        } catch {
            try checkError(error, in: text, kind: .syntax)
            return
        }

        let format = predicate.format
        let reparsed: Predicate
        do { reparsed = try Predicate(format: format) } catch {
            throw FuzzFailure("predicate.roundTrip", "«\(format)» does not parse (\(error)), from «\(text)»")
        }
        try require(reparsed == predicate, "predicate.roundTrip", "«\(format)» parses into another tree, from «\(text)»")
        try require(reparsed.format == format, "predicate.roundTrip", "formatting is not stable: «\(reparsed.format)» then «\(format)»")

        let model = FuzzFixtures.model, entity = FuzzFixtures.predicateEntity, variables = FuzzFixtures.variables
        let checked: CheckedPredicate
        do {
            checked = try predicate.checked(against: model, entity: entity, variables: variables)
        } catch {
            try checkError(error, in: text, kind: .semantic)
            try require((try? reparsed.checked(against: model, entity: entity, variables: variables)) == nil, "predicate.sameMeaning",
                        "«\(format)» checks but «\(text)» does not")
            return
        }
        let checkedFormat: CheckedPredicate
        do { checkedFormat = try reparsed.checked(against: model, entity: entity, variables: variables) } catch {
            throw FuzzFailure("predicate.sameMeaning", "«\(text)» checks but «\(format)» does not (\(error))")
        }

        let sql = Result { () throws(PredicateError) in try checked.sql(schema: FuzzFixtures.sqlSchema) }
        let sqlFormat = Result { () throws(PredicateError) in try checkedFormat.sql(schema: FuzzFixtures.sqlSchema) }
        switch (sql, sqlFormat) {
        case (.success(let a), .success(let b)):
            try require(a == b, "predicate.sameMeaning", "«\(text)» and «\(format)» compile to different SQL")
        case (.failure, .failure):
            break
        default:
            throw FuzzFailure("predicate.sameMeaning", "only one of «\(text)» and «\(format)» compiles to SQL")
        }
        for object in FuzzFixtures.makeObjects() {
            try require(checked.evaluate(object) == checkedFormat.evaluate(object), "predicate.sameMeaning",
                        "«\(text)» and «\(format)» disagree on a \(object.entity)")
        }
    }

    /// An error of the expected kind, at an offset inside the text (or just past its end).
    static func checkError(_ error: PredicateError, in text: String, kind: PredicateError.Kind) throws(FuzzFailure) {
        try require(error.kind == kind, "predicate.errorOffset", "a \(error.kind) error where a \(kind) error was due: \(error) for «\(text)»")
        try require((0...text.count).contains(error.offset), "predicate.errorOffset",
                    "offset \(error.offset) outside a text of \(text.count) characters: \(error) for «\(text)»")
        try require(!error.message.isEmpty, "predicate.errorOffset", "an empty message for «\(text)»")
    }
}
