// Dictionary transformers (docs/mapping.md#dictionary-transformers, Groot's JSONDictionaryTransformerName): each operation on a
// representation, operations in order, and validation of a model's `dictionaryTransformers`.
import CartographCore
import CartographMapping
import Testing

/// The dictionary transformer declared as `[operations]`, applied to `representation`.
private func apply(_ operations: String, to representation: String) throws -> JSONValue {
    let model = try parseModel(#"{"entities": [], "dictionaryTransformers": {"T": \#(operations)}}"#)
    let transformer = try #require(try DictionaryTransformerRegistry(model: model).transformer(named: "T"))
    return .object(try transformer.apply(to: json(representation).objectValue ?? JSONObject()))
}

struct DictionaryTransformerTests {
    /// (operations, representation, result).
    @Test(arguments: [
        // copy: the value is copied when present (null included); a missing source changes nothing.
        (#"[{"op": "copy", "from": "legacy_id", "to": "id"}]"#, #"{"legacy_id": 7}"#, #"{"legacy_id": 7, "id": 7}"#),
        (#"[{"op": "copy", "from": "legacy_id", "to": "id"}]"#, #"{"id": 1, "legacy_id": null}"#, #"{"id": null, "legacy_id": null}"#),
        (#"[{"op": "copy", "from": "legacy_id", "to": "id"}]"#, #"{"id": 1}"#, #"{"id": 1}"#),
        (#"[{"op": "copy", "from": "user.id", "to": "owner.ref.id"}]"#, #"{"user": {"id": 3}, "owner": null}"#,
         #"{"user": {"id": 3}, "owner": {"ref": {"id": 3}}}"#),
        // move: copied, then the source is removed.
        (#"[{"op": "move", "from": "user.id", "to": "userID"}]"#, #"{"user": {"id": 3, "name": "x"}}"#, #"{"user": {"name": "x"}, "userID": 3}"#),
        (#"[{"op": "move", "from": "a", "to": "b"}]"#, #"{"c": 1}"#, #"{"c": 1}"#),
        // remove: every occurrence; a missing key or a non-object on the way changes nothing.
        (#"[{"op": "remove", "key": "debug"}]"#, #"{"debug": 1, "id": 2, "debug": 3}"#, #"{"id": 2}"#),
        (#"[{"op": "remove", "key": "a.b"}]"#, #"{"a": 5}"#, #"{"a": 5}"#),
        // set: always; default: only where missing or null.
        (#"[{"op": "set", "key": "kind", "value": "text"}]"#, #"{"kind": "picture"}"#, #"{"kind": "text"}"#),
        (#"[{"op": "set", "key": "gone", "value": null}]"#, #"{}"#, #"{"gone": null}"#),
        (#"[{"op": "default", "key": "tags", "value": []}]"#, #"{"tags": null}"#, #"{"tags": []}"#),
        (#"[{"op": "default", "key": "tags", "value": []}]"#, #"{}"#, #"{"tags": []}"#),
        (#"[{"op": "default", "key": "tags", "value": []}]"#, #"{"tags": ["a"]}"#, #"{"tags": ["a"]}"#),
        // coalesce: the first present, non-null source; nothing when there is none.
        (#"[{"op": "coalesce", "from": ["nick", "name"], "to": "display"}]"#, #"{"nick": null, "name": "Ann"}"#,
         #"{"nick": null, "name": "Ann", "display": "Ann"}"#),
        (#"[{"op": "coalesce", "from": ["nick", "name"], "to": "display"}]"#, #"{"nick": null}"#, #"{"nick": null}"#),
        // Operations run in order, each on the previous result.
        (#"[{"op": "move", "from": "legacy_id", "to": "id"}, {"op": "default", "key": "id", "value": 0}, {"op": "set", "key": "v", "value": 2}]"#,
         #"{"name": "x"}"#, #"{"name": "x", "id": 0, "v": 2}"#),
    ])
    func R_P14_dictionaryTransformerOperations(operations: String, representation: String, result: String) throws {
        #expect(try apply(operations, to: representation) == json(result))
    }

    @Test func R_P14_writingThroughANonObjectIsATypedError() throws {
        let error = #expect(throws: DictionaryTransformError.self) {
            try apply(#"[{"op": "remove", "key": "x"}, {"op": "set", "key": "user.id", "value": 1}]"#, to: #"{"user": "ann"}"#)
        }
        #expect(error == DictionaryTransformError(transformer: "T", step: 1, message: "cannot write 'user.id': 'user' holds a value that is not an object"))
    }

    @Test func R_P14_theModelsDeclaredTransformersAreRead() throws {
        let registry = try DictionaryTransformerRegistry(model: MappingFixtures.model)
        #expect(registry.names == ["LegacyIds"])
        #expect(registry.transformer(named: "LegacyIds")?.operations == [
            .copy(from: SourceKeyPath(components: ["legacy_id"]), to: SourceKeyPath(components: ["id"])),
        ])
        #expect(registry.transformer(named: "Other") == nil)
    }

    @Test func R_P14_malformedOperationsAreReportedWithPointers() {
        let model = Model(name: "test", entities: [], dictionaryTransformers: json(#"""
            {"A": [{"op": "copy", "from": "a"},
                   {"op": "rename", "from": "a", "to": "b"},
                   {"op": "set", "key": "k"},
                   {"op": "remove", "key": "a..b", "keys": ["c"]},
                   {"op": "coalesce", "from": [], "to": "@root.x"},
                   {"op": "move", "from": "@parent.id", "to": "id"},
                   "copy",
                   {"from": "a"}],
             "B": {"op": "copy"}}
            """#).objectValue ?? JSONObject())
        let error = #expect(throws: CartographError.self) { try DictionaryTransformerRegistry(model: model) }
        #expect(error?.code == .unprocessable)
        #expect(pairs(error) == [
            "/dictionaryTransformers/A/0/to": "is required",
            "/dictionaryTransformers/A/1/op": "unknown operation 'rename'; expected one of copy, move, remove, set, default, coalesce",
            "/dictionaryTransformers/A/2/value": "is required (null is allowed)",
            "/dictionaryTransformers/A/3/keys": "unknown member 'keys'; expected one of op, key",
            "/dictionaryTransformers/A/3/key": "'a..b' is not a key path: it has an empty key (keys are separated by single dots)",
            "/dictionaryTransformers/A/4/from": "names no keys",
            "/dictionaryTransformers/A/4/to": "a dictionary transformer reads and writes the representation's own keys; @root is not one",
            "/dictionaryTransformers/A/5/from": "a dictionary transformer reads and writes the representation's own keys; @parent is not one",
            "/dictionaryTransformers/A/6": "expected an operation object, got 'copy'",
            "/dictionaryTransformers/A/7/op": "is required",
            "/dictionaryTransformers/B": "expected an array of operations, got object",
        ])
    }
}
