// libmicrohttpd, adapted to `Application.respond(to:)`: one single-threaded daemon per request thread, each
// with its own listening socket on the same port (SO_REUSEPORT), so the kernel spreads connections over the
// threads. In libmicrohttpd's thread-pool mode a connection stays with the thread that accepted it, and a
// thread accepts up to ten waiting connections at a time: a client opening its connections together could
// have them all on one thread and one core (a list benchmark ran at 179 req/s in one run of three, 320 in
// the others). The connection limits are kept across the daemons here (`ConnectionTable`), as one
// daemon's limits count only its own connections.
//
// MHD calls the access handler once with the headers, once per body chunk and a last time with
// no data: the body is accumulated in a per-request `RequestState` (retained in `*req_cls` and
// released in the completion callback, the one place that sees every request end) and answered on
// the last call. The request path stays synchronous on MHD's threads (LIBMICROHTTPD.md), except for
// requests with a body, answered by `RequestWorkers` while their connection is suspended.
import Foundation
public import Synchronization
import Logging
import CartographCore
internal import CMicroHTTPD

/// Why the server could not start.
public struct ServerStartError: Error, CustomStringConvertible {
    public let description: String
}

/// A running libmicrohttpd daemon serving one `Application`.
public final class MicroHTTPDServer: Sendable {
    /// The daemon handle. `OpaquePointer` is not Sendable; the handle is written once by `start`
    /// and read by `quiesce`/`stop` under the mutex, and MHD's own calls on it are thread-safe.
    private struct DaemonHandle: @unchecked Sendable { let pointer: OpaquePointer }

    public let application: Application
    private let daemons = Mutex<[DaemonHandle]>([])
    private let listenSockets = Mutex<[Int32]>([])
    /// Open connections, counted across the daemons for the connection limits.
    let connections = ConnectionTable()
    /// Requests between their first access-handler call and their completion callback.
    public let inFlight = Atomic<Int>(0)
    /// Suspended connections resumed with an answer that MHD has not finished yet.
    let answersInTransit = Atomic<Int>(0)
    /// Whether a release of freed memory is scheduled (see `releaseMemory(afterRequestOf:)`).
    private let releaseScheduled = Atomic<Bool>(false)
    /// A request whose body was at least this large gives its memory back to the system once answered.
    static let releaseThresholdBytes = 1 << 20
    /// Connections waiting for a request head, closed past the connection timeout.
    let headDeadlines = HeadDeadlines()
    /// Whether the thread checking `headDeadlines` goes on (set while the daemon runs).
    private let headSweep = HeadSweep()

