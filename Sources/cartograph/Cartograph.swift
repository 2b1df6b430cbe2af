// The `cartograph` command: `serve`, `map`, `validate`, `check-store`, `backup-store`, `cluster-tenants` and `version`.
import ArgumentParser

@main
struct Cartograph: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cartograph",
        abstract: "Mapping-as-a-service: map API payloads into per-tenant SQLite stores.",
        version: CartographVersion.current,
        subcommands: [Serve.self, Map.self, Validate.self, CheckStore.self, BackupStore.self, ClusterTenants.self, Version.self],
        defaultSubcommand: Serve.self
    )
}

enum CartographVersion {
    static let current = "0.1.0"
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the version.")

    func run() {
        print("cartograph \(CartographVersion.current)")
    }
}
