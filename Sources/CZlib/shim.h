// One call around zlib's deflate, so that Swift need not manage a z_stream: gzip-wraps `input` into
// `output` (capacity from czlib_gzip_bound). Imported by CartographHTTP; CartographStore calls zlib's own
// compress2/uncompress through it for the archive's bodies (R-P18).
#ifndef CARTOGRAPH_CZLIB_SHIM_H
#define CARTOGRAPH_CZLIB_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

/// The most bytes `czlib_gzip` writes for `length` input bytes (deflate's bound plus the gzip wrapper).
static inline size_t czlib_gzip_bound(size_t length) {
    return (size_t)compressBound((uLong)length) + 18;
}

/// Compresses `input` as one gzip member at `level` (1 fastest … 9 smallest); returns the bytes
/// written, or 0 on failure.
static inline size_t czlib_gzip(const uint8_t *input, size_t length, uint8_t *output, size_t capacity, int level) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
    if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)length;
    stream.next_out = output;
    stream.avail_out = (uInt)capacity;
    int rc = deflate(&stream, Z_FINISH);
    size_t written = stream.total_out;
    deflateEnd(&stream);
    return rc == Z_STREAM_END ? written : 0;
}

#endif
