"""A small HTTP/1.1 JSON client over one keep-alive connection (the standard library only)."""
import http.client
import json


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body) if self.body else None

    def header(self, name):
        return self.headers.get(name.lower())


class Client:
    """One connection to `host:port`, reopened after an error; `send` never raises for an HTTP status."""

    def __init__(self, url, token=None, timeout=30):
        hostport = url.split("://", 1)[-1].rstrip("/")
        self.host, _, port = hostport.partition(":")
        self.port = int(port or 80)
        self.token = token
        self.timeout = timeout
        self.connection = None

    def send(self, method, path, body=None, token=None, headers=None):
        """Returns a Response, or raises OSError/http.client.HTTPException when no answer came."""
        all_headers = dict(headers or {})
        token = token or self.token
        if token:
            all_headers["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        reused = self.connection is not None
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            self.connection.request(method, path, body=data, headers=all_headers)
            answer = self.connection.getresponse()
            payload = answer.read()
        except (OSError, http.client.HTTPException) as error:
            self.close()
            # A kept-alive connection the server closed meanwhile (nginx reloading, a node's idle
            # timeout): the request never reached it. Sent again only when that is safe.
            stale = isinstance(error, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError))
            if reused and stale and (method in ("GET", "PUT", "DELETE") or "Idempotency-Key" in all_headers):
                return self.send(method, path, body, token, headers)
            raise
        response = Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, payload)
        if response.header("connection") == "close":
            self.close()
        return response

    def __del__(self):
        self.close()

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None
