// How `cartograph serve` reads its flags into a configuration (Settings), without starting a server.
import ArgumentParser
import Testing
import CartographHTTP
@testable import cartograph

struct ServeSettingsTests {
    private func settings(_ arguments: [String]) throws -> Settings { try Settings(serve: Serve.parse(arguments), environment: [:]) }

    @Test func R_S2_connectionsPerIPDefaultToAQuarterOfTheConnectionLimit() throws {
        #expect(try settings([]).configuration.perIPConnectionLimit == 256)
        #expect(try settings(["--connection-limit", "100"]).configuration.perIPConnectionLimit == 25)
        #expect(try settings(["--connection-limit", "2"]).configuration.perIPConnectionLimit == 1)
        #expect(try settings(["--connection-limit", "100", "--per-ip-connection-limit", "0"]).configuration.perIPConnectionLimit == 0)
        #expect(try Settings(serve: Serve.parse([]), environment: ["CARTOGRAPH_PER_IP_CONNECTION_LIMIT": "7"]).configuration.perIPConnectionLimit == 7)
    }
}
