"""nginx's `hash ... consistent` ring (ngx_http_upstream_hash_module), computed the same way, so that
scripts know which node a tenant lives on without asking nginx: each server gets 160 points (weight 1)
on a CRC32 circle, seeded by its address as written in the configuration; a key goes to the first
point at or after CRC32(key), wrapping around."""
import bisect
import struct
import zlib


def _host_and_port(server):
    """Splits `host:port` the way nginx does before hashing (a trailing run of digits after ':')."""
    if server[:5].lower() == "unix:":
        return server[5:], ""
    digits = 0
    for c in reversed(server):
        if c == ":":
            return server[: len(server) - digits - 1], server[len(server) - digits:]
        if not c.isdigit():
            break
        digits += 1
    return server, ""


class Ring:
    POINTS_PER_WEIGHT = 160

    def __init__(self, servers):
        """`servers`: the upstream's server addresses exactly as written in nginx.conf (weight 1 each)."""
        self.servers = list(servers)
        points = {}
        for server in self.servers:
            host, port = _host_and_port(server)
            base = host.encode() + b"\0" + port.encode()
            previous = 0
            for _ in range(self.POINTS_PER_WEIGHT):
                value = zlib.crc32(base + struct.pack("<I", previous))
                # nginx keeps the first server of two with the same point (sorted, then deduplicated).
                points.setdefault(value, server)
                previous = value
        self.hashes = sorted(points)
        self.owners = [points[h] for h in self.hashes]

    def node(self, key):
        """The server address `key` (a tenant id) goes to."""
        index = bisect.bisect_left(self.hashes, zlib.crc32(key.encode()))
        return self.owners[index % len(self.owners)]
