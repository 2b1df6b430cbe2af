// Value transformers (docs/mapping.md#value-transformers): the built-in ones forward and in reverse, the declared kinds
// (map, dateFormat, split, join, chain), the values they refuse, and the registry's validation of
// a model's `valueTransformers` section with a pointer per problem.
import CartographCore
import CartographMapping
import Testing

/// A model declaring one transformer of each kind.
private let declaredModel: Model = {
    do {
        return try parseModel(#"""
            {"entities": [{"name": "Item"}],
             "valueTransformers": {
               "GenderCode": {"type": "map", "map": {"M": "male", "F": "female", "1": "one", "true": "yes"}},
               "Status": {"type": "map", "map": {"a": "active"}, "default": "unknown"},
               "Level": {"type": "map", "map": {"low": 1, "high": "2"}},
               "Moment": {"type": "map", "map": {"epoch": "1970-01-01T00:00:00Z", "yes": "yes"}},
               "SelfDefault": {"type": "map", "map": {"unknown": "u"}, "default": "unknown"},
               "DayMonthYear": {"type": "dateFormat", "format": "dd/MM/yyyy HH:mm"},
               "ParisTime": {"type": "dateFormat", "format": "yyyy-MM-dd HH:mm:ss.SSS", "timeZone": "Europe/Paris"},
               "Tags": {"type": "split", "separator": ","},
               "Words": {"type": "join", "separator": " "},
               "TrimmedInteger": {"type": "chain", "transformers": ["Trim", "StringToInteger"]},
               "CodeList": {"type": "chain", "transformers": ["Trim", "Tags"]}}}
            """#)
    } catch {
        fatalError("declared model: \(error)")
    }
}()

private func registry() throws -> ValueTransformerRegistry { try ValueTransformerRegistry(model: declaredModel) }

struct ValueTransformerTests {
    /// (transformer, payload value, mapped value, exported value): forward maps the payload value,
    /// reverse exports the mapped value.
    @Test(arguments: [
        ("StringToInteger", #""42""#, "42", #""42""#),
        ("StringToInteger", #""-007""#, "-7", #""-7""#),
        ("StringToInteger", "12", "12", #""12""#),
        ("StringToInteger", #""9223372036854775807""#, "9223372036854775807", #""9223372036854775807""#),
        ("StringToDecimal", #""12345678901234567.891""#, "12345678901234567.891", #""12345678901234567.891""#),
        ("StringToDecimal", #""1.50""#, "1.5", #""1.5""#),
        ("StringToDecimal", "0.1", "0.1", #""0.1""#),
        ("StringToDouble", #""1.5""#, "1.5", #""1.5""#),
        ("StringToDouble", #""-2e3""#, "-2000", #""-2000""#),
        ("StringToBool", #""yes""#, "true", #""true""#),
        ("StringToBool", #""FALSE""#, "false", #""false""#),
        ("StringToBool", #""1""#, "true", #""true""#),
        ("StringToBool", "0", "false", #""false""#),
        ("ISO8601ToDate", #""2024-03-01T12:00:00+02:00""#, #""2024-03-01T10:00:00.000Z""#, #""2024-03-01T10:00:00.000Z""#),
        ("ISO8601ToDate", #""2024-03-01""#, #""2024-03-01T00:00:00.000Z""#, #""2024-03-01T00:00:00.000Z""#),
        ("UnixSecondsToDate", "1700000000", #""2023-11-14T22:13:20.000Z""#, "1700000000"),
        ("UnixSecondsToDate", "1700000000.25", #""2023-11-14T22:13:20.250Z""#, "1700000000.25"),
        ("UnixSecondsToDate", #""-1.5""#, #""1969-12-31T23:59:58.500Z""#, "-1.5"),
        ("UnixMillisecondsToDate", "1700000000123", #""2023-11-14T22:13:20.123Z""#, "1700000000123"),
        ("UnixMillisecondsToDate", #""0""#, #""1970-01-01T00:00:00.000Z""#, "0"),
        ("StringToURL", #""https://example.com/a?b=c""#, #""https://example.com/a?b=c""#, #""https://example.com/a?b=c""#),
        ("StringToUUID", #""0F8FAD5B-D9CB-469F-A165-70867728950E""#, #""0f8fad5b-d9cb-469f-a165-70867728950e""#, #""0f8fad5b-d9cb-469f-a165-70867728950e""#),
        ("Trim", #""  padded \n""#, #""padded""#, #""padded""#),
        ("Lowercase", #""MiXed""#, #""mixed""#, #""mixed""#),
        ("Uppercase", #""MiXed""#, #""MIXED""#, #""MIXED""#),
        ("JSONString", #""{\"a\":[1,true]}""#, #"{"a":[1,true]}"#, #""{\"a\":[1,true]}""#),
        ("JSONString", "[1]", "[1]", #""[1]""#),
        // Declared transformers.
        ("GenderCode", #""F""#, #""female""#, #""F""#),
        ("GenderCode", "1", #""one""#, #""1""#),
        ("GenderCode", "true", #""yes""#, #""true""#),
        ("Status", #""a""#, #""active""#, #""a""#),
        // The default has no entry of its own: it exports as itself, which maps to the default again.
        ("Status", #""zzz""#, #""unknown""#, #""unknown""#),
        // Entries are compared with the stored value's API form by value: numbers, instants, booleans.
        ("Level", #""high""#, #""2""#, #""high""#),
        ("Level", #""low""#, "1", #""low""#),
        ("DayMonthYear", #""31/12/2023 23:59""#, #""2023-12-31T23:59:00.000Z""#, #""31/12/2023 23:59""#),
        ("ParisTime", #""2024-07-01 12:00:00.123""#, #""2024-07-01T10:00:00.123Z""#, #""2024-07-01 12:00:00.123""#),
        ("Tags", #""a,b,,c""#, #"["a","b","","c"]"#, #""a,b,,c""#),
        ("Tags", #""""#, "[]", #""""#),
        ("Words", #"["a",1,true]"#, #""a 1 true""#, #"["a","1","true"]"#),
        ("TrimmedInteger", #"" 42 ""#, "42", #""42""#),
        ("CodeList", #"" x,y ""#, #"["x","y"]"#, #""x,y""#),
    ])
    func R_P14_transformersForwardAndReverse(name: String, payload: String, mapped: String, exported: String) throws {
        let transformer = try registry().transformer(named: name)
        let forward = try transformer.transform(json(payload))
        #expect(forward == json(mapped), "\(name) forward")
        if exported == "(error)" {
            #expect(throws: ValueTransformError.self) { try transformer.reverseTransform(forward) }
        } else {
            #expect(try transformer.reverseTransform(forward) == json(exported), "\(name) reverse")
        }
    }

    @Test(arguments: ValueTransformerRegistry.builtInNames.sorted() + ["GenderCode", "DayMonthYear", "Tags", "Words", "CodeList"])
    func R_P14_nullPassesThroughEveryTransformer(name: String) throws {
        let transformer = try registry().transformer(named: name)
        #expect(try transformer.transform(.null) == .null)
        #expect(try transformer.reverseTransform(.null) == .null)
    }

    /// A date attribute takes a built-in date transformer's instant directly; it must be the instant
    /// the text `transform` renders coerces to, and leave to `transform` what coercion refuses.
    @Test(arguments: [
        ("ISO8601ToDate", #""2024-03-01T12:00:00.123+02:00""#), ("ISO8601ToDate", #""0000-01-01T00:00:00Z""#),
        ("ISO8601ToDate", #""9999-12-31T23:59:59.999Z""#), ("UnixSecondsToDate", "1700000000.5"),
        ("UnixSecondsToDate", #""-62167219200""#), ("UnixSecondsToDate", "-62167219200.001"), ("UnixSecondsToDate", "253402300800"),
        ("UnixMillisecondsToDate", "253402300799999"), ("UnixMillisecondsToDate", "-9223372036854775808"),
        ("UnixSecondsToDate", #""12x""#), ("ISO8601ToDate", "12"), ("StringToInteger", #""42""#),
    ])
    func R_P3_aDateTransformersInstantIsTheCoercedRenderedDate(name: String, payload: String) throws {
        let transformer = try registry().transformer(named: name)
        let value = json(payload)
        var coerced: AttributeValue?
        if let text = try? transformer.transform(value), case let date? = try? AttributeValue.coerce(text, to: .date) { coerced = date }
        let instant = (try? transformer.instant(value)) ?? nil
        if let instant {
            #expect(coerced == .date(millisecondsSince1970: instant), "the instant is what transform and coercion give")
        } else if name != "StringToInteger" {
            #expect(coerced == nil, "a date transformer's date comes as an instant")
        }
    }

    @Test func R_P14_builtInNamesAreTheModelsBuiltIns() {
        #expect(ValueTransformerRegistry.builtInNames == ModelDocument.builtInValueTransformers)
    }

    /// (transformer, payload value, message): values a forward transform refuses.
    @Test(arguments: [
        ("StringToInteger", #""12x""#, "'12x' is not a number"),
        ("StringToInteger", #""1.5""#, "'1.5' is not an integer"),
        ("StringToInteger", #""9223372036854775808""#, "'9223372036854775808' is out of range for a 64-bit integer"),
        ("StringToInteger", #"" 1""#, "' 1' is not a number"),
        ("StringToInteger", "true", "expected an integer string, got boolean"),
        ("StringToDecimal", #""1.234567890123456789012345678901234567891""#, "'1.234567890123456789012345678901234567891' has more than 38 significant digits or is out of range"),
        ("StringToDouble", #""1e400""#, "'1e400' is out of range for a double"),
        ("StringToBool", #""maybe""#, "\"maybe\" is not a boolean (true, false, yes, no, 1 or 0)"),
        ("ISO8601ToDate", #""2024-02-30""#, "'2024-02-30' is not an ISO 8601 date-time"),
        ("ISO8601ToDate", "5", "expected an ISO 8601 date-time string, got number"),
        ("UnixSecondsToDate", #""soon""#, "'soon' is not a number"),
        ("UnixSecondsToDate", "1e30", "1e30 is out of range for a date"),
        ("StringToURL", #""""#, "\"\" is not a URI"),
        ("StringToUUID", #""not-a-uuid""#, "\"not-a-uuid\" is not a UUID"),
        ("Trim", "3", "expected a string, got number"),
        ("JSONString", #""{\"a\":""#, "the string is not JSON: unexpected end of document: expected a value at byte 5"),
        ("GenderCode", #""X""#, "no entry for 'X' and no default"),
        ("GenderCode", "[]", "expected a string, number or boolean to look up, got array"),
        ("DayMonthYear", #""2023-12-31""#, "'2023-12-31' does not match the date format 'dd/MM/yyyy HH:mm'"),
        ("Tags", "[1]", "expected a string to split, got array"),
        ("Words", #"[{"a":1}]"#, "can join strings, numbers and booleans, not object"),
    ])
    func R_P14_valuesThatDoNotTransformAreTypedErrors(name: String, payload: String, message: String) throws {
        let transformer = try registry().transformer(named: name)
        let error = #expect(throws: ValueTransformError.self) { try transformer.transform(json(payload)) }
        #expect(error?.transformer == name)
        #expect(error?.message == message)
    }

    @Test func R_P14_chainErrorsNameTheFailingStep() throws {
        let error = #expect(throws: ValueTransformError.self) { try registry().transformer(named: "TrimmedInteger").transform(" x ") }
        #expect(error == ValueTransformError(transformer: "StringToInteger", message: "'x' is not a number"))
    }

    @Test func R_P14_reverseTransformsRefuseValuesOfTheWrongKind() throws {
        let registry = try registry()
        #expect(throws: ValueTransformError(transformer: "StringToInteger", message: "expected an integer, got string")) {
            try registry.transformer(named: "StringToInteger").reverseTransform("42")
        }
        #expect(throws: ValueTransformError(transformer: "UnixSecondsToDate", message: "'yesterday' is not an ISO 8601 date-time")) {
            try registry.transformer(named: "UnixSecondsToDate").reverseTransform("yesterday")
        }
        #expect(throws: ValueTransformError(transformer: "GenderCode", message: "no entry maps to 'other'")) {
            try registry.transformer(named: "GenderCode").reverseTransform("other")
        }
        // The default is its own reverse only when it has no entry: here "unknown" maps to "u".
        #expect(throws: ValueTransformError(transformer: "SelfDefault", message: "no entry maps to 'unknown'")) {
            try registry.transformer(named: "SelfDefault").reverseTransform("unknown")
        }
        #expect(throws: ValueTransformError(transformer: "Status", message: "no entry maps to 'other'")) {
            try registry.transformer(named: "Status").reverseTransform("other")
        }
    }

    /// A map's reverse reads a stored value in its API form: a number for integers, a decimal as a
    /// string, a date as `…sssZ`, a boolean; entries written otherwise still find their key.
    @Test(arguments: [
        ("Level", "2", #""high""#),
        ("Level", #""1""#, #""low""#),
        ("Level", "1.0", #""low""#),
        ("Moment", #""1970-01-01T00:00:00.000Z""#, #""epoch""#),
        ("Moment", "true", #""yes""#),
    ])
    func R_Q4_mapReverseComparesStoredValuesByValue(name: String, stored: String, exported: String) throws {
        #expect(try registry().transformer(named: name).reverseTransform(json(stored)) == json(exported))
    }

    @Test func R_P14_unknownTransformerNamesAreReported() throws {
        let registry = try registry()
        #expect(registry.contains("GenderCode"))
        #expect(registry.contains("Trim"))
        #expect(!registry.contains("Gender"))
        #expect(throws: ValueTransformError(
            transformer: "Gender", message: "unknown value transformer: it is neither built in nor declared in the model's valueTransformers"
        )) { try registry.transformer(named: "Gender") }
        #expect(registry.names.count == ValueTransformerRegistry.builtInNames.count + 11)
    }
}

struct ValueTransformerRegistryValidationTests {
    /// The problems of a model whose `valueTransformers` section is `section` (bypassing the model
    /// reader's own checks, as a model built in code would).
    private func problems(_ section: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: String] {
        let model = Model(name: "test", entities: [], valueTransformers: json(section).objectValue ?? JSONObject())
        do {
            _ = try ValueTransformerRegistry(model: model)
            Issue.record("the registry was built, but should not have been", sourceLocation: sourceLocation)
            return [:]
        } catch {
            #expect(error.code == .unprocessable, sourceLocation: sourceLocation)
            return pairs(error)
        }
    }

    @Test func R_P14_malformedDeclarationsAreReportedWithPointers() {
        #expect(problems(#"""
            {"GenderCode": {"type": "map", "map": ["M", "F"]},
             "NoMap": {"type": "map"},
             "Twice": {"type": "map", "map": {"a": 1, "a": 2}},
             "Odd": {"type": "lookup"},
             "Untyped": {"map": {}},
             "Extra": {"type": "split", "separator": ",", "trim": true},
             "EmptySeparator": {"type": "join", "separator": ""},
             "NotAnObject": 3,
             "AliasOfNothing": "map"}
            """#) == [
            "/valueTransformers/GenderCode/map": "expected an object of values -> replacements, got array",
            "/valueTransformers/NoMap/map": "is required",
            "/valueTransformers/Twice/map/a": "is given more than once",
            "/valueTransformers/Odd/type": "unknown value transformer type 'lookup'; expected one of map, dateFormat, split, join, chain",
            "/valueTransformers/Untyped/type": "is required",
            "/valueTransformers/Extra/trim": "unknown member 'trim'; expected one of type, separator",
            "/valueTransformers/EmptySeparator/separator": "must not be empty",
            "/valueTransformers/NotAnObject": "expected a value transformer object or the name of a transformer, got 3",
            "/valueTransformers/AliasOfNothing": "unknown value transformer 'map'; it is neither built in nor declared in valueTransformers",
        ])
    }

    @Test func R_P14_dateFormatsNeedAFormatAndAKnownTimeZone() {
        #expect(problems(#"""
            {"A": {"type": "dateFormat"}, "B": {"type": "dateFormat", "format": "yyyy", "timeZone": "Mars/Olympus"},
             "C": {"type": "dateFormat", "format": "yyyy", "timeZone": "PST"}}
            """#) == [
            "/valueTransformers/A/format": "is required",
            "/valueTransformers/B/timeZone": "unknown time zone 'Mars/Olympus'; use an identifier such as 'Europe/Paris' or 'UTC'",
        ])
    }

    @Test func R_P14_chainsNameKnownTransformersWithoutCycles() {
        #expect(problems(#"""
            {"A": {"type": "chain", "transformers": ["Trim", "B"]},
             "B": {"type": "chain", "transformers": ["A"]},
             "Self": {"type": "chain", "transformers": ["Lowercase", "Self"]},
             "Unknown": {"type": "chain", "transformers": ["Trim", "Nope", 3]},
             "Missing": {"type": "chain", "transformers": ["Nope"]},
             "Empty": {"type": "chain", "transformers": []}}
            """#) == [
            "/valueTransformers/B/transformers/0": "chain cycle: A -> B -> A",
            "/valueTransformers/Self/transformers/1": "chain cycle: Self -> Self",
            "/valueTransformers/Unknown/transformers/2": "expected a name, got 3",
            "/valueTransformers/Missing/transformers/0": "unknown value transformer 'Nope'; it is neither built in nor declared in valueTransformers",
            "/valueTransformers/Empty/transformers": "has no steps",
        ])
    }

    @Test func R_P14_anAliasNamesABuiltInOrDeclaredTransformerAndIsCheckedLikeAChain() throws {
        let model = try parseModel(#"{"entities": [{"name": "Item"}], "valueTransformers": {"GrootTests.Transformer": "StringToInteger", "Codes": "Tags", "Tags": {"type": "split", "separator": ","}}}"#)
        let registry = try ValueTransformerRegistry(model: model)
        #expect(try registry.transformer(named: "GrootTests.Transformer").transform("42") == 42)
        #expect(try registry.transformer(named: "GrootTests.Transformer").reverseTransform(42) == "42")
        #expect(try registry.transformer(named: "Codes").transform("a,b") == ["a", "b"])
        #expect(problems(#"{"Loop": "Back", "Back": "Loop", "Nowhere": "Nope"}"#) == [
            "/valueTransformers/Back": "chain cycle: Loop -> Back -> Loop",
            "/valueTransformers/Nowhere": "unknown value transformer 'Nope'; it is neither built in nor declared in valueTransformers",
        ])
    }

    @Test func R_P14_declarationsMayNotShadowBuiltIns() {
        #expect(problems(#"{"Trim": {"type": "map", "map": {}}}"#)
            == ["/valueTransformers/Trim": "'Trim' is the name of a built-in value transformer; choose another name"])
    }

    @Test func R_P14_theModelReaderAndTheRegistryAgreeOnAValidModel() throws {
        let registry = try ValueTransformerRegistry(model: MappingFixtures.model)
        #expect(try registry.transformer(named: "GenderCode").transform("M") == "male")
    }
}
