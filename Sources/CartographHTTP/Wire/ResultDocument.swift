// The document that answers a payload (R-P12, docs/mapping.md "The result"): what the payload routes,
// a snapshot session's completion and `cartograph map` print, and what an Idempotency-Key keeps.
import CartographCore
public import CartographMapping

/// Writes a mapping result as the answer to its payload.
public enum ResultDocument {
    /// The document as compact JSON text, its members in the documented order (docs/mapping.md), written
    /// into a buffer of the exact size the `objects` list needs. A dry run (`changeSeq` nil) says
    /// `"dryRun": true, "changeSeq": null`: it took no sequence number (R-P11).
    public static func bytes(of result: MappingResult, changeSeq: Int64?) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        let entryOverhead = #"{"entity":"#.utf8.count + #","key":"#.utf8.count + 2  // the braces and the comma before the next
        var objectsBytes = result.objectKeys.count
        for run in result.objectRuns {
            objectsBytes += run.count * (entryOverhead + run.entity.utf8.count + 2 + (run.discarded ? #","discarded":true"#.utf8.count : 0))
        }
        out.reserveCapacity(objectsBytes + 512)
        func member(_ name: String, _ value: JSONValue) {
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(name, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &out)
        }
        member("inserted", .number(JSONNumber(result.inserted)))
        member("updated", .number(JSONNumber(result.updated)))
        member("unchanged", .number(JSONNumber(result.unchanged)))
        member("deleted", .number(JSONNumber(result.deleted)))
        member("discarded", .array(result.discarded))
        out.append(contentsOf: #","objects":["#.utf8)
        result.objectKeys.withUnsafeBufferPointer { keys in
            var start = 0
            for run in result.objectRuns {
                var entity: [UInt8] = []
                JSONWriter.writeString(run.entity, into: &entity)
                for _ in 0..<run.count {
                    if start > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(contentsOf: #"{"entity":"#.utf8)
                    out.append(contentsOf: entity)
                    out.append(contentsOf: #","key":"#.utf8)
                    var end = start
                    while keys[end] != MappingResult.objectKeyEnd { end += 1 }
                    out.append(contentsOf: keys[start..<end])
                    if run.discarded { out.append(contentsOf: #","discarded":true"#.utf8) }
                    out.append(UInt8(ascii: "}"))
                    start = end + 1
                }
            }
        }
        out.append(UInt8(ascii: "]"))
        if !result.warnings.isEmpty { member("warnings", .array(result.warnings)) }
        if !result.drift.isEmpty {
            member("drift", .array(result.drift.map(driftEntry)))
            if result.driftNotListed > 0 { member("driftNotListed", .number(JSONNumber(result.driftNotListed))) }
        }
        // R-P18: where the payload's body is archived, for GET …/archive/{id} and a replay.
        if let archiveID = result.archiveID { member("archive", ["id": .number(JSONNumber(archiveID))]) }
        if let changeSeq {
            member("changeSeq", .number(JSONNumber(changeSeq)))
        } else {
            member("dryRun", .bool(true))
            member("changeSeq", .null)
        }
        if let explain = result.explain {
            member("explain", .array(explain))
            member("timings", .object(JSONObject(result.timings.map { ($0.phase, JSONNumber($0.milliseconds).map { .number($0) } ?? .null) })))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `{"path", "kind", ["expected", "found",] "example", "count"}` (R-P17).
    private static func driftEntry(_ drift: MappingResult.Drift) -> JSONValue {
        var entry = JSONObject([("path", .string(drift.path))])
        appendDriftKind(drift.kind, to: &entry)
        entry.append("example", .string(drift.example))
        entry.append("count", .number(JSONNumber(drift.count)))
        return .object(entry)
    }

    /// `"kind"`, and for a value of another type `"expected"` and `"found"`: as an answer and a mapping's
    /// kept drift (`GET …/drift`) both say it.
    static func appendDriftKind(_ kind: MappingResult.Drift.Kind, to entry: inout JSONObject) {
        switch kind {
        case .unread:
            entry.append("kind", "unread")
        case .type(let expected, let found):
            entry.append("kind", "type")
            entry.append("expected", .string(expected))
            entry.append("found", .string(found))
        }
    }
}
