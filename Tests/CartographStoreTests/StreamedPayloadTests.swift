// Streamed payloads (issue 14): a payload larger than one chunk is mapped chunk by chunk inside its
// one transaction, and must map exactly as the whole payload does — the same counts, objects,
// discarded list, stored objects and change feed, or the same error with nothing stored (R-P11).
// Each case maps the payload both ways, on two stores given the same earlier payload, and compares.
import Foundation
import Testing
import CartographCore
import CartographMapping
@testable import CartographStore
import CartographHTTP

private let itemsModel: JSONValue = ["dictionaryTransformers": ["Legacy": [["op": "move", "from": "legacy_id", "to": "id"]]], "entities": [
    ["name": "Item", "userInfo": ["identityAttributes": "id"],
     "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string", "minLength": 1],
                    ["name": "version", "type": "integer64"], ["name": "note", "type": "string", "default": "none"]],
     "relationships": [["name": "tags", "destination": "Tag", "toMany": true, "inverse": "items"],
                       ["name": "parts", "destination": "Part", "toMany": true, "inverse": "item"]]],
    ["name": "Tag", "userInfo": ["identityAttributes": "name"],
     "attributes": [["name": "name", "type": "string"], ["name": "color", "type": "string", "minLength": 1]],
     "relationships": [["name": "items", "destination": "Item", "toMany": true, "inverse": "tags"]]],
    ["name": "SpecialItem", "parent": "Item", "attributes": [["name": "level", "type": "integer64"]]],
    ["name": "Part", "userInfo": ["identityAttributes": "name"], "attributes": [["name": "name", "type": "string"]],
     "relationships": [["name": "item", "destination": "Item", "inverse": "parts"]]],
    ["name": "Node", "userInfo": ["identityAttributes": "id"],
     "attributes": [["name": "id", "type": "integer64"], ["name": "parentID", "type": "integer64"]],
     "relationships": [["name": "parent", "destination": "Node", "inverse": "children"],
                       ["name": "children", "destination": "Node", "toMany": true, "inverse": "parent"]]],
]]

/// `itemsMapping` with the tags relationship mapped from `tags` (`{"name", "color"}` objects or bare names)
/// and the parts relationship from `parts` (`{"name"}`: a part belongs to one item).
private func taggedItemsMapping(policy: String = "set", discardInvalidTags: Bool = false) throws -> EntityMapping {
    try itemsMapping([("relationships", [
        ["from": "tags", "to": "tags", "assignmentPolicy": .string(policy),
         "mapping": ["entity": "Tag", "attributes": ["name": "name", "color": "color"], "discardsInvalidObjectsOnInsert": .bool(discardInvalidTags)]],
        ["from": "parts", "to": "parts", "mapping": ["entity": "Part", "attributes": ["name": "name"]]],
    ])])
}

/// `("tags", [{"name": n, "color": "c"}…])`, a change for `itemsPayload`.
private func tags(_ names: String...) -> (String, JSONValue) {
    ("tags", .array(names.map { ["name": .string($0), "color": .string("c-\($0)")] }))
}

private func itemsMapping(_ extra: [(String, JSONValue)] = []) throws -> EntityMapping {
    var document = JSONObject([("entity", "Item"), ("keyPath", "items"), ("attributes", ["id": "id", "name": "name", "version": "version"])])
    for (key, value) in extra { document[key] = value }
    return try EntityMapping.parse(.object(document), model: try ModelDocument.parse(json: itemsModel, name: "items"))
}

/// `{"items": [...]}` with objects `{"id": n, "name": "item n", "version": 1}` for `ids`, `changes` replacing members.
private func itemsPayload(_ ids: [Int], _ changes: [Int: [(String, JSONValue)]] = [:]) -> [UInt8] {
    let items: [JSONValue] = ids.enumerated().map { index, id in
        var object = JSONObject([("id", .number(JSONNumber(id))), ("name", .string("item \(id)")), ("version", 1)])
        for (key, value) in changes[index] ?? [] { object[key] = value }
        return .object(object)
    }
    return JSONValue.object(JSONObject([("items", .array(items))])).jsonBytes
}

