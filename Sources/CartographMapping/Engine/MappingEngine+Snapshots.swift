// R-D5's deletion of what a snapshot did not mention: after one payload (`applyDeletions`), or when a
// snapshot session's pages are complete (docs/mapping.md "Snapshot sessions").
public import CartographCore

extension MappingEngine {
    /// Completes a snapshot session (inside its write transaction): deletes the objects in `mapping`'s
    /// `deleteMissing` scope whose `_id` is not in `mentioned` (what the session's pages mentioned), with
    /// delete rules, as one payload's snapshot would. More than `maxDeletes` deletions throw a 409.
    /// A mapping without `deleteMissing` deletes nothing.
    public func deleteMissing(of mapping: EntityMapping, keeping mentioned: Set<Int64>,
                              in store: some MappingStore) throws(CartographError) -> MappingResult {
        guard let snapshot = mapping.deleteMissing else { return MappingResult() }
        var run = MappingRun(engine: self, root: .null, metadata: .null)
        try run.deleteMissing(snapshot, keeping: mentioned, listedBy: .session, in: store)
        return run.result
    }
}

extension MappingRun {
    /// What listed the complete set of a snapshot's objects.
    enum SnapshotListing {
        /// One payload (the single-POST snapshot).
        case payload
        /// The pages of a snapshot session, already committed.
        case session
    }

    /// R-D5: deletes the objects in `snapshot`'s scope that are not in `mentioned`; more than
    /// `maxDeletes` deletions (cascades count) throw a 409, rolling the transaction back.
    mutating func deleteMissing(_ snapshot: DeleteMissing, keeping mentioned: Set<Int64>, listedBy listing: SnapshotListing,
                                in store: some MappingStore) throws(CartographError) {
        let before = result.deleted
        let absence, outcome: String
        switch listing {
        case .payload: (absence, outcome) = ("not in the payload", "nothing was stored or deleted")
        case .session: (absence, outcome) = ("mentioned by no page of the snapshot session", "nothing was deleted and the session is kept")
        }
        for object in try store.objects(matching: snapshot.scope.checked, among: nil) where !mentioned.contains(object.id) {
            try delete(object.id, entity: object.entity, pointer: "", reason: "in the deleteMissing scope \(snapshot.scope.format) and \(absence)", in: store)
        }
        let deletions = result.deleted - before
        if deletions > snapshot.maxDeletes {
            throw CartographError(.conflict, "This snapshot would delete \(deletions) objects (cascades included), more than deleteMissing.maxDeletes \(snapshot.maxDeletes); \(outcome).",
                                  errors: [.init(pointer: "", message: "\(deletions) deletions exceed maxDeletes \(snapshot.maxDeletes)")])
        }
    }
}