    /// After a large request, the memory its payload freed goes back to the system: glibc keeps it in
    /// its arenas otherwise, and the process would hold its peak for good. Runs shortly after the
    /// request completes (MHD releases its response after the completion callback); small
    /// requests do not pay for it, and requests completing together share one release.
    fileprivate func releaseMemory(afterRequestOf bodyBytes: Int) {
        guard bodyBytes >= Self.releaseThresholdBytes,
              releaseScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(50)) { [self] in
            releaseScheduled.store(false, ordering: .releasing)
            cmhd_release_free_memory()
        }
    }

    /// Answers requests with a body (issue 30, noisy neighbours): a payload takes milliseconds to seconds
    /// to map, and on a request thread it held up every other connection of that thread — another
    /// tenant's GETs too. The request threads keep the short requests; workers take bodies by tenant in turn.
    let workers: RequestWorkers
    /// The workers' nice value: mapping payloads is batch work, so on a busy machine the request threads
    /// (reads, whoever's) run first; alone, the workers still get every idle core.
    static let workerNiceness: Int32 = 10

    public init(application: Application) {
        self.application = application
        // One per core: their work is CPU-bound, and each worker's malloc arena keeps what its payloads
        // freed (a worker per request thread raised a 100k re-load's peak RSS from ~100 to ~110 MiB).
        workers = RequestWorkers(count: max(2, ProcessInfo.processInfo.activeProcessorCount), stackBytes: Self.threadStackBytes,
                                 niceness: Self.workerNiceness)
    }

    /// Each request thread's stack.
    static let threadStackBytes = 64 << 20

    /// Starts listening; returns the bound port (useful with port 0).
    @discardableResult
    public func start() throws -> Int {
        let configuration = application.configuration
        // Suspend/resume parks long polls without holding a pool thread (ChangeWaiters).
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            | MHD_USE_ERROR_LOG.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        // The limits are checked by `acceptPolicy` over every daemon's connections; each daemon may hold them all.
        let options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: configuration.connectionLimit, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: configuration.connectionTimeoutSeconds, ptr_value: nil),
            // MHD clears this pool for every request: 32 KiB (its default) holds any sane request head.
            MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: 32 * 1024, ptr_value: nil),
            MHD_OptionItem(option: .LISTENING_ADDRESS_REUSE, value: 1, ptr_value: nil),
            // Reading and mapping recurse once per nesting level: a tree as deep as the largest
            // --max-json-depth allows (2,048, so 1,020 levels through a self-referencing mapping)
            // overflowed the default 8 MiB in a debug build. Address space: pages are committed as touched.
            MHD_OptionItem(option: .THREAD_STACK_SIZE, value: Self.threadStackBytes, ptr_value: nil),
        ]
        let context = Unmanaged.passUnretained(self).toOpaque()
        let host = configuration.host == "0.0.0.0" ? nil : configuration.host
        guard (0...65535).contains(configuration.port) else {
            throw ServerStartError(description: "port \(configuration.port) is out of range")
        }
        var port = UInt16(configuration.port)
        var started: [DaemonHandle] = []
        for _ in 0..<max(1, configuration.threads) {
            // The first daemon binds the port asked for (0: a free one); the others join it.
            let daemon: OpaquePointer? = options.withUnsafeBufferPointer { items in
                let start = { (address: UnsafePointer<CChar>?) in
                    cmhd_start_daemon(flags, port, address, acceptPolicy, context, accessHandler, context, requestCompleted, context,
                                      connectionNotified, context, items.baseAddress, items.count)
                }
                return host.map { $0.withCString { start($0) } } ?? start(nil)
            }
            guard let daemon else {
                started.forEach { MHD_stop_daemon($0.pointer) }
                throw ServerStartError(description: "libmicrohttpd could not listen on \(configuration.host):\(port) (in use, or not an IPv4 address?)")
            }
            started.append(DaemonHandle(pointer: daemon))
            port = cmhd_bound_port(daemon)
        }
        daemons.withLock { $0 = started }
        startHeadSweep(timeout: .seconds(configuration.connectionTimeoutSeconds))
        return Int(port)
    }

    /// Checks four times a second, on a thread of its own, for connections whose request head is overdue.
    private func startHeadSweep(timeout: Duration) {
        headSweep.running.store(true, ordering: .releasing)
        // Captures the flag and the table, not the server, so that the server can go away.
        let (sweep, deadlines) = (headSweep, headDeadlines)
        Thread.detachNewThread {
            while sweep.running.load(ordering: .acquiring) {
                Thread.sleep(forTimeInterval: 0.25)
                deadlines.closeExpired(timeout: timeout)
            }
        }
    }

    /// Stops accepting new connections; connections already open finish their requests.
    public func quiesce() {
        daemons.withLock { handles in
            for handle in handles {
                let socket = MHD_quiesce_daemon(handle.pointer)
                if socket >= 0 { listenSockets.withLock { $0.append(socket) } }
            }
        }
        application.answerParkedRequests()
    }

    /// Waits until no request is in flight, or `timeout` passes; true when drained.
    public func waitForInFlightRequests(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while inFlight.load(ordering: .acquiring) > 0 {
            if ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return true
    }

    /// Stops the daemon and closes every connection.
    public func stop() {
        let handles = daemons.withLock { handles -> [DaemonHandle] in
            defer { handles = [] }
            return handles
        }
        // Also for a server that never started (its workers end). For one that did, no connection may be
        // left suspended when its daemon stops (libmicrohttpd aborts the process): payloads being mapped
        // are waited for (`RequestWorkers.stop`), long polls answered (`ChangeWaiters.answerAll`).
        workers.stop()
        application.answerParkedRequests()
        guard !handles.isEmpty else { return }
        // Answers given to suspended connections (long polls answered at the drain, payloads a worker
        // mapped) are written by MHD's threads once resumed: stopping the daemon first would close those
        // connections unanswered. Bounded: a client that reads nothing does not hold the exit back.
        let deadline = ContinuousClock.now + .seconds(2)
        while answersInTransit.load(ordering: .acquiring) > 0, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
        headSweep.running.store(false, ordering: .releasing)
        handles.forEach { MHD_stop_daemon($0.pointer) }
        listenSockets.withLock { sockets in
            sockets.forEach { close($0) }
            sockets = []
        }
    }

    deinit { stop() }
}

