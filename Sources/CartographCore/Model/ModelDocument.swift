// The entry points that turn a model document into a validated `Model` (docs/model.md): a JSON
// model document, a Core Data `contents` file (R-M4), or a JSON document wrapping one in
// `coreDataModel` next to the declarative sections. Invalid documents are one 422 listing every
// problem with its pointer (R-M5).

/// Parses and validates model documents.
public enum ModelDocument {
    /// The most entities a model may have.
    public static let maximumEntities = 1_000
    /// The most properties (attributes and relationships together) an entity may declare.
    public static let maximumPropertiesPerEntity = 1_000
    /// The value transformers every model has without declaring them (docs/mapping.md#built-in).
    public static var builtInValueTransformers: Set<String> { ModelValidator.builtInValueTransformers }

    /// Parses a JSON model document's bytes; 400 when they are not JSON, 422 when the document is invalid.
    public static func parse(jsonBytes: [UInt8], name: String) throws(CartographError) -> Model {
        let json: JSONValue
        do { json = try JSONReader().parse(jsonBytes) } catch { throw CartographError(error) }
        return try parse(json: json, name: name)
    }

    /// Validates a JSON model document (docs/model.md), possibly wrapping a Core Data model in
    /// `coreDataModel` (docs/model.md#core-data-models), into the model called `name`.
    public static func parse(json: JSONValue, name: String) throws(CartographError) -> Model {
        guard case .object(let document) = json else {
            throw CartographError(
                .unprocessable, "A model document is a JSON object.",
                errors: [CartographError.Detail(pointer: "", message: "expected an object, got \(json.kindName)")]
            )
        }
        guard let wrapped = document["coreDataModel"] else { return try model(from: document, entities: document["entities"], name: name) }

        let xmlPointer = JSONPointer.root.appending("coreDataModel")
        guard case .string(let xml) = wrapped else {
            throw CartographError(
                .unprocessable, "coreDataModel holds the contents XML of a Core Data model as a string.",
                errors: [CartographError.Detail(pointer: xmlPointer.description, message: "expected a string, got \(wrapped.kindName)")]
            )
        }
        if document["entities"] != nil {
            throw CartographError(
                .unprocessable, "A model document has either entities or coreDataModel, not both.",
                errors: [CartographError.Detail(pointer: "/entities", message: "the entities come from coreDataModel; remove this member")]
            )
        }
        let entities = try CoreDataModelImporter.entities(fromXML: Array(xml.utf8), at: xmlPointer)
        return try model(from: document, entities: .array(entities), name: name)
    }

    /// Imports a Core Data `contents` file (R-M4) into the model called `name`. Problems point at
    /// `/entities/<index>/...` of the model's normalized JSON form.
    public static func parse(coreDataXML xml: [UInt8], name: String) throws(CartographError) -> Model {
        let entities = try CoreDataModelImporter.entities(fromXML: xml, at: .root)
        return try model(from: JSONObject(), entities: .array(entities), name: name)
    }

    /// Reads `document` with `entities`, validates it as a whole, and checks that a written
    /// `identificationAttributes` (an output of the normalized form) agrees with the annotations.
    private static func model(from document: JSONObject, entities: JSONValue?, name: String) throws(CartographError) -> Model {
        var reader = ModelDocumentReader()
        var model = reader.readModel(document, entities: entities, name: name)
        var problems = reader.problems
        model.warnings = ModelValidator.validate(model, problems: &problems)
        if problems.isEmpty {
            for (index, written) in reader.writtenIdentificationAttributes.sorted(by: { $0.key < $1.key }) {
                let resolved = model.identificationAttributes(of: model.entities[index].name)
                if written != resolved {
                    problems.report(
                        JSONPointer.root.appending("entities").appending(index).appending("identificationAttributes"),
                        "is resolved from the annotations to [\(resolved.joined(separator: ", "))]; set userInfo.identityAttributes to change it"
                    )
                }
            }
        }
        guard problems.isEmpty else { throw problems.error(summary: "The model document is invalid") }
        return model
    }
}
