// What a model document passes before any store registers it, in one place for the model route
// (`PUT …/models/{model}`), `cartograph map` and `cartograph validate` (issue 31: `map` skipped the
// dictionary-transformer check and wrote stores the server would refuse).
public import CartographCore

/// Model intake: a model document parsed and checked, ready to register.
public enum ModelIntake {
    /// The formats a model document comes in.
    public enum Format: Sendable {
        /// A JSON model document (docs/model.md).
        case json
        /// A Core Data model's `contents` file.
        case coreDataXML

        /// The format of a file's bytes: XML when its first byte that is not white space is `<`.
        public static func of(_ bytes: [UInt8]) -> Format {
            bytes.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 } == UInt8(ascii: "<") ? .coreDataXML : .json
        }
    }

    /// Parses `bytes` as `format` and checks the result (see `checked`).
    public static func read(_ bytes: [UInt8], format: Format, name: String) throws(CartographError) -> Model {
        switch format {
        case .json: try checked(try ModelDocument.parse(jsonBytes: bytes, name: name))
        case .coreDataXML: try checked(try ModelDocument.parse(coreDataXML: bytes, name: name))
        }
    }

    /// `model` once its declared value and dictionary transformers are well-formed (422 with pointers
    /// otherwise): what the model parser alone does not check.
    public static func checked(_ model: Model) throws(CartographError) -> Model {
        _ = try ValueTransformerRegistry(model: model)
        _ = try DictionaryTransformerRegistry(model: model)
        return model
    }
}
