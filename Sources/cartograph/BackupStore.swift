// `cartograph backup-store`: the backup an operator puts back when a store is damaged or lost (SECURITY.md).
import ArgumentParser
import Foundation
import CartographCore
import CartographStore

struct BackupStore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup-store",
        abstract: "Copy a store file (<data-dir>/tenants/<tenant>/<model>.sqlite) to a new file, as a backup.",
        discussion: "A consistent copy, safe while the server runs (writers go on). The copy is marked as one: put back in place of "
            + "the store (with the server stopped and the store's -wal and -shm removed), it opens with a new change-feed epoch, "
            + "so that followers start again from 0 instead of missing what was written after the backup (R-D7)."
    )

    @Argument(help: "The store file to copy.") var store: String
    @Argument(help: "The backup file to write (it must not exist).") var copy: String

    func run() throws {
        do throws(CartographError) {
            try StoreBackup.copy(store: store, to: copy)
            print("\(store): backed up to \(copy)")
        } catch {
            FileHandle.standardError.write(Data("error: \(error.detail)\n".utf8))
            throw ExitCode(1)
        }
    }
}
