// Slow request heads (issue 17, R-S2): a request head must arrive whole within the connection timeout;
// a client that keeps dribbling header bytes is closed like an idle one, and the slots it held serve others.
import Foundation
import Glibc
import Synchronization
import Testing
import CartographCore
import CartographTesting

@Suite(.serialized) struct SlowClientLiveTests {
    /// Sends `bytes` one at a time, `interval` apart, until the server closes the socket; the seconds from
    /// `start` to then (nil if the socket was still open after every byte).
    private func dribble(_ client: RawHTTPClient, _ socket: Int32, _ bytes: [UInt8], interval: TimeInterval, from start: Date) -> TimeInterval? {
        for byte in bytes {
            guard client.writeAll(socket, [byte]) else { return Date().timeIntervalSince(start) }
            Thread.sleep(forTimeInterval: interval)
        }
        return nil
    }

    @Test func R_S2_aRequestHeadThatDribblesIsClosedAfterTheConnectionTimeout() throws {
        try withLiveServer(arguments: ["--connection-timeout", "2", "--connection-limit", "8", "--per-ip-connection-limit", "0"]) { server in
            let client = server.client
            let head = Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: \(String(repeating: "a", count: 200))\r\n\r\n".utf8)
            // Every slot but one held by a client sending a byte every 0.3 s (never idle for 2 s).
            let connected = Date()
            let sockets = try (0..<7).map { _ in try client.connect() }
            defer { sockets.forEach { close($0) } }
            let results = Mutex<[TimeInterval?]>([])
            let group = DispatchGroup()
            for socket in sockets {
                // A thread each: all seven dribble at once, whatever the number of cores.
                group.enter()
                Thread.detachNewThread {
                    let closedAfter = dribble(client, socket, head, interval: 0.3, from: connected)
                    results.withLock { $0.append(closedAfter) }
                    group.leave()
                }
            }
            group.wait()
            let closed = results.withLock { $0 }
            #expect(closed.count == 7)
            for seconds in closed {
                let seconds = try #require(seconds, "a dribbling head was never closed")
                #expect(seconds >= 1.9 && seconds < 5, "closed \(seconds) s after connecting, the timeout being 2 s")
            }
            // The slots serve others again, and a request that arrives whole is answered.
            #expect(try client.send("GET", "/healthz").status == 200)
        }
    }

    @Test func R_S2_aKeptAliveConnectionAndALongPollAreNotCutByTheHeadDeadline() throws {
        try ModelAPI.with(model: projectsModel, serverArguments: ["--connection-timeout", "2"], live: true) { api in
            let client = try #require(api.client as? RawHTTPClient)
            // A long poll waits 3 s, past the 2 s timeout: its head arrived, so it is answered, not cut.
            let started = Date()
            let poll = try client.send("GET", api.base + "/changes?since=0&wait=3", token: api.key, halfClose: false)
            #expect(poll.status == 200, "\(poll.text)")
            #expect(Date().timeIntervalSince(started) >= 2.5)
            #expect(try poll.json()["changes"] == [])
        }
    }
}
