// The identification values the store's recent commits wrote (`WrittenIdentities`), by the change-feed
// positions each commit moved the feed between: R-P7's write transaction asks what the commits after its
// read snapshot wrote, and looks up again only the absent identities they may have given to an object.
// With two payloads posted at once, the other's commit almost always lands between a payload's
// read-ahead and its write, and looking up again every new object of a first load was 7% of the write
// lock's time (shape b, issue 29).
import Synchronization
import CartographCore
import CartographMapping

final class IdentityWriteLog: Sendable {
    /// One commit: the feed's head before and after it, the model version it wrote with (which decides
    /// what was tracked), and the digests of what it wrote.
    private struct Commit {
        let before: Int64, after: Int64
        let modelVersion: Int
        let digests: Set<Int>
    }

    /// How many commits are kept: a payload's read-ahead is a few commits behind at most.
    static let keptCommits = 16
    /// A commit that wrote more digests than this is not kept (nor anything before it): a large payload
    /// must not hold memory here (a page of 1,000 articles with their authors and tags writes ~2,000).
    static let maximumDigests = 20_000

    private let commits = Mutex<[Commit]>([])

    /// Records a commit that moved the feed from `before` to `after`. Called under the write lock after
    /// COMMIT succeeded, so commits are recorded in their order. One that moved nothing wrote no object.
    /// `digests` nil: more than `maximumDigests`.
    func record(before: Int64, after: Int64, modelVersion: Int, digests: [Int]?) {
        guard after != before else { return }
        commits.withLock { (commits) in
            guard let digests else { return commits = [] }
            if commits.count == Self.keptCommits { commits.removeFirst() }
            commits.append(Commit(before: before, after: after, modelVersion: modelVersion, digests: Set(digests)))
        }
    }

    /// What the commits from feed position `seq` to `head` wrote, when every one of them is recorded
    /// here under `modelVersion`, whose `tracked` attributes they recorded; nil otherwise (a commit by
    /// another instance of the store, one not kept, a gap, another model).
    func written(since seq: Int64, head: Int64, modelVersion: Int, tracked: [String: Set<String>]) -> WrittenIdentities? {
        commits.withLock { (commits) -> WrittenIdentities? in
            var position = head
            var written: [Set<Int>] = []
            for commit in commits.reversed() {
                guard position > seq else { break }
                guard commit.after == position, commit.modelVersion == modelVersion else { return nil }
                written.append(commit.digests)
                position = commit.before
            }
            guard position == seq else { return nil }
            // Mostly one commit (the other payload's): its set as it is, not a copy.
            let digests = written.count == 1 ? written[0] : written.reduce(into: Set<Int>()) { $0.formUnion($1) }
            return WrittenIdentities(tracked: tracked, digests: digests)
        }
    }
}
