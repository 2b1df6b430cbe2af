// The archive's bodies (R-P18) are kept deflated (zlib's format): API JSON shrinks four to ten times, and
// the bytes count toward the tenant's storage quota. Compressed before the write lock is taken, and
// inflated to the size recorded beside them.
import CZlib

enum ArchiveCompression {
    /// `bytes` deflated at zlib's default level; nil when zlib fails (it does not, short of memory).
    static func deflate(_ bytes: [UInt8]) -> [UInt8]? {
        var capacity = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let rc = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &capacity, input.baseAddress, uLong(input.count), Z_DEFAULT_COMPRESSION)
            }
        }
        guard rc == Z_OK else { return nil }
        // A copy of the deflated length: the bound allocated is about the body's size, held until COMMIT.
        return Array(output[..<Int(capacity)])
    }

    /// `bytes` inflated to the `size` bytes they were deflated from; nil when they do not inflate to exactly that.
    static func inflate(_ bytes: [UInt8], size: Int) -> [UInt8]? {
        guard size >= 0 else { return nil }
        var length = uLong(size)
        var output = [UInt8](repeating: 0, count: max(size, 1))
        let rc = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                uncompress(out.baseAddress, &length, input.baseAddress, uLong(input.count))
            }
        }
        guard rc == Z_OK, Int(length) == size else { return nil }
        if size == 0 { return [] }
        return output
    }
}
