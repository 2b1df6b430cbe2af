// Lists, queries and the change feed in CSV and NDJSON (R-Q7, docs/queries.md#formats). A list's answer is
// streamed: its first chunk is read before anything is sent (so a bad query is a problem, as in JSON), the
// rest one chunk of at most `streamChunk` objects at a time as the client reads, each chunk in a snapshot of
// its own resumed from the last one's keyset cursor, as a client paging would. A `limit` up to one chunk is a
// page with its next cursor in the headers; a larger `limit` streams that many objects (the whole set when
// it has fewer), and has no next cursor: the headers are sent before the last object is known.
import Foundation
import CartographCore
import CartographStore

extension ModelRoutes {
    /// The objects read (and held) at a time while a list streams: a JSON page's largest.
    static let streamChunk = 1000

    /// A list's or query's answer in CSV or NDJSON: `head` (the header row), then each object as `renderer`
    /// writes it followed by `lineEnd`.
    func streamedPage<Renderer: ObjectRenderer & Sendable>(_ context: RequestContext, _ query: ObjectQuery, store: ModelStore, format: ResponseFormat,
                                                renderer: Renderer, head: [UInt8], lineEnd: [UInt8]) throws(CartographError) -> HTTPResponse {
        guard query.limit >= 1 else { throw Self.invalid("/limit", "must be at least 1") }
        guard !query.explain else { throw Self.invalid("/explain", "a query plan is answered in application/json only") }
        guard query.facets.isEmpty else { throw Self.invalid("/facets", "facets are answered in application/json only") }
        // Each later chunk gets the request's time limit anew: the client, not the server, sets the pace.
        let timeLimit = RequestDeadline.current?.limit
        func read(_ chunk: ObjectQuery) throws(CartographError) -> ObjectPage {
            let result = RequestDeadline.$current.withValue(timeLimit.map { RequestDeadline(limit: $0) }) { () -> Result<ObjectPage, CartographError> in
                do throws(CartographError) {
                    return .success(try store.read { (reader) throws(CartographError) in try reader.page(chunk, renderer: renderer) })
                } catch { return .failure(error) }
            }
            return try result.get()
        }
        func lines(_ items: [RenderedJSON]) -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(items.reduce(0) { $0 + $1.bytes.count + lineEnd.count })
            for item in items { bytes += item.bytes; bytes += lineEnd }
            return bytes
        }
        var chunk = query
        chunk.limit = min(query.limit, Self.streamChunk)
        let first = try read(chunk)
        indexAdvisor.note(first, query: chunk, tenant: context.parameter("tenant"), model: store.name)
        var headers = [("Content-Type", format.contentType), ("Vary", "Accept")]
        if let total = first.total { headers.append(("Cartograph-Total", String(total))) }
        if query.limit <= Self.streamChunk, let next = first.next {
            headers.append(("Cartograph-Next-Cursor", next))
            if context.request.method == "GET" {
                headers.append(("Link", "<\(Self.target(of: context.request, replacing: "cursor", with: next))>; rel=\"next\""))
            }
        }
        var ready: [UInt8]? = head + lines(first.items)
        var next = first.next
        var remaining = query.limit - first.items.count
        chunk.count = false
        var response = HTTPResponse(status: 200, headers: headers)
        response.stream = ResponseStream { () throws(CartographError) -> [UInt8]? in
            if let bytes = ready.take() { return bytes }
            guard remaining > 0, let cursor = next else { return nil }
            chunk.cursor = cursor
            chunk.limit = min(remaining, Self.streamChunk)
            let page = try read(chunk)
            next = page.next
            remaining -= page.items.count
            return lines(page.items)
        }
        return response
    }

    /// A change-feed page in CSV or NDJSON, with its position in the headers (R-Q7, docs/change-feed.md#formats).
    static func changes(_ page: ChangeFeedPage, epoch: String, format: ResponseFormat, request: HTTPRequest) -> HTTPResponse {
        var body: [UInt8] = []
        switch format {
        case .json: return .json(page.document(epoch: epoch))
        case .csv: body = page.csv()
        case .ndjson: body = page.ndjson()
        }
        return HTTPResponse(status: 200, headers: [
            ("Content-Type", format.contentType), ("Vary", "Accept"), ("Cartograph-Epoch", epoch), ("Cartograph-Next-Since", String(page.next)),
            ("Link", "<\(target(of: request, replacing: "since", with: String(page.next)))>; rel=\"next\""),
        ], body: body)
    }

    /// `request`'s path and query with parameter `name` set to `value` (percent-encoded): a `Link` target.
    static func target(of request: HTTPRequest, replacing name: String, with value: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+;")
        func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text }
        let pairs = request.query.filter { $0.name != name } + [(name: name, value: value)]
        return request.path + "?" + pairs.map { encoded($0.name) + "=" + encoded($0.value) }.joined(separator: "&")
    }
}
