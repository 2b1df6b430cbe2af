// Sends one signed delivery and waits for its answer (R-W4): a POST through URLSession that follows no
// redirect (a 3xx is a failed delivery: a receiver cannot send it elsewhere, to an address the policy
// would refuse) and ends after the configured time, connecting and a slow answer included.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The outcome of one POST: the receiver's status, or why there was none.
struct WebhookSendResult: Sendable {
    let status: Int?
    let error: String?
}

final class WebhookSender: NSObject, URLSessionTaskDelegate, Sendable {
    private let timeout: Duration
    /// Set once, right after init (the session retains its delegate, so it cannot be made before `self`).
    private let sessionBox = Mutex<URLSession?>(nil)

    init(timeout: Duration) {
        self.timeout = timeout
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        sessionBox.withLock { $0 = session }
    }

    /// POSTs `body` with `headers` and waits (on the calling thread, a delivery worker's) for the answer.
    func post(_ url: URL, body: [UInt8], headers: [(String, String)]) -> WebhookSendResult {
        guard let session = sessionBox.withLock({ $0 }) else { return WebhookSendResult(status: nil, error: "the server is stopping") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Cartograph-Webhooks", forHTTPHeaderField: "User-Agent")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<WebhookSendResult?>(nil)
        let task = session.dataTask(with: request) { _, response, error in
            let outcome: WebhookSendResult
            if let http = response as? HTTPURLResponse {
                outcome = WebhookSendResult(status: http.statusCode, error: nil)
            } else {
                outcome = WebhookSendResult(status: nil, error: error.map { "no answer: \($0.localizedDescription)" } ?? "no answer")
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        task.resume()
        // URLSession's own timeouts end the task; this bound is in case one does not.
        if done.wait(timeout: .now() + .milliseconds(Int(timeout.components.seconds) * 1000 + 2000)) == .timedOut {
            task.cancel()
            return WebhookSendResult(status: nil, error: "no answer within \(timeout)")
        }
        return result.withLock { $0 } ?? WebhookSendResult(status: nil, error: "no answer")
    }

    /// Ends every delivery under way (the server stops).
    func close() {
        sessionBox.withLock { session in
            session?.invalidateAndCancel()
            session = nil
        }
    }

    /// Redirects are not followed: the 3xx itself is the answer.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
