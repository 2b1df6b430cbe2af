// A swift-log handler that formats each line once and writes lines in batches: a request log line
// per request must not cost a write(2) on stderr under a global lock (it cost 4x throughput).
// Lines at notice and above are written at once; the rest within `flushInterval`, or as soon as
// 64 KiB are waiting. `flush()` runs at shutdown, so a clean exit loses nothing.
import Foundation
import Logging
import Synchronization
import CartographCore

/// Formats log lines as text (`key=value`) or JSON lines, into a shared batch buffer.
struct BufferedLogHandler: LogHandler {
    enum Format: String, CaseIterable {
        case text, json
    }

    /// The buffer every handler of the process writes into.
    final class Sink: Sendable {
        private let pending = Mutex<[UInt8]>([])
        private let descriptor: Int32
        static let flushThreshold = 64 * 1024

        init(descriptor: Int32 = STDERR_FILENO, flushInterval: Duration = .milliseconds(200)) {
            self.descriptor = descriptor
            let thread = Thread { [weak self] in
                while let sink = self {
                    Thread.sleep(forTimeInterval: Double(flushInterval.components.attoseconds) / 1e18)
                    sink.flush()
                }
            }
            thread.name = "log-flush"
            thread.start()
        }

        func append(_ line: [UInt8], urgent: Bool) {
            let full = pending.withLock { buffer in
                buffer.append(contentsOf: line)
                return buffer.count >= Self.flushThreshold
            }
            if urgent || full { flush() }
        }

        /// Writes everything pending.
        func flush() {
            let bytes = pending.withLock { buffer -> [UInt8] in
                defer { buffer.removeAll(keepingCapacity: true) }
                return buffer
            }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    let label: String
    let sink: Sink
    let format: Format
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        switch format {
        case .text:
            Self.appendTimestamp(to: &line)
            line.append(UInt8(ascii: " "))
            line += event.level.rawValue.utf8
            line.append(UInt8(ascii: " "))
            line += label.utf8
            line.append(UInt8(ascii: ":"))
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
                line.append(UInt8(ascii: " "))
                line += key.utf8
                line.append(UInt8(ascii: "="))
                Self.appendTextValue(value.description, to: &line)
            }
            line.append(UInt8(ascii: " "))
            line += event.message.description.utf8
        case .json:
            line += #"{"ts":""#.utf8
            Self.appendTimestamp(to: &line)
            line += #"","level":""#.utf8
            line += event.level.rawValue.utf8
            line += #"","label":"#.utf8
            JSONWriter.writeString(label, into: &line)
            line += #","msg":"#.utf8
            JSONWriter.writeString(event.message.description, into: &line)
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
                line.append(UInt8(ascii: ","))
                JSONWriter.writeString(key, into: &line)
                line.append(UInt8(ascii: ":"))
                JSONWriter.writeString(value.description, into: &line)
            }
            line.append(UInt8(ascii: "}"))
        }
        line.append(UInt8(ascii: "\n"))
        sink.append(line, urgent: event.level >= .notice)
    }

    /// Appends a text-format value as logfmt does: as it is, or in double quotes (with `\"`, `\\` and
    /// `\n`-style escapes) when it is empty or holds a space, a quote, an `=` or a control character, so
    /// that a problem's detail stays one value and a line stays one line.
    static func appendTextValue(_ value: String, to line: inout [UInt8]) {
        let plain = !value.isEmpty && value.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "=") }
        guard !plain else { line += value.utf8; return }
        line.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): line += [UInt8(ascii: "\\"), byte]
            case 0x0A: line += Array("\\n".utf8)
            case 0x0D: line += Array("\\r".utf8)
            case 0x09: line += Array("\\t".utf8)
            case ..<0x20, 0x7F: line += Array(String(format: "\\u%04x", byte).utf8)
            default: line.append(byte)
            }
        }
        line.append(UInt8(ascii: "\""))
    }

    /// Appends `2026-11-21T14:49:00.123Z` (UTC).
    static func appendTimestamp(to line: inout [UInt8]) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var parts = tm()
        var seconds = spec.tv_sec
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var remaining = value
            while divisor > 0 {
                line.append(UInt8(ascii: "0") + UInt8(remaining / divisor % 10))
                remaining %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); line.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2); line.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); line.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2); line.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); line.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2); line.append(UInt8(ascii: "."))
        digits(Int(spec.tv_nsec / 1_000_000), 3); line.append(UInt8(ascii: "Z"))
    }
}
