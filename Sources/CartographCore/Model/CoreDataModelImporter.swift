// Imports a Core Data `contents` file (R-M4) into the `entities` of a JSON model document, so that
// XML models pass through the same reader and validator as JSON ones and their problems point at
// `/entities/<index>/...` of the normalized form. Values are translated, not checked: a Core Data
// spelling the reader does not accept (an unknown type, a boolean other than YES/NO) is passed
// through for the reader to report.
import Foundation
import FoundationXML

/// Translates Core Data `contents` XML into model document entities.
enum CoreDataModelImporter {
    /// Core Data writes dates as seconds since its reference date, 2001-01-01T00:00:00Z.
    static let referenceDateMilliseconds: Int64 = 978_307_200_000

    /// The entities of the Core Data model in `xml`, as model document entity objects. Throws a 400
    /// pointing at `pointer` when `xml` is not well-formed XML, and a 422 when it is XML but not a Core
    /// Data `contents` file.
    static func entities(fromXML xml: [UInt8], at pointer: JSONPointer) throws(CartographError) -> [JSONValue] {
        func notAModel(_ reason: String) -> CartographError {
            let message = "is not a Core Data model: \(reason)"
            return CartographError(.unprocessable, "The document \(message).", errors: [CartographError.Detail(pointer: pointer.description, message: message)])
        }
        if xml.starts(with: Array("bplist".utf8)) {
            throw notAModel("it is a binary property list (the Xcode 3 'elements' format); open the model in Xcode 4.3 or later and submit Name.xcdatamodel/contents")
        }
        // Core Data files never declare a DTD; refusing one rules out entity-expansion attacks. The
        // search reads bytes, so it sees every DTD only in a document the parser reads as UTF-8: told
        // that a document is UTF-16, UTF-7 or ISO-2022-JP, the parser would find a DTD the search
        // cannot. Core Data writes UTF-8, so anything else is refused first.
        if let problem = encodingProblem(xml) { throw notAModel(problem) }
        if xml.firstRange(of: Array("<!DOCTYPE".utf8)) != nil || xml.firstRange(of: Array("<!ENTITY".utf8)) != nil {
            throw notAModel("document type declarations are not accepted")
        }
        // FoundationXML on Linux reads a processing instruction's data through a pointer that libxml2
        // leaves NULL when there is none (`<?pi?>`), and the process crashes before the delegate is
        // called. Core Data writes no processing instructions besides the XML declaration.
        if let target = processingInstructionWithoutData(in: xml) {
            throw notAModel("it has a processing instruction without data (\(DocumentProblems.quote(target))), which is not accepted")
        }
        let reader = ContentsReader()
        let parser = XMLParser(data: Data(xml))
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        let parsed = parser.parse()
        if let root = reader.rootElement, root != "model" {
            throw notAModel("the root element is <\(root)>, not <model>")
        }
        // FoundationXML on Linux may report errors to the delegate yet return true, so all three count.
        guard parsed, parser.parserError == nil, reader.firstErrorPosition == nil, reader.rootElement != nil else {
            // A syntax error, as malformed JSON is: 400, not 422 (a well-formed file that is not a model is a 422).
            let (line, column) = reader.firstErrorPosition ?? (parser.lineNumber, parser.columnNumber)
            let message = "is not well-formed XML (line \(line), column \(column))"
            throw CartographError(.badRequest, "The Core Data model \(message).", errors: [CartographError.Detail(pointer: pointer.description, message: message)])
        }
        return reader.entities
    }

