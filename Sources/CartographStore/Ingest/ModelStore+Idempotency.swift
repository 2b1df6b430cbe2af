// Payloads applied once per idempotency key (R-P11, docs/mapping.md "Posting a payload"): the key is
// looked up and stored inside the payload's own write transaction.
import Foundation
import CartographCore
import CartographMapping

extension ModelStore {
    /// How long a stored idempotency key answers a retry, by the store's clock.
    static let idempotencyKeyLifetime: TimeInterval = 24 * 60 * 60

    /// Applies a payload once per idempotency key (R-P11) and answers the document `answer` writes of the
    /// mapping result with its `changeSeq`, with what was committed. `body` maps the payload inside a write transaction; with
    /// a key, the document is stored with the key and the request's hash in the same transaction. The key
    /// is looked up inside that transaction, under the write lock: of two concurrent requests with one
    /// key, the second waits for the first to commit and answers its stored document, so the payload is
    /// applied once. The same key with another request is refused (unprocessable). Keys expire
    /// `idempotencyKeyLifetime` after the write that stored them. Dry runs neither look keys up nor record
    /// them. `checkBytes` is `write`'s. With `archiving`, a committed payload is recorded in its mapping's
    /// archive (R-P18) with its changeSeq, before the key's answer is written; its id is the result's `archiveID`.
    func applyPayload(idempotency: (key: String, requestHash: [UInt8])?, dryRun: Bool,
                      checkBytes: ((_ before: Int64, _ after: Int64) throws(CartographError) -> Void)? = nil,
                      archiving: PayloadArchiving? = nil, answer: ResultWriter,
                      _ body: (StoreTransaction) throws(CartographError) -> MappingResult) throws(CartographError) -> IngestResult {
        /// What the transaction did: found a stored response, or applied the payload.
        enum Outcome: Sendable {
            case replayed([UInt8])
            case applied(MappingResult)
        }
        let table = quoted(Self.idempotencyTable)
        /// Keys stored at or before this (milliseconds since 1970, as `at`) have expired.
        func expiry(_ transaction: StoreTransaction) -> SQLiteValue {
            .integer(transaction.startedAt.addingTimeInterval(-Self.idempotencyKeyLifetime).millisecondsSince1970)
        }
        let key = dryRun ? nil : idempotency
        var archiveID: Int64?
        let (outcome, changeSeq) = try write(dryRun: dryRun, { (transaction) throws(CartographError) -> Outcome in
            if let (key, requestHash) = key {
                let stored: [[SQLiteValue]]
                do {
                    stored = try transaction.connection.rows("SELECT request_sha256, response FROM \(table) WHERE key = ? AND at > ?",
                                                             [.text(key), expiry(transaction)])
                } catch { throw CartographError.store(error, "Cannot read idempotency keys") }
                if let row = stored.first {
                    guard row[0].blobValue == requestHash else {
                        let phrase = CartographError.OptionPhrase(option: "idempotency", words: "idempotency key")
                        throw CartographError(.unprocessable, "This \(phrase.words) was used with a different request.",
                                              errors: [.init(pointer: "", message: "\(phrase.words) reused with another body")], optionPhrase: phrase)
                    }
                    return .replayed(Array((row[1].textValue ?? "").utf8))
                }
            }
            return .applied(try body(transaction))
        }, beforeCommit: { (transaction, outcome, changeSeq) throws(CartographError) in
            guard case .applied(var result) = outcome else { return }
            if let archiving, !dryRun {
                archiveID = try transaction.archive(archiving, result: result, changeSeq: changeSeq)
                result.archiveID = archiveID
            }
            guard let (key, requestHash) = key else { return }
            let response = String(decoding: answer(result, changeSeq), as: UTF8.self)
            do {
                try transaction.connection.run("DELETE FROM \(table) WHERE at <= ?", [expiry(transaction)])
                try transaction.connection.run("INSERT OR REPLACE INTO \(table) (key, request_sha256, response, at) VALUES (?, ?, ?, ?)",
                                               [.text(key), .blob(requestHash), .text(response), .integer(transaction.startedAt.millisecondsSince1970)])
            } catch { throw CartographError.store(error, "Cannot record the idempotency key") }
        }, checkBytes: checkBytes)
        switch outcome {
        case .replayed(let stored): return IngestResult(body: stored, committed: nil)
        case .applied(var result):
            result.archiveID = archiveID
            return IngestResult(body: answer(result, dryRun ? nil : changeSeq), committed: dryRun ? nil : MappedCounts(result))
        }
    }
}
