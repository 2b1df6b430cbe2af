"""The drill's tenants and writers: each tenant has a `notes` model; a writer per tenant posts one
note at a time through the router and remembers which ids were acknowledged, and when."""
import threading
import time

from client import Client

MODEL = {"entities": [{"name": "Note", "attributes": [{"name": "identifier", "type": "integer64"},
                                                      {"name": "text", "type": "string"}]}]}
MAPPING = {"entity": "Note", "keyPath": "notes", "attributes": {"id": "identifier", "text": "text"}}
NOTES = "/v1/tenants/{tenant}/models/notes"


def create_tenant(url, admin_token, tenant):
    """Creates the tenant through the router (PUT: routed by its id) with the notes model and mapping;
    returns the tenant's admin key."""
    client = Client(url, admin_token)
    created = client.send("PUT", f"/v1/tenants/{tenant}")
    if created.status != 201:
        raise RuntimeError(f"PUT /v1/tenants/{tenant}: {created.status} {created.body[:200]!r}")
    key = created.json()["apiKey"]
    base = NOTES.format(tenant=tenant)
    for path, document in ((base, MODEL), (base + "/mappings/notes", MAPPING)):
        answer = client.send("PUT", path, document, token=key)
        if answer.status != 201:
            raise RuntimeError(f"PUT {path}: {answer.status} {answer.body[:200]!r}")
    return key


def stored_ids(url, key, tenant):
    """Every note id the tenant's node has, read page by page."""
    client = Client(url, key)
    ids, cursor = set(), None
    while True:
        path = NOTES.format(tenant=tenant) + "/entities/Note/objects?limit=1000" + (f"&cursor={cursor}" if cursor else "")
        answer = client.send("GET", path)
        if answer.status != 200:
            raise RuntimeError(f"GET {path}: {answer.status} {answer.body[:200]!r}")
        page = answer.json()
        ids.update(item["identifier"] for item in page["items"])
        cursor = page.get("next")
        if not cursor:
            return ids


class Writer(threading.Thread):
    """Posts notes 1, 2, 3… for one tenant until stopped. A failed post is not retried (its id is simply
    not acknowledged); a 503 with Retry-After (a paused tenant) is retried after the delay."""

    def __init__(self, url, key, tenant, pause=0.0):
        super().__init__(daemon=True)
        self.client = Client(url, key, timeout=10)
        self.key = key
        self.tenant = tenant
        self.path = NOTES.format(tenant=tenant) + "/mappings/notes/payloads"
        self.pause = pause
        self.acknowledged = {}  # id -> monotonic time of the 200
        self.lost = set()       # acknowledged ids a failover lost (the drill's accounting)
        self.failures = []      # (monotonic time, status or error)
        self.retried = 0
        self.stopping = threading.Event()
        self.next_id = 1

    def run(self):
        while not self.stopping.is_set():
            note = self.next_id
            self.next_id += 1
            while True:
                try:
                    answer = self.client.send("POST", self.path, {"notes": [{"id": note, "text": f"note {note}"}]},
                                              headers={"Idempotency-Key": f"note-{note}"})
                    status = answer.status
                except OSError as error:
                    answer, status = None, type(error).__name__
                if status == 503 and answer.header("retry-after") and not self.stopping.is_set():
                    self.retried += 1
                    time.sleep(float(answer.header("retry-after")) / 4)
                    continue
                break
            if status == 200:
                self.acknowledged[note] = time.monotonic()
            else:
                self.failures.append((time.monotonic(), status))
                time.sleep(0.05)
            if self.pause:
                time.sleep(self.pause)

    def stop(self):
        self.stopping.set()
        self.join(30)