/// The head-deadline thread's run flag.
private final class HeadSweep: Sendable {
    let running = Atomic<Bool>(false)
}

/// The answer a parked request's connection is resumed with: written on a dispatch thread, read by MHD's.
private final class ParkedAnswer: Sendable {
    private let answer = Mutex<(response: HTTPResponse?, resumed: Bool)>((nil, false))
    func put(_ response: HTTPResponse) { answer.withLock { $0 = (response, true) } }
    func take() -> HTTPResponse? { answer.withLock { $0.response.take() } }
    /// Whether the connection was resumed with an answer (counted in `MicroHTTPDServer.answersInTransit`).
    var wasResumed: Bool { answer.withLock { $0.resumed } }
}

/// A connection handle that crosses to the thread resuming it. @unchecked Sendable: MHD allows
/// `MHD_resume_connection` from any thread (the daemon runs with an inter-thread channel), and the
/// connection stays valid while suspended: MHD does not time out or complete a suspended connection.
private struct SuspendedConnection: @unchecked Sendable { let pointer: OpaquePointer }

/// One request's state across MHD's calls.
private final class RequestState {
    let method: String
    let target: String
    let arrival = ContinuousClock.now
    var headers = HTTPHeaders()
    var query: [(name: String, value: String)] = []
    var body: [UInt8] = []
    /// True once a response (e.g. an early 413) has been queued.
    var answered = false
    /// Body bytes received so far; past the limit the body is discarded and 413 answered at its end.
    var receivedBytes = 0
    /// Set when the request arrived while the server was draining: it is answered 503.
    var refusal: CartographError?
    /// The answer of a request answered while its connection was suspended, set before it is resumed.
    let parkedAnswer = ParkedAnswer()
    /// What answers the request while its connection is suspended (a long poll, a large body), started
    /// on MHD's next call. libmicrohttpd 0.9.75 resumes a connection by reading it first when it was
    /// suspended while its state still said "reading" (it is not updated during the call that suspends):
    /// a client that had half-closed its side (`shutdown(SHUT_WR)`) after its request was then closed
    /// unanswered (100 of 480 such POSTs in a stress test). Returning from the request's last call
    /// without an answer lets MHD settle the state (waiting, no reading) and call again at once: a
    /// connection suspended then is resumed without a read, and its answer is written.
    var answerWhileSuspended: ((@escaping @Sendable (HTTPResponse) -> Void) -> Void)?

    init(method: String, target: String) {
        self.method = method
        self.target = target
    }
}

