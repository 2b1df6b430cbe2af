// The libFuzzer entry point of the `coredata` target (ModelDocument.parse(coreDataXML:name:)): scripts/fuzz.sh coredata builds it with
// -sanitize=fuzzer,address. A broken property traps, so libFuzzer keeps the input (docs/fuzzing.md).
import CartographFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do { try FuzzTarget.coredata.check(input) } catch { fatalError(error.description) }
    return 0
}