    /// Why the parser might not read `xml` as UTF-8; nil when it will. UTF-16 and UTF-32 are detected
    /// without a byte order mark from their NUL bytes, and the XML declaration may name any encoding:
    /// each `encoding` in it must name UTF-8.
    static func encodingProblem(_ xml: [UInt8]) -> String? {
        guard !xml.contains(0), String(validating: xml, as: UTF8.self) != nil else {
            return "it is not UTF-8 text (Core Data writes models in UTF-8)"
        }
        var text = xml[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        guard text.starts(with: Array("<?xml".utf8)), let next = text.dropFirst(5).first, isBlank(next) else { return nil }
        var declaration = text[..<(text.firstRange(of: Array("?>".utf8))?.lowerBound ?? text.endIndex)]
        while let found = declaration.firstRange(of: Array("encoding".utf8)) {
            declaration = declaration[found.upperBound...].drop(while: isBlank)
            guard declaration.first == UInt8(ascii: "=") else { return "its XML declaration is malformed" }
            declaration = declaration.dropFirst().drop(while: isBlank)
            guard let quote = declaration.first, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'"),
                let end = declaration.dropFirst().firstIndex(of: quote)
            else { return "its XML declaration is malformed" }
            let name = String(decoding: declaration[declaration.index(after: declaration.startIndex)..<end], as: UTF8.self)
            guard name.lowercased() == "utf-8" else {
                return "it declares the encoding \(DocumentProblems.quote(name)) (Core Data writes models in UTF-8)"
            }
            declaration = declaration[end...]
        }
        return nil
    }

    /// The target of the first `<?target?>` in `xml`, found the way libxml2 reads one (a target
    /// directly followed by `?>`); inside comments and CDATA too, which only refuses more.
    static func processingInstructionWithoutData(in xml: [UInt8]) -> String? {
        var rest = xml[...]
        while let start = rest.firstRange(of: Array("<?".utf8)) {
            rest = rest[start.upperBound...]
            let target = rest.prefix { !isBlank($0) && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: ">") && $0 != UInt8(ascii: "<") }
            if !target.isEmpty, rest[target.endIndex...].starts(with: Array("?>".utf8)) {
                return String(decoding: target, as: UTF8.self)
            }
        }
        return nil
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    // MARK: Translation of elements

    static func entity(_ xml: [String: String], attributes: [JSONValue], relationships: [JSONValue], fetchIndexes: [JSONValue],
                       userInfo: JSONObject) -> JSONValue {
        var entity = JSONObject()
        entity.append(ifPresent: "name", xml["name"].map(JSONValue.string))
        entity.append(ifPresent: "parent", xml["parentEntity"].map(JSONValue.string))
        entity.append(ifPresent: "abstract", boolean(xml["isAbstract"]))
        entity.append("attributes", .array(attributes))
        entity.append("relationships", .array(relationships))
        entity.append("fetchIndexes", .array(fetchIndexes))
        entity.append("userInfo", .object(userInfo))
        return .object(entity)
    }

    /// Defaults and bounds become typed JSON values. Core Data keeps string and binary length bounds
    /// in `minValueString`/`maxValueString` (docs/model.md#core-data-models), and date defaults and bounds as intervals
    /// since its reference date.
    static func attribute(_ xml: [String: String], userInfo: JSONObject) -> JSONValue {
        var attribute = JSONObject()
        attribute.append(ifPresent: "name", xml["name"].map(JSONValue.string))
        attribute.append(ifPresent: "type", xml["attributeType"].map(JSONValue.string))
        // Core Data writes `optional="YES"` and omits it for required attributes.
        attribute.append("optional", boolean(xml["optional"]) ?? false)
        let type = xml["attributeType"].flatMap(AttributeType.init(parsing:))
        if type == .date {
            attribute.append(ifPresent: "default", xml["defaultDateTimeInterval"].map(date))
            attribute.append(ifPresent: "minValue", xml["minDateTimeInterval"].map(date))
            attribute.append(ifPresent: "maxValue", xml["maxDateTimeInterval"].map(date))
        } else {
            attribute.append(ifPresent: "default", xml["defaultValueString"].map { value($0, of: type) })
            let bounds = type?.hasLengthBounds == true ? ("minLength", "maxLength") : ("minValue", "maxValue")
            attribute.append(ifPresent: bounds.0, xml["minValueString"].map { type?.hasLengthBounds == true ? integer($0) : value($0, of: type) })
            attribute.append(ifPresent: bounds.1, xml["maxValueString"].map { type?.hasLengthBounds == true ? integer($0) : value($0, of: type) })
        }
        attribute.append(ifPresent: "regex", xml["regularExpressionString"].map(JSONValue.string))
        attribute.append(ifPresent: "indexed", boolean(xml["indexed"]))
        // Core Data has no full-text flag: the user-info entry `searchable` says it (R-Q6); a value that is
        // not a yes or a no stays text, which the reader reports as not a boolean.
        if let flag = userInfo["searchable"]?.stringValue {
            let value: JSONValue = switch flag.lowercased() {
            case "yes", "true", "1": true
            case "no", "false", "0": false
            default: .string(flag)
            }
            attribute.append("searchable", value)
        }
        attribute.append("userInfo", .object(userInfo))
        return .object(attribute)
    }

    static func relationship(_ xml: [String: String], userInfo: JSONObject) -> JSONValue {
        var relationship = JSONObject()
        relationship.append(ifPresent: "name", xml["name"].map(JSONValue.string))
        relationship.append(ifPresent: "destination", xml["destinationEntity"].map(JSONValue.string))
        let toMany = boolean(xml["toMany"]) ?? false
        relationship.append("toMany", toMany)
        relationship.append(ifPresent: "ordered", boolean(xml["ordered"]))
        relationship.append("optional", boolean(xml["optional"]) ?? false)
        // On a to-one, Core Data's `maxCount="1"` only restates that it is to-one.
        if toMany != .bool(false) {
            relationship.append(ifPresent: "minCount", xml["minCount"].map(integer))
            relationship.append(ifPresent: "maxCount", xml["maxCount"].map(integer))
        }
        relationship.append(ifPresent: "inverse", xml["inverseName"].map(JSONValue.string))
        relationship.append(ifPresent: "deleteRule", xml["deletionRule"].map(JSONValue.string))
        relationship.append("userInfo", .object(userInfo))
        return .object(relationship)
    }

    // MARK: Values

    /// Core Data booleans are `YES`/`NO`; anything else passes through for the reader to report.
    static func boolean(_ text: String?) -> JSONValue? {
        switch text {
        case nil: nil
        case "YES": true
        case "NO": false
        case let other?: .string(other)
        }
    }

    static func integer(_ text: String) -> JSONValue {
        Int(text).map { .number(JSONNumber($0)) } ?? .string(text)
    }

    /// `text` as a JSON value of `type` (`"0"` -> `0`, `"YES"` -> `true`); the text itself when it
    /// does not coerce, so that the reader reports it.
    static func value(_ text: String, of type: AttributeType?) -> JSONValue {
        guard let type, type != .string, let coerced = try? AttributeValue.coerce(.string(text), to: type) else { return .string(text) }
        return coerced.jsonValue
    }

    /// Seconds since 2001-01-01 as an ISO 8601 instant.
    static func date(_ interval: String) -> JSONValue {
        guard let milliseconds = NumberText(interval)?.floorScaled(by: 3) else { return .string(interval) }
        let (sinceEpoch, overflow) = milliseconds.addingReportingOverflow(referenceDateMilliseconds)
        return overflow ? .string(interval) : .string(ISO8601Instant.render(milliseconds: sinceEpoch))
    }
}

extension JSONObject {
    fileprivate mutating func append(ifPresent key: String, _ value: JSONValue?) {
        if let value { append(key, value) }
    }
}

/// Collects entities, their attributes, relationships and fetch indexes, and the `userInfo` entries of
/// each. Everything else (fetched properties, fetch requests, configurations, transient properties,
/// layout elements) is ignored: it does not describe stored data. A fetch index element that is an
/// expression rather than a property is left out (SQLite indexes here list columns), and so is a fetch
/// index left with no element.
private final class ContentsReader: NSObject, XMLParserDelegate {
    private(set) var rootElement: String?
    private(set) var entities: [JSONValue] = []
    /// Where the first XML error was found; parsing stops there.
    private(set) var firstErrorPosition: (line: Int, column: Int)?
    /// The names of the open elements, root first.
    private var path: [String] = []
    private var entity: (xml: [String: String], attributes: [JSONValue], relationships: [JSONValue], fetchIndexes: [JSONValue], userInfo: JSONObject)?
    /// The open fetch index: its name and the elements read so far.
    private var fetchIndex: (name: String?, elements: [JSONValue])?
    /// The open attribute or relationship; nil inside a transient one.
    private var property: (xml: [String: String], userInfo: JSONObject)?

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        defer { path.append(name) }
        switch (path.count, name) {
        case (0, _):
            rootElement = name
            if name != "model" { parser.abortParsing() }
        case (1, "entity"):
            entity = (attributes, [], [], [], JSONObject())
        case (2, "attribute") where path[1] == "entity", (2, "relationship") where path[1] == "entity":
            property = attributes["transient"] == "YES" ? nil : (attributes, JSONObject())
        case (2, "fetchIndex") where path[1] == "entity":
            fetchIndex = (attributes["name"], [])
        case (3, "fetchIndexElement") where path[1] == "entity" && path[2] == "fetchIndex":
            if let property = attributes["property"] {
                let order = attributes["order"] == "descending" ? "descending" : "ascending"
                fetchIndex?.elements.append(.object(JSONObject([("attribute", .string(property)), ("order", .string(order))])))
            }
        case (3, "entry") where path[1] == "entity" && path[2] == "userInfo":
            if let key = attributes["key"] { entity?.userInfo[key] = .string(attributes["value"] ?? "") }
        case (4, "entry") where path[1] == "entity" && ["attribute", "relationship"].contains(path[2]) && path[3] == "userInfo":
            if let key = attributes["key"] { property?.userInfo[key] = .string(attributes["value"] ?? "") }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if firstErrorPosition == nil, rootElement == nil || rootElement == "model" {
            firstErrorPosition = (parser.lineNumber, parser.columnNumber)
            parser.abortParsing()
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        path.removeLast()
        switch (path.count, name) {
        case (1, "entity") where path[0] == "model":
            if let entity {
                entities.append(CoreDataModelImporter.entity(entity.xml, attributes: entity.attributes, relationships: entity.relationships,
                                                             fetchIndexes: entity.fetchIndexes, userInfo: entity.userInfo))
            }
            entity = nil
        case (2, "attribute") where path[1] == "entity":
            if let property { entity?.attributes.append(CoreDataModelImporter.attribute(property.xml, userInfo: property.userInfo)) }
            property = nil
        case (2, "fetchIndex") where path[1] == "entity":
            if let fetchIndex, !fetchIndex.elements.isEmpty {
                var object = JSONObject()
                object.append(ifPresent: "name", fetchIndex.name.map(JSONValue.string))
                object.append("elements", .array(fetchIndex.elements))
                entity?.fetchIndexes.append(.object(object))
            }
            fetchIndex = nil
        case (2, "relationship") where path[1] == "entity":
            if let property { entity?.relationships.append(CoreDataModelImporter.relationship(property.xml, userInfo: property.userInfo)) }
            property = nil
        default:
            break
        }
    }
}