/// `json` mapped whole and `ndjson` (its items as lines) planned for chunks of `chunkSize`, each on a new store.
private func mapLinesAndWhole(_ json: JSONValue, ndjson: [UInt8], mapping: EntityMapping, sourceLocation: SourceLocation = #_sourceLocation) throws
    -> (whole: (response: JSONValue, contents: [Int64: JSONValue], feed: [Int64: JSONValue]),
        lines: (response: JSONValue, contents: [Int64: JSONValue], feed: [Int64: JSONValue])) {
    func mapped(_ payload: (MappingEngine) throws -> PreparedPayload) throws -> (response: JSONValue, contents: [Int64: JSONValue], feed: [Int64: JSONValue]) {
        let store = try makeStore(itemsModel)
        let engine = try MappingEngine(model: try #require(store.model), chunkSize: chunkSize)
        let prepared = try payload(engine)
        let (result, changeSeq) = try store.write { (transaction) throws(CartographError) in
            try engine.map(prepared, mapping: mapping, into: transaction)
        }
        return (try JSONReader().parse(ResultDocument.bytes(of: result, changeSeq: changeSeq)), try storeContents(store, roots: ["Item", "Tag", "Part"]),
                try replayFeed(store))
    }
    let count = json["items"]?.arrayValue?.count ?? 0
    let whole = try mapped { _ in .whole(json) }
    let lines = try mapped { engine in
        let plan = try #require(try engine.streamingPlan(ndjson: ndjson, values: count, reader: JSONReader(), mapping: mapping, explain: false),
                                "more lines than a chunk are planned for chunks", sourceLocation: sourceLocation)
        return .streamed(plan)
    }
    return (whole, lines)
}

/// What mapping a payload did: the response body (or the error) and the store afterwards.
private struct Outcome: Equatable {
    var response: JSONValue?
    var error: CartographError?
    var contents: [Int64: JSONValue]
    var feed: [Int64: JSONValue]

    static func == (a: Outcome, b: Outcome) -> Bool {
        a.response == b.response && a.contents == b.contents && a.feed == b.feed && a.error?.code == b.error?.code
            && a.error?.detail == b.error?.detail && a.error?.errors == b.error?.errors
    }
}

private let chunkSize = 3

/// Maps `payload` whole and in chunks of `chunkSize`, each on a new store that first mapped `before`.
/// `streamed` says whether the payload should take the chunked path at all.
private func mapBothWays(_ payload: [UInt8], mapping: EntityMapping, before: [UInt8]? = nil, maximumObjects: Int = 1_000_000,
                         metadata: JSONValue = .object(JSONObject()), streamed: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws -> (whole: Outcome, chunked: Outcome) {
    func outcome(chunked: Bool) throws -> Outcome {
        let store = try makeStore(itemsModel)
        let engine = try MappingEngine(model: try #require(store.model), maximumObjects: maximumObjects, chunkSize: chunkSize)
        if let before {
            let earlier = try JSONReader().parse(before)
            _ = try store.write { (transaction) throws(CartographError) in try engine.map(earlier, mapping: mapping, metadata: metadata, into: transaction) }
        }
        let plan = chunked ? try engine.streamingPlan(body: payload, reader: JSONReader(), mapping: mapping, metadata: metadata, explain: false) : nil
        if chunked { #expect((plan != nil) == streamed, "the chunked path is \(streamed ? "" : "not ")taken", sourceLocation: sourceLocation) }
        let whole = try JSONReader().parse(payload)
        var result = Outcome(contents: [:], feed: [:])
        let written: (value: MappingResult, changeSeq: Int64)?
        do {
            written = try store.write { (transaction) throws(CartographError) in
                if let plan { return try engine.map(.streamed(plan), mapping: mapping, metadata: metadata, into: transaction) }
                return try engine.map(whole, mapping: mapping, metadata: metadata, into: transaction)
            }
        } catch {
            written = nil
            result.error = error
        }
        if let (mapped, changeSeq) = written {
            result.response = try JSONReader().parse(ResultDocument.bytes(of: mapped, changeSeq: changeSeq))
            // The response written from bytes holds the result's members and one `objects` entry per top-level representation.
            let members: [JSONValue?] = ["inserted", "updated", "unchanged", "deleted", "changeSeq"].map { result.response?[$0] }
            #expect(members == [mapped.inserted, mapped.updated, mapped.unchanged, mapped.deleted, Int(changeSeq)].map { .number(JSONNumber($0)) },
                    sourceLocation: sourceLocation)
            #expect(result.response?["objects"]?.arrayValue?.count == whole["items"]?.arrayValue?.filter { !$0.isNull }.count, sourceLocation: sourceLocation)
        }
        result.contents = try storeContents(store, roots: ["Item", "Tag", "Part", "Node"])
        result.feed = try replayFeed(store)
        return result
    }
    return (try outcome(chunked: false), try outcome(chunked: true))
}

@Suite struct StreamedPayloadTests {
    @Test func R_P12_aPayloadOfSeveralChunksMapsAsTheWholePayload() throws {
        // Ten objects in four chunks of three: 2 and 5 exist and change, 4 exists unchanged.
        let before = itemsPayload([2, 4, 5])
        let payload = itemsPayload(Array(0..<10), [2: [("name", "two, renamed")], 5: [("name", "five, renamed")]])
        let (whole, chunked) = try mapBothWays(payload, mapping: try itemsMapping(), before: before)
        #expect(chunked == whole)
        #expect(chunked.response?["inserted"] == 7)
        #expect(chunked.response?["updated"] == 2)
        #expect(chunked.response?["unchanged"] == 1)
        #expect(chunked.response?["objects"]?.arrayValue?.count == 10)
        #expect(chunked.response?["objects"]?.arrayValue?[9] == ["entity": "Item", "key": 9])
        #expect(chunked.contents.values.first { $0["id"] == 5 }?["name"] == "five, renamed")
        #expect(chunked.contents.values.first { $0["id"] == 9 }?["note"] == "none", "a new object gets the model default (R-P4)")
        #expect(chunked.contents.count == 10)
    }

    @Test func R_P1_R_I1_identitiesReadFromMetadataMapInChunksAsWhole() throws {
        // Identified by id and the request's `source` query parameter: each source keeps its own objects.
        let mapping = try itemsMapping([("identificationAttributes", ["id", "note"]),
                                        ("attributes", ["id": "id", "name": "name", "version": "version", "@metadata.query.source": "note"])])
        let metadata: JSONValue = ["query": ["source": "crm"]]
        let before = itemsPayload([2, 4])
        let payload = itemsPayload(Array(0..<10), [2: [("name", "two, renamed")]])
        let (whole, chunked) = try mapBothWays(payload, mapping: mapping, before: before, metadata: metadata)
        #expect(chunked == whole)
        #expect(chunked.response?["inserted"] == 8)
        #expect(chunked.response?["updated"] == 1)
        #expect(chunked.contents.values.allSatisfy { $0["note"] == "crm" })
        // An identity read from the metadata alone names one object: every representation merges into it,
        // read with the first chunk (R-I5), each listed where it stands.
        let single = try itemsMapping([("identificationAttributes", ["note"]),
                                       ("attributes", ["id": "id", "name": "name", "version": "version", "@metadata.query.source": "note"])])
        let (wholeSingle, chunkedSingle) = try mapBothWays(payload, mapping: single, metadata: metadata)
        #expect(chunkedSingle == wholeSingle)
        #expect(chunkedSingle.contents.count == 1)
    }

    @Test func R_D1_aDeletionPredicateDeletesOnceEveryChunkIsWrittenAsForTheWholePayload() throws {
        // Stored before: 4 at version 1, which the payload moves to version 0 (deleted, though a chunk before the
        // last listed it); 20, 21 and 22 at version 0, deleted by that earlier payload itself (22 comes back at version 1).
        let stored = JSONValue.object(JSONObject([("items", .array([20, 21, 22, 4].map { id in
            ["id": .number(JSONNumber(id)), "name": .string("item \(id)"), "version": id == 4 ? 1 : 0] }))]))
        let before = stored.jsonBytes
        var ids = Array(0..<10)
        ids.append(22)
        let payload = itemsPayload(ids, [4: [("version", 0)], 7: [("version", 0)]])
        let (whole, chunked) = try mapBothWays(payload, mapping: try itemsMapping([("deletionPredicate", "version == 0")]), before: before)
        #expect(chunked == whole)
        #expect(chunked.response?["deleted"] == 2, "4 and the new 7")
        #expect(Set(chunked.contents.values.compactMap { $0["id"] }) == Set([0, 1, 2, 3, 5, 6, 8, 9, 22].map { JSONValue.number(JSONNumber($0)) }))
        // Identified by name, which is not Item's key: a listed object is named by its stored key (id), one the
        // deletions then removed by its identity, in chunks as for the whole payload.
        let byName = try itemsMapping([("deletionPredicate", "version == 0"), ("identificationAttributes", ["name"])])
        let (wholeByName, chunkedByName) = try mapBothWays(payload, mapping: byName, before: before)
        #expect(chunkedByName == wholeByName)
        #expect(chunkedByName.response?["objects"]?.arrayValue?[4]["key"] == "item 4")
        #expect(chunkedByName.response?["objects"]?.arrayValue?[5]["key"] == 5)
    }

    @Test func R_C1_foreignKeysToObjectsOfEarlierChunksConnectInChunksAsWhole() throws {
        // Nodes under `items` connected to their parent by `parentID`; `before` stores node 100.
        let mapping = try EntityMapping.parse(["entity": "Node", "keyPath": "items", "attributes": ["id": "id", "parentID": "parentID"],
                                               "connections": [["relationship": "parent", "connectedBy": ["parentID": "id"]]]],
                                              model: try ModelDocument.parse(json: itemsModel, name: "items"))
        func nodes(_ parents: [Int?]) -> [UInt8] {
            JSONValue.object(JSONObject([("items", .array(parents.enumerated().map { id, parent in
                ["id": .number(JSONNumber(id)), "parentID": parent.map { .number(JSONNumber($0)) } ?? .null]
            }))])).jsonBytes
        }
        let before = JSONValue.object(JSONObject([("items", [["id": 100]])])).jsonBytes
        // Parents in earlier chunks, in the same chunk, stored before, or none: chunks connect as the whole payload.
        let backward = nodes([nil, 0, 0, 1, 100, 2, 5, 6, 7, 3])
        let (whole, chunked) = try mapBothWays(backward, mapping: mapping, before: before)
        #expect(chunked == whole)
        let parentOf = Dictionary(uniqueKeysWithValues: chunked.contents.values.compactMap { node -> (JSONValue, JSONValue)? in
            guard let id = node["id"] else { return nil }
            return (id, node["parent"] ?? .null)
        })
        #expect(parentOf[9] == 3 && parentOf[4] == 100 && parentOf[1] == 0 && parentOf[0] == .null)
        // Node 1's parent is 8, which the third chunk writes: mapped whole, never connected before it exists.
        let forward = nodes([nil, 8, 0, 1, 100, 2, 5, 6, 7, 3])
        let (wholeForward, chunkedForward) = try mapBothWays(forward, mapping: mapping, before: before, streamed: false)
        #expect(chunkedForward == wholeForward)
    }

    @Test func R_P17_driftIsCountedAndContractsHoldAcrossChunksAsForTheWholePayload() throws {
        // Items 1, 4 and 8 carry a key the mapping does not read; item 6's name is a number.
        let payload = itemsPayload(Array(0..<10), [1: [("extra", 1)], 4: [("extra", 2)], 6: [("name", 6)], 8: [("extra", 3)]])
        let (whole, chunked) = try mapBothWays(payload, mapping: try itemsMapping())
        #expect(chunked == whole)
        #expect(chunked.response?["drift"] == [
            ["path": "/items/*/extra", "kind": "unread", "example": "/items/1/extra", "count": 3],
            ["path": "/items/*/name", "kind": "type", "expected": "string", "found": "number", "example": "/items/6/name", "count": 1],
        ])
        // Under freeze a drift in the last chunk refuses the payload: nothing of the earlier chunks is kept.
        let (wholeFrozen, chunkedFrozen) = try mapBothWays(itemsPayload(Array(0..<10), [9: [("extra", 1)]]),
                                                         mapping: try itemsMapping([("contract", "freeze")]))
        #expect(chunkedFrozen == wholeFrozen)
        #expect(chunkedFrozen.error?.errors.map(\.pointer) == ["/items/9/extra"])
        #expect(chunkedFrozen.contents.isEmpty)
    }

    @Test func R_P7_currentObjectsAreSkippedInEveryChunk() throws {
        // Stored at version 1; the payload brings 3 and 7 at version 2, the others at version 1 (current).
        let mapping = try itemsMapping([("modificationAttribute", "version")])
        let before = itemsPayload(Array(0..<10))
        let payload = itemsPayload(Array(0..<10), [3: [("version", 2), ("name", "three, v2")], 7: [("version", 2), ("name", "seven, v2")]])
        let (whole, chunked) = try mapBothWays(payload, mapping: mapping, before: before)
        #expect(chunked == whole)
        #expect(chunked.response?["updated"] == 2)
        #expect(chunked.response?["unchanged"] == 8)
        #expect(chunked.contents.values.first { $0["id"] == 7 }?["name"] == "seven, v2")
    }

    @Test func R_I5_duplicatesAcrossChunkBoundariesAreMergedAsBefore() throws {
        // Object 1 at index 0 and index 7 (another chunk): one object, later values winning; the copy is
        // read with the first chunk and listed where it stands.
        let payload = itemsPayload([1, 2, 3, 4, 5, 6, 7, 1], [7: [("name", "one, later")]])
        let (whole, chunked) = try mapBothWays(payload, mapping: try itemsMapping())
        #expect(chunked == whole)
        #expect(chunked.response?["inserted"] == 7, "the duplicate is counted once")
        #expect(chunked.response?["objects"]?.arrayValue?.count == 8)
        #expect(chunked.contents.values.first { $0["id"] == 1 }?["name"] == "one, later")
    }

    @Test func R_I5_R_P7_duplicatesAcrossChunkBoundariesWithAModificationAttributeKeepTheNewestCopy() throws {
        // Stored at version 2; the first representation is newer (3), the later one (index 7) is not (1):
        // the newest copy wins wherever it stands (R-I5 with R-P7), and it is newer than the stored object.
        let mapping = try itemsMapping([("modificationAttribute", "version")])
        let before = itemsPayload([1], [0: [("version", 2), ("name", "stored")]])
        let payload = itemsPayload([1, 2, 3, 4, 5, 6, 7, 1], [0: [("version", 3), ("name", "newer")], 7: [("version", 1), ("name", "older")]])
        let (whole, chunked) = try mapBothWays(payload, mapping: mapping, before: before)
        #expect(chunked == whole)
        #expect(chunked.response?["updated"] == 1)
        #expect(chunked.response?["inserted"] == 6)
        #expect(chunked.contents.values.first { $0["id"] == 1 }?["name"] == "newer")
    }

    /// An event log naming objects at several versions: copies in several later chunks, one the last element
    /// (listed after the last chunk), a null between them, three copies of one object, copies of objects
    /// stored before. Each copy is read with its first copy's chunk and listed where it stands.
    @Test(arguments: [false, true])
    func R_I5_topLevelCopiesInLaterChunksMapWithTheFirstCopysChunk(versioned: Bool) throws {
        let mapping = try itemsMapping(versioned ? [("modificationAttribute", "version")] : [])
        let before = itemsPayload([5, 9], [0: [("version", 4)], 1: [("version", 1)]])
        let ids = [1, 2, 5, 3, 4, 1, 9, 6, 2, 1, 7, 8, 5]
        let changes: [Int: [(String, JSONValue)]] = [5: [("name", "one, v2"), ("version", 2)], 8: [("name", "two, v2"), ("version", 2)],
                                                     9: [("name", "one, v3"), ("version", 3)], 12: [("name", "five, older"), ("version", 3)],
                                                     6: [("name", "nine, v2"), ("version", 2)]]
        var items = try JSONReader().parse(itemsPayload(ids, changes))["items"]?.arrayValue ?? []
        items.insert(.null, at: 7)
        let payload = JSONValue.object(JSONObject([("items", .array(items))])).jsonBytes
        let (whole, chunked) = try mapBothWays(payload, mapping: mapping, before: before)
        #expect(chunked == whole)
        #expect(chunked.response?["objects"]?.arrayValue?.count == 13)
        #expect(chunked.response?["inserted"] == 7)
        #expect(chunked.contents.values.first { $0["id"] == 1 }?["name"] == "one, v3")
        #expect(chunked.contents.values.first { $0["id"] == 9 }?["name"] == "nine, v2")
        #expect(chunked.contents.values.first { $0["id"] == 5 }?["name"] == (versioned ? "item 5" : "five, older"),
                "version 3 is older than the stored 4 (R-P7), whichever copy says it")
    }

    /// Over the object limit with copies in later chunks: mapped whole, which names the representation past
    /// the limit in document order (chunks reading the copy early would name object 6).
    @Test func R_S2_R_I5_copiesInLaterChunksOverTheObjectLimitFailAtTheSameObject() throws {
        let payload = itemsPayload([1, 2, 3, 4, 5, 6, 7, 1])
        let (whole, chunked) = try mapBothWays(payload, mapping: try itemsMapping(), maximumObjects: 7, streamed: false)
        #expect(chunked == whole)
        #expect(chunked.error?.code == .payloadTooLarge)
        #expect(chunked.error?.errors.map(\.pointer) == ["/items/7"])
        let (wholeWithin, chunkedWithin) = try mapBothWays(payload, mapping: try itemsMapping(), maximumObjects: 8)
        #expect(chunkedWithin == wholeWithin)
        #expect(chunkedWithin.response?["inserted"] == 7)
    }

    /// A later copy that makes its object invalid fails the payload as whole: the merged object stands
    /// where its first copy does, and a copy's value of the wrong type is told at the copy.
    @Test func R_I5_R_P11_anInvalidLaterCopyFailsThePayloadAsWhole() throws {
        let payload = itemsPayload([1, 2, 3, 4, 5, 6, 7, 1, 8, 2], [7: [("name", "")], 9: [("version", "two")]])
        let (whole, chunked) = try mapBothWays(payload, mapping: try itemsMapping())
        #expect(chunked == whole)
        #expect(chunked.error?.errors.map(\.pointer) == ["/items/0/name", "/items/9/version"])
        #expect(chunked.contents.isEmpty)
    }

    /// NDJSON lines naming one object again in later chunks (an event log): each copy is read again from
    /// its line's offset with its first copy's chunk, and the lines map as the whole JSON payload.
    @Test func R_P19_R_I5_NDJSONLinesRepeatingAnObjectInLaterChunksMapAsWhole() throws {
        let json = try JSONReader().parse(itemsPayload([1, 2, 3, 4, 1, 5, 6, 2, 1], [4: [("name", "one, v2")], 8: [("name", "one, v3")]]))
        let items = try #require(json["items"]?.arrayValue)
        let ndjson = Array(items.map(\.jsonText).joined(separator: "\n").utf8)
        let (whole, lines) = try mapLinesAndWhole(json, ndjson: ndjson, mapping: try itemsMapping())
        #expect(lines.response == whole.response)
        #expect(lines.contents == whole.contents)
        #expect(lines.feed == whole.feed)
        #expect(lines.contents.values.first { $0["id"] == 1 }?["name"] == "one, v3")
        #expect(lines.response["objects"]?.arrayValue?.count == 9)
    }

    @Test func R_P11_anInvalidObjectInALaterChunkStoresNothing() throws {
        // Objects 1 (first chunk) and 8 (third chunk) have an empty name (minLength 1): nothing is stored,
        // and the error names both, as the whole payload's does.
        let payload = itemsPayload(Array(0..<10), [1: [("name", "")], 8: [("name", "")]])
        let (whole, chunked) = try mapBothWays(payload, mapping: try itemsMapping(), before: itemsPayload([20]))
        #expect(chunked == whole)
        #expect(chunked.error?.code == .unprocessable)
        #expect(chunked.error?.errors.map(\.pointer) == ["/items/1/name", "/items/8/name"])
        #expect(chunked.contents.count == 1, "only the earlier payload's object")
        // Only in the last chunk: the chunks before it were written, and are rolled back.
        let late = itemsPayload(Array(0..<10), [9: [("name", "")]])
        let (wholeLate, chunkedLate) = try mapBothWays(late, mapping: try itemsMapping())
        #expect(chunkedLate == wholeLate)
        #expect(chunkedLate.error?.errors.map(\.pointer) == ["/items/9/name"])
        #expect(chunkedLate.contents.isEmpty)
        #expect(chunkedLate.feed.isEmpty)
    }

    @Test func R_S2_tooManyObjectsFailsAtTheSameObjectAfterSomeChunksWereWritten() throws {
        let (whole, chunked) = try mapBothWays(itemsPayload(Array(0..<10)), mapping: try itemsMapping(), maximumObjects: 8)
        #expect(chunked == whole)
        #expect(chunked.error?.code == .payloadTooLarge)
        #expect(chunked.error?.errors.map(\.pointer) == ["/items/8"])
        #expect(chunked.contents.isEmpty)
    }

    @Test func R_P8_invalidNewObjectsAreDiscardedInEveryChunk() throws {
        let mapping = try itemsMapping([("discardsInvalidObjectsOnInsert", true)])
        let payload = itemsPayload(Array(0..<10), [0: [("name", "")], 4: [("name", "")], 9: [("name", "")]])
        let (whole, chunked) = try mapBothWays(payload, mapping: mapping)
        #expect(chunked == whole)
        #expect(chunked.response?["inserted"] == 7)
        #expect(chunked.response?["discarded"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } == ["/items/0", "/items/4", "/items/9"])
        #expect(chunked.response?["objects"]?.arrayValue?[4] == ["entity": "Item", "key": 4, "discarded": true])
        #expect(chunked.contents.count == 7)
    }

    @Test func R_P2_nullsAndTheKeyPathsLastOccurrenceAreReadAsBefore() throws {
        // A repeated key resolves to its last occurrence; null elements map nothing but keep their index.
        let payload = Array(#"{"items": [{"id": 99}], "other": {"items": 1}, "items": [{"id": 1, "name": "a"}, null, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}, null, {"id": 4, "name": ""}]}"#.utf8)
        let (whole, chunked) = try mapBothWays(payload, mapping: try itemsMapping([("discardsInvalidObjectsOnInsert", true)]))
        #expect(chunked == whole)
        #expect(chunked.response?["inserted"] == 3)
        #expect(chunked.response?["discarded"]?.arrayValue?.first?["pointer"] == "/items/5")
    }

    @Test func R_P12_nestedObjectsOfOneChunkMapAsInTheWholePayload() throws {
        // Ten items in four chunks, each with tags of its own; 0 and 1 (one chunk) share "both" under two
        // colors (R-I5: the later wins); stored item 2 trades its tag "old" for new ones, and 9 has none.
        let before = itemsPayload([2], [0: [tags("old")]])
        var changes: [Int: [(String, JSONValue)]] = [:]
        for index in 0..<9 { changes[index] = [tags("t\(index)a", "t\(index)b")] }
        changes[0] = [tags("t0a", "both")]
        changes[1] = [("tags", [["name": "both", "color": "later"], "t1a"])]
        let (whole, chunked) = try mapBothWays(itemsPayload(Array(0..<10), changes), mapping: try taggedItemsMapping(), before: before)
        #expect(chunked == whole)
        #expect(chunked.response?["inserted"] == 26, "items 0-9 but 2, and 17 new tags")
        #expect(chunked.response?["updated"] == 1)
        let storedTags: [JSONValue] = chunked.contents.values.filter { $0["_entity"] == "Tag" }
        var tagsByName: [String: JSONValue] = [:]
        for tag in storedTags { tagsByName[tag["name"]?.stringValue ?? ""] = tag }
        #expect(tagsByName["both"]?["color"] == "later")
        #expect(tagsByName["both"]?["items"]?.arrayValue?.count == 2)
        #expect(tagsByName["old"]?["items"]?.arrayValue?.isEmpty == true, "assignmentPolicy set: the old tag stays, disconnected")
        #expect(tagsByName.count == 18)
    }

    @Test func R_I5_aNestedObjectMetInTwoChunksMapsTheWholePayload() throws {
        // "shared" is named by item 0 (first chunk) and item 7 (third): one object, its later color winning.
        let payload = itemsPayload(Array(0..<10), [0: [tags("shared")], 7: [("tags", [["name": "shared", "color": "later"]])]])
        let (whole, chunked) = try mapBothWays(payload, mapping: try taggedItemsMapping(), streamed: false)
        #expect(chunked == whole)
        #expect(chunked.contents.values.filter { $0["_entity"] == "Tag" }.map { $0["color"] } == ["later"])
    }

    @Test func R_I5_R_P12_aNestedObjectNamedAlikeInSeveralChunksIsMappedOnceInChunks() throws {
        // Tags from a pool of three, named alike by every item (four chunks): each chunk writes them, the
        // first counts them; stored tag "t1" is named too, unchanged.
        let before = itemsPayload([100], [0: [tags("t1")]])
        var changes: [Int: [(String, JSONValue)]] = [:]
        for index in 0..<10 { changes[index] = [tags("t\(index % 3)", "t\((index + 1) % 3)")] }
        let (whole, chunked) = try mapBothWays(itemsPayload(Array(0..<10), changes), mapping: try taggedItemsMapping(), before: before)
        #expect(chunked == whole)
        #expect(chunked.response?["inserted"] == 12, "ten items and tags t0 and t2")
        #expect(chunked.response?["unchanged"] == 1, "t1, counted once")
        let stored = chunked.contents.values.filter { $0["_entity"] == "Tag" }
        #expect(stored.count == 3)
        #expect(stored.first { $0["name"] == "t0" }?["items"]?.arrayValue?.count == 7)
    }

    @Test func R_P8_R_P11_anInvalidNestedObjectNamedInSeveralChunksIsReportedOnce() throws {
        // Tag "bad" (an empty color) is named by items 0 and 7: discarded once, or the one error of the whole payload.
        var changes: [Int: [(String, JSONValue)]] = [:]
        for index in [0, 7] { changes[index] = [("tags", [["name": "bad", "color": ""], ["name": "ok", "color": "c"]])] }
        let payload = itemsPayload(Array(0..<10), changes)
        let (wholeDiscarding, chunkedDiscarding) = try mapBothWays(payload, mapping: try taggedItemsMapping(discardInvalidTags: true))
        #expect(chunkedDiscarding == wholeDiscarding)
        #expect(chunkedDiscarding.response?["discarded"]?.arrayValue?.count == 1)
        let (whole, chunked) = try mapBothWays(payload, mapping: try taggedItemsMapping())
        #expect(chunked == whole)
        #expect(chunked.error?.errors.count == 1)
        #expect(chunked.contents.isEmpty, "R-P11: nothing stored")
    }

    @Test func R_I5_aNestedObjectWithAToOneInverseNamedInSeveralChunksMapsTheWholePayload() throws {
        // Part "p" belongs to one item: named by items 1 and 8, it moves to the last (R-I5), which a chunk cannot know.
        let payload = itemsPayload(Array(0..<10), [1: [("parts", [["name": "p"]])], 8: [("parts", [["name": "p"]])]])
        let (whole, chunked) = try mapBothWays(payload, mapping: try taggedItemsMapping(), streamed: false)
        #expect(chunked == whole)
        #expect(chunked.contents.values.first { $0["_entity"] == "Part" }?["item"] != nil)
    }

    @Test func R_P9_aDynamicMappingMapsInChunksAsTheWholePayload() throws {
        // Every third item is special (a sub-entity with a level); stored item 4 was plain and is named special now.
        let mapping = try itemsMapping([("dynamic", ["keyPath": "kind", "map": ["special": ["entity": "SpecialItem",
                                                                                          "attributes": ["id", "name", "version", "level"]]]])])
        var changes: [Int: [(String, JSONValue)]] = [:]
        for index in stride(from: 0, to: 10, by: 3) { changes[index] = [("kind", "special"), ("level", .number(JSONNumber(index)))] }
        changes[4] = [("kind", "special"), ("level", 40)]
        let (whole, chunked) = try mapBothWays(itemsPayload(Array(0..<10), changes), mapping: mapping, before: itemsPayload([4]))
        #expect(chunked == whole)
        #expect(chunked.contents.values.filter { $0["_entity"] == "SpecialItem" }.count == 4)
    }

    @Test func R_P9_R_P1_aDiscriminatorReadFromTheRootChoosesInEveryChunkAsInTheWholePayload() throws {
        // The payload says once, outside its items, which kind they all are: every chunk reads it (it read null before).
        let mapping = try itemsMapping([("dynamic", ["keyPath": "@root.meta.kind", "map": ["special": ["entity": "SpecialItem",
                                                                                                      "attributes": ["id", "name", "version", "level"]]]])])
        let items = try #require(try JSONReader().parse(itemsPayload(Array(0..<10))) ["items"])
        let payload = JSONValue.object(JSONObject([("meta", ["kind": "special"]), ("items", items)])).jsonBytes
        let (whole, chunked) = try mapBothWays(payload, mapping: mapping)
        #expect(chunked == whole)
        #expect(chunked.contents.values.filter { $0["_entity"] == "SpecialItem" }.count == 10)
    }

    @Test func R_P14_aDictionaryTransformerMapsInChunksAsTheWholePayload() throws {
        // Items name themselves by legacy_id; the transformer moves it to id before anything is read, so
        // 1 (legacy) and 7 (id) are one object met in two chunks: mapped whole.
        let mapping = try itemsMapping([("dictionaryTransformer", "Legacy")])
        var changes: [Int: [(String, JSONValue)]] = [:]
        for index in 0..<10 { changes[index] = [("legacy_id", .number(JSONNumber(100 + index)))] }
        let (whole, chunked) = try mapBothWays(itemsPayload(Array(0..<10), changes), mapping: mapping)
        #expect(chunked == whole)
        #expect(Set(chunked.contents.values.compactMap { $0["id"]?.numberValue?.int64Value }) == Set(100..<110))
        changes[7] = [("legacy_id", 101)]
        let (wholeAgain, chunkedAgain) = try mapBothWays(itemsPayload(Array(0..<10), changes), mapping: mapping, streamed: false)
        #expect(chunkedAgain == wholeAgain)
    }

    @Test func R_P6_replaceDeletesWhatTheWholePayloadDropsOnlyOnceEveryChunkIsWritten() throws {
        // Stored: item 0 holds "kept" and "gone", item 1 holds "last". Item 0 (first chunk) drops both; item 7
        // (third chunk) takes "kept"; item 1 drops "last". Whole or in chunks: "gone" and "last" go, "kept" stays.
        let before = itemsPayload([0, 1], [0: [tags("kept", "gone")], 1: [tags("last")]])
        let payload = itemsPayload(Array(0..<10), [0: [tags("new")], 1: [("tags", [])], 7: [tags("kept")]])
        let (whole, chunked) = try mapBothWays(payload, mapping: try taggedItemsMapping(policy: "replace"), before: before)
        #expect(chunked == whole)
        #expect(chunked.response?["deleted"] == 2)
        #expect(Set(chunked.contents.values.filter { $0["_entity"] == "Tag" }.compactMap { $0["name"]?.stringValue }) == ["kept", "new"])
    }

    @Test func R_D5_deleteMissingKeepsWhatAnyChunkMentioned() throws {
        // Stored 0-11 at version 1; the payload lists 0-9 but 5, in four chunks: 5, 10 and 11 go, at the end.
        let mapping = try itemsMapping([("deleteMissing", ["scope": "version == 1", "maxDeletes": 5])])
        let (whole, chunked) = try mapBothWays(itemsPayload(Array(0..<10).filter { $0 != 5 }), mapping: mapping, before: itemsPayload(Array(0..<12)))
        #expect(chunked == whole)
        #expect(chunked.response?["deleted"] == 3)
        #expect(Set(chunked.contents.values.compactMap { $0["id"]?.numberValue?.int64Value }) == Set([0, 1, 2, 3, 4, 6, 7, 8, 9]))
        // Past maxDeletes: refused whole or in chunks, nothing stored (R-P11).
        let strict = try itemsMapping([("deleteMissing", ["scope": "version == 1", "maxDeletes": 2])])
        let (refusedWhole, refusedChunked) = try mapBothWays(itemsPayload(Array(0..<10).filter { $0 != 5 }), mapping: strict, before: itemsPayload(Array(0..<12)))
        #expect(refusedChunked == refusedWhole)
        #expect(refusedChunked.error?.code == .conflict)
        #expect(refusedChunked.contents.count == 12)
    }

    @Test func R_P12_aRelationshipMappingNoObjectUsesMapsInChunks() throws {
        // Issue 30: a mapping with a relationship mapping kept a million-object payload whole (80x its body).
        let (whole, chunked) = try mapBothWays(itemsPayload(Array(0..<10)), mapping: try taggedItemsMapping())
        #expect(chunked == whole)
        #expect(chunked.response?["inserted"] == 10)
    }

    @Test func R_P1_keyPathsReadingTheRootOrTheTopLevelParentMapInChunksAsWhole() throws {
        // Issue 30: a mapping reading `@root.` or, at the top level, `@parent.` kept a payload whole (50-80x its body).
        /// `{"items": […], "meta": {…}, "after": {"items": [99]}}`, the items with a tag each when `tagged`.
        func payload(_ ids: [Int], tagged: Bool = false) -> [UInt8] {
            let items: [JSONValue] = ids.enumerated().map { index, id in
                var item = JSONObject([("id", .number(JSONNumber(id))), ("name", .string("item \(id)"))])
                if tagged { item["tags"] = [["name": .string(index % 2 == 0 ? "even" : "odd")]] }
                return .object(item)
            }
            return JSONValue.object(JSONObject([("items", .array(items)), ("meta", ["source": "crm", "version": 7, "color": "teal"]),
                                                ("after", ["items": [99]])])).jsonBytes
        }
        let mapping = try itemsMapping([
            ("attributes", ["id": "id", "name": "name", "@root.meta.source": "note", "@parent.meta.version": "version"]),
            ("relationships", [["from": "tags", "to": "tags", "mapping": ["entity": "Tag", "attributes": ["name": "name", "@root.meta.color": "color"]]]]),
        ])
        let (whole, chunked) = try mapBothWays(payload(Array(0..<10), tagged: true), mapping: mapping, before: payload([2, 4]))
        #expect(chunked == whole)
        #expect(chunked.response?["inserted"] == 10, "8 items (2 and 4 were stored) and the tags even and odd")
        let items = chunked.contents.values.filter { $0["id"] != nil }
        #expect(items.count == 10)
        #expect(items.allSatisfy { $0["note"] == "crm" && $0["version"] == 7 })
        #expect(chunked.contents.values.filter { $0["color"] != nil }.map { $0["color"] } == [.string("teal"), .string("teal")])
        // Reading into the array, or a container of it, needs the whole document.
        let engine = try MappingEngine(model: try ModelDocument.parse(json: itemsModel, name: "items"), chunkSize: chunkSize)
        for source in ["@root.items", "@parent.items", "@root.meta.source"] {
            let into = try itemsMapping([("attributes", ["id": "id", "name": "name", .init(source): "note"])])
            let expected = source == "@root.meta.source"
            let plan = try engine.streamingPlan(body: payload(Array(0..<10)), reader: JSONReader(), mapping: into, explain: false)
            #expect((plan != nil) == expected, "\(source)")
        }
        let rootArray = try itemsMapping([("keyPath", .null), ("attributes", ["id": "id", "@root.meta": "note"])])
        #expect(try engine.streamingPlan(body: Array(#"[{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}]"#.utf8), reader: JSONReader(),
                                         mapping: rootArray, explain: false) == nil, "a root array is the document: read whole")
    }

    @Test func R_P19_NDJSONLinesMapInChunksWhereTheyStandAsTheWholeJSONPayload() throws {
        let mapping = try taggedItemsMapping()
        let json = try JSONReader().parse(itemsPayload(Array(0..<10), [3: [tags("a", "b")], 8: [tags("b")]]))
        let items = try #require(json["items"]?.arrayValue)
        let ndjson = Array(items.map(\.jsonText).joined(separator: "\n").utf8)
        let (whole, lines) = try mapLinesAndWhole(json, ndjson: ndjson, mapping: mapping)
        #expect(lines.response == whole.response)
        #expect(lines.contents == whole.contents)
        #expect(lines.feed == whole.feed)
        #expect(lines.response["inserted"] == 12, "10 items and tags a and b")
        // A value that does not parse is reported at its offset in the body.
        var broken = ndjson
        broken.replaceSubrange(broken.count - 3..<broken.count - 2, with: Array("x".utf8))
        let engine = try MappingEngine(model: try ModelDocument.parse(json: itemsModel, name: "items"), chunkSize: chunkSize)
        #expect(throws: JSONSyntaxError.self) {
            try engine.streamingPlan(ndjson: broken, values: items.count, reader: JSONReader(), mapping: mapping, explain: false)
        }
    }

    @Test func streamingIsOnlyPlannedForMappingsThatMapAChunkAsTheWhole() throws {
        let model = try ModelDocument.parse(json: itemsModel, name: "items")
        let engine = try MappingEngine(model: model, chunkSize: chunkSize)
        let large = itemsPayload(Array(0..<10))
        #expect(try engine.streamingPlan(body: large, reader: JSONReader(), mapping: try itemsMapping(), explain: false) != nil)
        #expect(try engine.streamingPlan(body: itemsPayload([1, 2, 3]), reader: JSONReader(), mapping: try itemsMapping(), explain: false) == nil,
                "one chunk: mapped whole")
        #expect(try engine.streamingPlan(body: large, reader: JSONReader(), mapping: try itemsMapping(), explain: true) == nil, "R-P13 explain")
        #expect(try engine.streamingPlan(body: Array(#"[{"items": [1, 2, 3, 4]}]"#.utf8), reader: JSONReader(), mapping: try itemsMapping(),
                                         explain: false) == nil, "a root array with a key path")
        // A syntax error after the array is reported as parsing reports it, before anything is mapped.
        var broken = large
        broken.removeLast()
        #expect(throws: JSONSyntaxError.self) { try engine.streamingPlan(body: broken, reader: JSONReader(), mapping: try itemsMapping(), explain: false) }
    }
}