private func server(_ cls: UnsafeMutableRawPointer?) -> MicroHTTPDServer {
    Unmanaged<MicroHTTPDServer>.fromOpaque(cls!).takeUnretainedValue()
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadDataSize, requestContext in
    guard let connection, let requestContext, let uploadDataSize else { return .NO }
    let server = server(cls)

    guard let existing = requestContext.pointee else {
        // First call: headers only.
        server.headDeadlines.headReceived(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))))
        let state = RequestState(method: method.map { String(cString: $0) } ?? "GET", target: url.map { String(cString: $0) } ?? "/")
        let statePointer = Unmanaged.passRetained(state).toOpaque()
        requestContext.pointee = statePointer
        server.inFlight.add(1, ordering: .relaxed)
        MHD_get_connection_values(connection, .HEADER_KIND, collectHeader, statePointer)
        MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collectQueryArgument, statePointer)
        // Admission is decided once, here: a request that started before SIGTERM finishes normally.
        state.refusal = server.application.admissionError()
        let limit = server.application.configuration.maxBodyBytes
        if let length = state.headers["content-length"].flatMap(Int.init) {
            if length > limit {
                state.answered = true
                return queue(tooLarge(state, limit: limit, server: server), on: connection)
            }
            // The body is copied once instead of grown by doubling; a length only claimed (the bytes
            // never sent) reserves no more than 4 MiB.
            state.body.reserveCapacity(min(max(length, 0), 4 << 20))
        }
        return .YES
    }

    let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
    if uploadDataSize.pointee > 0 {
        let count = uploadDataSize.pointee
        uploadDataSize.pointee = 0
        if state.answered { return .YES }
        // MHD accepts a response only before the body or after it, so a streamed body over the
        // limit is discarded and answered at its end; past twice the limit the connection is dropped.
        // A body still arriving past the request time limit (a slow sender) cannot be answered
        // mid-upload either: the connection is closed (R-S2).
        if ContinuousClock.now - state.arrival > .seconds(server.application.configuration.requestTimeLimitSeconds) { return .NO }
        let limit = server.application.configuration.maxBodyBytes
        state.receivedBytes += count
        if state.receivedBytes > limit {
            state.body = []
            return state.receivedBytes > 2 * limit ? .NO : .YES
        }
        if let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
                state.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
            }
        }
        return .YES
    }
    if let parked = state.parkedAnswer.take() { return queue(parked, on: connection) }
    if let answer = state.answerWhileSuspended.take() {
        MHD_suspend_connection(connection)
        let suspended = SuspendedConnection(pointer: connection), parkedAnswer = state.parkedAnswer
        answer { response in
            server.answersInTransit.add(1, ordering: .relaxed)
            parkedAnswer.put(response)
            MHD_resume_connection(suspended.pointer)
        }
        return .YES
    }
    if state.answered { return .YES }
    state.answered = true
    if state.receivedBytes > server.application.configuration.maxBodyBytes {
        return queue(tooLarge(state, limit: server.application.configuration.maxBodyBytes, server: server), on: connection)
    }
    let request = HTTPRequest(method: state.method, path: state.target, query: state.query, headers: state.headers, body: state.body,
                              arrival: state.arrival)
    state.body = []
    if let refusal = state.refusal {
        var response = server.application.reject(request, with: refusal)
        response.headers.append(("Connection", "close"))
        return queue(response, on: connection)
    }
    let application = server.application
    if state.receivedBytes > 0 {
        let workers = server.workers
        return answerWhileSuspended(state) { answer in
            workers.submit(tenant: String(request.tenantSegment)) { application.park(application.respond(to: request), for: request, resolve: answer) }
        }
    }
    let response = application.respond(to: request)
    guard response.pending != nil else { return queue(response, on: connection) }
    // A long poll: the connection waits suspended until its answer is known.
    return answerWhileSuspended(state) { answer in application.park(response, for: request, resolve: answer) }
}

/// Answers the request with `answer` while its connection is suspended, from MHD's next call on (see
/// `RequestState.answerWhileSuspended`).
private func answerWhileSuspended(_ state: RequestState, _ answer: @escaping (@escaping @Sendable (HTTPResponse) -> Void) -> Void) -> MHD_Result {
    state.answerWhileSuspended = answer
    return .YES
}

private let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, requestContext, _ in
    // A kept-alive connection now waits for its next request's head.
    if let connection { server(cls).headDeadlines.requestCompleted(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))) }
    guard let requestContext, let pointer = requestContext.pointee else { return }
    let state = Unmanaged<RequestState>.fromOpaque(pointer)
    let bodyBytes = state.takeUnretainedValue().receivedBytes
    if state.takeUnretainedValue().parkedAnswer.wasResumed { server(cls).answersInTransit.subtract(1, ordering: .relaxed) }
    state.release()
    requestContext.pointee = nil
    server(cls).inFlight.subtract(1, ordering: .relaxed)
    server(cls).releaseMemory(afterRequestOf: bodyBytes)
}

private let connectionNotified: MHD_NotifyConnectionCallback = { cls, connection, _, code in
    guard let connection else { return }
    let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    if cmhd_connection_started(code) != 0 {
        server(cls).connections.opened(key, address: cmhd_connection_ipv4(connection))
        server(cls).headDeadlines.opened(key, socket: cmhd_connection_fd(connection))
    } else {
        server(cls).connections.closed(key)
        server(cls).headDeadlines.closed(key)
    }
}

/// Whether a connection from `address` may be accepted: under the connection limit and its address's limit,
/// counted over every daemon (a refused connection is closed unanswered).
private let acceptPolicy: MHD_AcceptPolicyCallback = { cls, address, _ in
    let configuration = server(cls).application.configuration
    return server(cls).connections.admits(cmhd_ipv4_of(address), limit: configuration.connectionLimit,
                                          perAddressLimit: configuration.perIPConnectionLimit) ? .YES : .NO
}

