// Core Data `contents` files (R-M4): real models from Groot and RestKit, every property detail
// Xcode writes, the wrapped form with declarations (docs/model.md#core-data-models), and files that are not models.
import Testing
@testable import CartographCore

struct ModelCoreDataImportTests {
    @Test func R_M4_importsGrootFixture() throws {
        let model = try ModelFixtures.groot()
        #expect(model.entities.map(\.name) == ["Abstract", "Card", "Character", "ConcreteA", "ConcreteB", "Container", "Power", "Publisher"])

        let abstract = try #require(model.entity(named: "Abstract"))
        #expect(abstract.abstract)
        #expect(abstract.attributes == [
            Attribute(name: "identifier", type: .integer64, optional: false, indexed: true, userInfo: JSONObject([("JSONKeyPath", "id")])),
        ])
        #expect(abstract.relationships == [
            Relationship(name: "container", destination: "Container", toMany: false, optional: true, inverse: "abstracts",
                         deleteRule: .nullify, userInfo: JSONObject()),
        ])
        #expect(abstract.userInfo == JSONObject([("entityMapperName", "GrootTests.Abstract"), ("identityAttribute", "identifier")]))
        #expect(model.entity(named: "ConcreteA")?.parent == "Abstract")
        #expect(model.allAttributes(of: "ConcreteB").map(\.name) == ["identifier", "bar"])

        let card = try #require(model.entity(named: "Card"))
        #expect(card.attributes.map(\.name) == ["numberOfTimesPlayed", "suit", "value"])
        #expect(card.attributes[0].defaultValue == 0)
        #expect(card.attributes[1].userInfo["JSONKeyPath"] == "suit")

        let character = try #require(model.entity(named: "Character"))
        #expect(character.attributes[0].userInfo == JSONObject([("JSONKeyPath", "id"), ("JSONTransformerName", "GrootTests.Transformer")]))
        #expect(character.relationships.map(\.name) == ["powers", "publisher"])
        #expect(character.relationships[0].toMany && character.relationships[0].inverse == "characters")
        #expect(character.relationships[1] == Relationship(
            name: "publisher", destination: "Publisher", inverse: "characters", userInfo: JSONObject([("JSONKeyPath", "publisher")])))
        #expect(model.entity(named: "Power")?.relationships[0].userInfo.isEmpty == true)

        // R-I1 from the annotations, including Groot's legacy singular key and inheritance.
        #expect(model.identificationAttributes(of: "Card") == ["suit", "value"])
        #expect(model.identificationAttributes(of: "Character") == ["identifier"])
        #expect(model.identificationAttributes(of: "ConcreteA") == ["identifier"])
        #expect(model.identificationAttributes(of: "Container") == [])

        // Groot's tests register these in code; here they are warnings (docs/model.md#validation).
        #expect(model.warnings == [
            "/entities/0/userInfo/entityMapperName: the entity mapper 'GrootTests.Abstract' is not declared in the model and is not built in; declare it in the model, e.g. \"entityMappers\": {\"GrootTests.Abstract\": {\"keyPath\": \"type\", \"map\": {\"<value>\": \"<Entity>\"}}}",
            "/entities/2/attributes/0/userInfo/JSONTransformerName: the value transformer 'GrootTests.Transformer' is not declared in the model and is not built in; declare it in the model, e.g. \"valueTransformers\": {\"GrootTests.Transformer\": \"StringToInteger\"} to use a built-in one under this name, or {\"GrootTests.Transformer\": {\"type\": \"map\", \"map\": {…}}}",
            "/entities/6/attributes/0/userInfo/JSONTransformerName: the value transformer 'GrootTests.Transformer' is not declared in the model and is not built in; declare it in the model, e.g. \"valueTransformers\": {\"GrootTests.Transformer\": \"StringToInteger\"} to use a built-in one under this name, or {\"GrootTests.Transformer\": {\"type\": \"map\", \"map\": {…}}}",
            "/entities/7/attributes/0/userInfo/JSONTransformerName: the value transformer 'GrootTests.Transformer' is not declared in the model and is not built in; declare it in the model, e.g. \"valueTransformers\": {\"GrootTests.Transformer\": \"StringToInteger\"} to use a built-in one under this name, or {\"GrootTests.Transformer\": {\"type\": \"map\", \"map\": {…}}}",
        ])
    }

    @Test func R_M4_importsRestKitVersionedModels() throws {
        let first = try ModelDocument.parse(coreDataXML: ModelFixtures.restKitVersionedModel(""), name: "versioned")
        #expect(first.entities.map(\.name) == ["Article", "Tag"])
        #expect(first.entities[0].attributes == [Attribute(name: "body", type: .string), Attribute(name: "title", type: .string)])
        #expect(first.entities[1].attributes == [Attribute(name: "name", type: .string)])

        let third = try ModelDocument.parse(coreDataXML: ModelFixtures.restKitVersionedModel(" 3"), name: "versioned")
        #expect(third.entities[0].attributes.map(\.name) == ["authorName", "body", "createdAt", "title"])
        #expect(third.entities[0].attributes[2].type == .date)
        #expect(third.warnings.isEmpty)
    }

    static let everyDetail = #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Event" representedClassName="Event" syncable="YES" codeGenerationType="class">
                <attribute name="title" optional="YES" attributeType="String" minValueString="1" maxValueString="80" regularExpressionString="[A-Za-z ]+" defaultValueString="Untitled"/>
                <attribute name="attendees" attributeType="Integer 32" minValueString="0" maxValueString="500" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="startsAt" attributeType="Date" minDateTimeInterval="0" defaultDateTimeInterval="86400.5" usesScalarValueType="NO"/>
                <attribute name="price" optional="YES" attributeType="Decimal" defaultValueString="12.50"/>
                <attribute name="ratio" optional="YES" attributeType="Double" defaultValueString="0.25" maxValueString="1" usesScalarValueType="YES"/>
                <attribute name="published" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
                <attribute name="photo" optional="YES" attributeType="Binary" maxValueString="1048576" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="token" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                <attribute name="link" optional="YES" attributeType="URI"/>
                <attribute name="extra" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"/>
                <attribute name="scratch" optional="YES" transient="YES" attributeType="String">
                    <userInfo><entry key="ignored" value="transient"/></userInfo>
                </attribute>
                <relationship name="venue" optional="YES" maxCount="1" deletionRule="Deny" destinationEntity="Venue" inverseName="events" inverseEntity="Venue"/>
                <relationship name="sessions" toMany="YES" minCount="1" maxCount="10" deletionRule="Cascade" ordered="YES" destinationEntity="Session" inverseName="event" inverseEntity="Session"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="No Action" destinationEntity="Tag"/>
                <fetchedProperty name="upcoming" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Event" predicateString="startsAt &gt; $FETCH_SOURCE.startsAt"/>
                    <userInfo><entry key="ignored" value="fetched"/></userInfo>
                </fetchedProperty>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="title"/></uniquenessConstraint>
                </uniquenessConstraints>
                <userInfo>
                    <entry key="RKEntityIdentificationAttributes" value="title"/>
                    <entry key="note" value="a &amp; b"/>
                </userInfo>
            </entity>
            <entity name="Venue">
                <relationship name="events" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Event" inverseName="venue" inverseEntity="Event"/>
            </entity>
            <entity name="Session">
                <attribute name="identifier" attributeType="Integer 64"/>
                <relationship name="event" maxCount="1" deletionRule="Nullify" destinationEntity="Event" inverseName="sessions" inverseEntity="Event"/>
            </entity>
            <entity name="Tag"/>
            <fetchRequest name="AllEvents" entity="Event"/>
            <configuration name="Cloud" usedWithCloudKit="YES"><memberEntity name="Event"/></configuration>
            <elements><element name="Event" positionX="0" positionY="0" width="128" height="300"/></elements>
        </model>
        """#

    @Test func R_M4_importsEveryPropertyDetailAndIgnoresWhatIsNotStored() throws {
        let model = try ModelDocument.parse(coreDataXML: Array(Self.everyDetail.utf8), name: "events")
        #expect(model.entities.map(\.name) == ["Event", "Venue", "Session", "Tag"])
        let event = model.entities[0]
        #expect(event.attributes.map(\.name) == ["title", "attendees", "startsAt", "price", "ratio", "published", "photo", "token", "link", "extra"])
        #expect(event.attributes[0] == Attribute(name: "title", type: .string, optional: true, defaultValue: "Untitled",
                                                 minLength: 1, maxLength: 80, regex: "[A-Za-z ]+"))
        #expect(event.attributes[1] == Attribute(name: "attendees", type: .integer32, optional: false, defaultValue: 0, minValue: 0, maxValue: 500))
        #expect(event.attributes[2] == Attribute(name: "startsAt", type: .date, optional: false,
                                                 defaultValue: "2001-01-02T00:00:00.500Z", minValue: "2001-01-01T00:00:00.000Z"))
        #expect(event.attributes[3].defaultValue == "12.5")
        #expect(event.attributes[4].defaultValue?.numberValue?.text == "0.25")
        #expect(event.attributes[4].maxValue == 1)
        #expect(event.attributes[5].defaultValue == false)
        #expect(event.attributes[6].maxLength == 1_048_576 && event.attributes[6].maxValue == nil)
        #expect(event.attributes[7...9].map(\.type) == [.uuid, .uri, .transformable])

        #expect(event.relationships == [
            Relationship(name: "venue", destination: "Venue", toMany: false, optional: true, inverse: "events", deleteRule: .deny),
            Relationship(name: "sessions", destination: "Session", toMany: true, ordered: true, optional: false, minCount: 1, maxCount: 10,
                         inverse: "event", deleteRule: .cascade),
            Relationship(name: "tags", destination: "Tag", toMany: true, optional: true, deleteRule: .noAction),
        ])
        #expect(event.userInfo == JSONObject([("RKEntityIdentificationAttributes", "title"), ("note", "a & b")]))
        // Core Data's maxCount="1" on a to-one only says it is to-one.
        #expect(model.entities[2].relationships[0] == Relationship(name: "event", destination: "Event", optional: false, inverse: "sessions"))
        #expect(model.identificationAttributes(of: "Event") == ["title"])
        #expect(model.identificationAttributes(of: "Session") == ["identifier"])
    }

    @Test func R_M4_problemsInXMLPointIntoTheNormalizedForm() throws {
        let xml = #"""
            <model><entity name="A"><attribute name="x" attributeType="Object ID"/><attribute name="n" attributeType="Integer 16" defaultValueString="lots"/>
            <relationship name="b" maxCount="1" deletionRule="Nullify" destinationEntity="B"/></entity>
            <entity name="C" isAbstract="MAYBE"><attribute name="s" attributeType="String" minValueString="x"/></entity></model>
            """#
        do {
            _ = try ModelDocument.parse(coreDataXML: Array(xml.utf8), name: "broken")
            Issue.record("the model parsed")
        } catch {
            #expect(error.code == .unprocessable)
            #expect(Dictionary(uniqueKeysWithValues: error.errors.map { ($0.pointer, $0.message) }) == [
                "/entities/0/attributes/0/type": "unknown attribute type 'Object ID'; expected one of integer16, integer32, integer64, decimal, double, float, string, boolean, date, binary, uuid, uri, transformable (or a Core Data name such as 'Integer 64')",
                "/entities/0/attributes/1/default": #"is not a valid integer16: "lots" is not a number"#,
                "/entities/0/relationships/0/destination": "no entity is named 'B'",
                "/entities/1/abstract": "expected true or false, got 'MAYBE'",
                "/entities/1/attributes/0/minLength": "expected a non-negative integer, got 'x'",
            ])
        }
    }

    /// Malformed XML is a syntax error, a 400 as malformed JSON is (issue 16); XML that is well formed but
    /// not a Core Data `contents` file is a 422.
    @Test(arguments: [
        ("", "is not well-formed XML", CartographError.Code.badRequest),
        ("{\"entities\": []}", "is not well-formed XML", .badRequest),
        ("<model><entity name=\"A\"></model>", "is not well-formed XML (line 1, column ", .badRequest),
        ("<model/><model/>", "is not well-formed XML", .badRequest),
        ("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict/></plist>", "is not a Core Data model: the root element is <plist>, not <model>", .unprocessable),
        ("bplist00\u{1}\u{2}", "is not a Core Data model: it is a binary property list (the Xcode 3 'elements' format)", .unprocessable),
        ("<!DOCTYPE model [<!ENTITY a \"aaaa\">]><model>&a;</model>", "is not a Core Data model: document type declarations are not accepted", .unprocessable),
    ])
    func R_M4_malformedXMLIs400AndAFileThatIsNotACoreDataModelIs422(xml: String, message: String, code: CartographError.Code) throws {
        do {
            _ = try ModelDocument.parse(coreDataXML: Array(xml.utf8), name: "x")
            Issue.record("parsed")
        } catch {
            #expect(error.code == code)
            #expect(error.errors.count == 1)
            #expect(error.errors.first?.pointer == "")
            #expect(error.errors.first?.message.hasPrefix(message) == true, "\(error.errors)")
        }
    }

    /// Found while fuzzing (Fuzz/Regressions/coredata): the DTD check searched the bytes for
    /// `<!DOCTYPE`, but a document declared as UTF-16, UTF-7 or ISO-2022-JP spells it differently in
    /// bytes, so the parser read a DTD the check never saw and expanded its entities (`&e;` became an
    /// entity name). Only UTF-8 is read now, so the byte search sees every DTD.
    @Test(arguments: [
        ("UTF-16", Array(#"<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE model [<!ENTITY e "Expanded">]><model><entity name="&e;"/></model>"#.utf16)
            .flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }, "is not a Core Data model: it is not UTF-8 text"),
        ("UTF-7", Array(#"<?xml version="1.0" encoding="UTF-7"?>+ADw-!DOCTYPE model +AFs-+ADw-!ENTITY e "Expanded"+AD4-+AF0-+AD4-<model><entity name="&e;"/></model>"#.utf8),
         "is not a Core Data model: it declares the encoding 'UTF-7'"),
        ("ISO-2022-JP", Array("<?xml version=\"1.0\" encoding=\"ISO-2022-JP\"?><!DOC\u{1B}(BTYPE model [<!ENT\u{1B}(BITY e \"Expanded\">]><model><entity name=\"&e;\"/></model>".utf8),
         "is not a Core Data model: it declares the encoding 'ISO-2022-JP'"),
        ("two declared encodings", Array(#"<?xml version="1.0 encoding='UTF-8'" encoding="UTF-7"?><model/>"#.utf8), "is not a Core Data model: it declares the encoding 'UTF-7'"),
        ("NUL", Array("<model>\u{0}</model>".utf8), "is not a Core Data model: it is not UTF-8 text"),
    ])
    func R_M4_aDTDInAnotherEncodingIsRefused(encoding: String, xml: [UInt8], message: String) throws {
        do {
            let model = try ModelDocument.parse(coreDataXML: xml, name: "x")
            Issue.record("\(encoding): parsed into \(model.entities.map(\.name))")
        } catch {
            #expect(error.code == .unprocessable)
            #expect(error.errors.map(\.pointer) == [""])
            #expect(error.errors.first?.message.hasPrefix(message) == true, "\(encoding): \(error.errors)")
        }
    }

    /// Found by the coredata fuzz target (Fuzz/Regressions/coredata/pi-without-data-*): FoundationXML
    /// on Linux dereferences a NULL pointer for a processing instruction without data, so a 5-byte
    /// body (`<?i?>`) crashed the server. Such documents are refused before they reach the parser.
    @Test(arguments: ["<?i?>", "<?pi?><model/>", "<model><entity name=\"A\"><?é?></entity></model>", "<model/><?x-y.z?>",
                      "<model><!-- <?c?> --></model>"])
    func R_M4_aProcessingInstructionWithoutDataIs422NotACrash(xml: String) throws {
        do {
            _ = try ModelDocument.parse(coreDataXML: Array(xml.utf8), name: "x")
            Issue.record("parsed")
        } catch {
            #expect(error.code == .unprocessable)
            #expect(error.errors.map(\.pointer) == [""])
            #expect(error.errors.first?.message.hasPrefix("is not a Core Data model: it has a processing instruction without data") == true, "\(error.errors)")
        }
    }

    @Test func R_M4_processingInstructionsWithDataAreIgnored() throws {
        let model = try ModelDocument.parse(coreDataXML: Array(#"<?xml version="1.0"?><?a b?><model><?c ?><entity name="A"/></model>"#.utf8), name: "x")
        #expect(model.entities.map(\.name) == ["A"])
    }

    @Test func R_M4_aUTF8DeclarationAndByteOrderMarkAreAccepted() throws {
        for prefix in ["", "\u{FEFF}"] {
            for declaration in [#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#, "<?xml version='1.0' encoding = 'utf-8'?>", #"<?xml version="1.0"?>"#, ""] {
                let model = try ModelDocument.parse(coreDataXML: Array((prefix + declaration + #"<model><entity name="A"/></model>"#).utf8), name: "x")
                #expect(model.entities.map(\.name) == ["A"])
            }
        }
    }

    @Test func R_M5_aHugeXMLModelIsAClearErrorQuickly() throws {
        let entities = (0..<5_000).map { #"<entity name="E\#($0)"><attribute name="id" attributeType="Integer 64"/></entity>"# }
        let xml = "<model>\(entities.joined())</model>"
        let clock = ContinuousClock()
        var problems: [CartographError.Detail] = []
        let elapsed = clock.measure {
            do throws(CartographError) { _ = try ModelDocument.parse(coreDataXML: Array(xml.utf8), name: "huge") } catch { problems = error.errors }
        }
        #expect(problems == [CartographError.Detail(pointer: "/entities", message: "has 5000 entities; a model has at most 1000")])
        #expect(elapsed < .seconds(5))
    }

    @Test func R_M4_wrappedCoreDataModelTakesTheDeclarativeSections() throws {
        let xml = String(decoding: try ModelFixtures.grootContents(), as: UTF8.self)
        let document: JSONValue = [
            "coreDataModel": .string(xml),
            "valueTransformers": ["GrootTests.Transformer": ["type": "map", "map": ["1": "one"]]],
            "entityMappers": ["GrootTests.Abstract": ["keyPath": "type", "map": ["a": "ConcreteA", "b": "ConcreteB"]]],
            "options": ["identificationInference": false],
        ]
        let model = try ModelDocument.parse(json: document, name: "groot")
        #expect(model.entities.map(\.name) == (try ModelFixtures.groot()).entities.map(\.name))
        #expect(model.warnings.isEmpty)
        #expect(model.options.identificationInference == false)
        #expect(model.entityMappers["GrootTests.Abstract"]?["map"]?["b"] == "ConcreteB")
    }

    @Test func R_M4_wrappedModelProblemsPointAtTheWrapper() {
        #expect(modelProblems(#"{"coreDataModel": "<nope/>"}"#) == ["/coreDataModel": "is not a Core Data model: the root element is <nope>, not <model>"])
        #expect(modelProblems(#"{"coreDataModel": 1}"#) == ["/coreDataModel": "expected a string, got number"])
        #expect(modelProblems(#"{"coreDataModel": "<model/>", "entities": []}"#) == ["/entities": "the entities come from coreDataModel; remove this member"])
        #expect(modelProblems(#"{"coreDataModel": "<model><entity name=\"A\" parentEntity=\"Z\"/></model>"}"#) == ["/entities/0/parent": "no entity is named 'Z'"])
    }
}
