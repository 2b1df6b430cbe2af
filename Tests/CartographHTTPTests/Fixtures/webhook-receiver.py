#!/usr/bin/env python3
"""A webhook receiver for WebhookLiveTests (R-W2, R-W3): verifies every delivery's Standard Webhooks
signature with Python's own hmac (not the server's code), and records each request as a JSON line.

Usage: webhook-receiver.py SECRET STATE_DIR
  STATE_DIR/port        written once listening (127.0.0.1, an ephemeral port)
  STATE_DIR/mode        read at each request: "ok" (default) answers 204, "fail" 500, "redirect" 302,
                        "slow" 204 after 3 seconds (recorded as "late")
  STATE_DIR/received.jsonl   one line per request: {"id", "timestamp", "valid", "answered", "body"}
"""
import base64
import hashlib
import hmac
import http.server
import json
import os
import sys
import threading
import time

SECRET, STATE = sys.argv[1], sys.argv[2]
KEY = base64.b64decode(SECRET[len("whsec_"):])
LOCK = threading.Lock()


def valid_signature(msg_id, timestamp, body, header):
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(KEY, signed, hashlib.sha256).digest()).decode()
    # The header may list several space-separated signatures (key rotation); any may match.
    for candidate in header.split(" "):
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        msg_id = self.headers.get("webhook-id", "")
        timestamp = self.headers.get("webhook-timestamp", "")
        signature = self.headers.get("webhook-signature", "")
        valid = bool(msg_id) and timestamp.isdigit() and abs(time.time() - int(timestamp)) < 300 \
            and valid_signature(msg_id, timestamp, body, signature)
        try:
            with open(os.path.join(STATE, "mode")) as f:
                mode = f.read().strip()
        except FileNotFoundError:
            mode = "ok"
        status = 401 if not valid else {"fail": 500, "redirect": 302}.get(mode, 204)
        if mode == "slow":
            time.sleep(3)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        with LOCK:
            with open(os.path.join(STATE, "received.jsonl"), "a") as f:
                # A slow answer is recorded as "late": the server gave up on it before it came.
                answered = "late" if mode == "slow" else status
                f.write(json.dumps({"id": msg_id, "timestamp": timestamp, "valid": valid, "answered": answered, "body": parsed}) + "\n")
        self.send_response(status)
        if status == 302:
            self.send_header("Location", "http://127.0.0.1:9/elsewhere")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(STATE, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(STATE, "port.tmp"), os.path.join(STATE, "port"))
server.serve_forever()