private let collectHeader: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let state = Unmanaged<RequestState>.fromOpaque(cls).takeUnretainedValue()
    state.headers.add(String(cString: key), value.map { String(cString: $0) } ?? "")
    return .YES
}

private let collectQueryArgument: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let state = Unmanaged<RequestState>.fromOpaque(cls).takeUnretainedValue()
    // The identity unescaper leaves arguments raw; decode them here (and keep undecodable ones as sent).
    let rawName = String(cString: key), rawValue = value.map { String(cString: $0) } ?? ""
    state.query.append((PercentDecoding.decodeQueryComponent(rawName) ?? rawName,
                        PercentDecoding.decodeQueryComponent(rawValue) ?? rawValue))
    return .YES
}

/// The 413 answer for a body over the limit, sent before the rest of the body is read; MHD then
/// closes the connection.
private func tooLarge(_ state: RequestState, limit: Int, server: MicroHTTPDServer) -> HTTPResponse {
    let request = HTTPRequest(method: state.method, path: state.target, query: state.query, headers: state.headers, arrival: state.arrival)
    var response = server.application.reject(
        request, with: CartographError(.payloadTooLarge, "The request body is larger than the limit of \(limit) bytes."))
    response.headers.append(("Connection", "close"))
    return response
}

/// A large response body handed to MHD without a copy: retained until MHD frees the response.
/// The array is never mutated while MHD holds it, so its storage stays where it is.
private final class ResponseBody {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// Bodies at least this large are handed over instead of copied (a payload's response lists every
/// top-level object: as large as a few times its body).
private let handOverBodyBytes = 64 * 1024

/// A streamed body (R-Q7) as MHD reads it: the piece being sent and how far. Retained for MHD until it frees
/// the response; read only by the connection's thread, one call at a time.
private final class StreamedBody {
    let stream: ResponseStream
    var piece: [UInt8]
    var offset = 0

    init(first piece: [UInt8], then stream: ResponseStream) {
        self.piece = piece
        self.stream = stream
    }
}

/// How much of a streamed body MHD asks for at most per call (and buffers per connection).
private let streamBlockBytes = 64 * 1024

/// Copies the next bytes of a streamed body into MHD's buffer. A piece that fails ends the answer with an
/// error: MHD closes the connection without the chunked body's last chunk, so the client sees it cut short.
private let readStreamedBody: MHD_ContentReaderCallback = { cls, _, buffer, capacity in
    guard let cls, let buffer else { return -2 }
    let body = Unmanaged<StreamedBody>.fromOpaque(cls).takeUnretainedValue()
    while body.offset == body.piece.count {
        do throws(CartographError) {
            guard let next = try body.stream.next() else { return -1 }
            body.piece = next
            body.offset = 0
        } catch {
            return -2
        }
    }
    let count = min(capacity, body.piece.count - body.offset)
    body.piece.withUnsafeBytes { bytes in
        UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + body.offset, byteCount: count)
    }
    body.offset += count
    return count
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    var body = response.body
    let mhdResponse: OpaquePointer?
    if let stream = response.stream {
        let retained = Unmanaged.passRetained(StreamedBody(first: body, then: stream)).toOpaque()
        mhdResponse = MHD_create_response_from_callback(UInt64.max, streamBlockBytes, readStreamedBody, retained) { cls in
            if let cls { Unmanaged<StreamedBody>.fromOpaque(cls).release() }
        }
        if mhdResponse == nil { Unmanaged<StreamedBody>.fromOpaque(retained).release() }
    } else if body.count >= handOverBodyBytes {
        let owner = ResponseBody(body)
        body = []
        let address = owner.bytes.withUnsafeBufferPointer { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
        let retained = Unmanaged.passRetained(owner).toOpaque()
        mhdResponse = MHD_create_response_from_buffer_with_free_callback_cls(owner.bytes.count, address, { cls in
            if let cls { Unmanaged<ResponseBody>.fromOpaque(cls).release() }
        }, retained)
        if mhdResponse == nil { Unmanaged<ResponseBody>.fromOpaque(retained).release() }
    } else {
        mhdResponse = body.withUnsafeMutableBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, bytes.baseAddress, .RESPMEM_MUST_COPY)
        }
    }
    guard let mhdResponse else { return .NO }
    for (name, value) in response.headers {
        MHD_add_response_header(mhdResponse, name, value)
    }
    let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
    MHD_destroy_response(mhdResponse)
    return result
}
