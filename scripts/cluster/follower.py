"""A change-feed follower as docs/change-feed.md describes one: it mirrors a tenant's notes by paging the
notes model's feed through the router from its position, with the epoch saved beside it; a page with
another epoch makes it drop its copy and start again from 0 (R-D7)."""
from client import Client
from workload import NOTES


class FollowerStuck(RuntimeError):
    """The feed refused the follower's position (a `since` beyond the head: the store went back)."""


class Follower:
    def __init__(self, url, key, tenant):
        self.client = Client(url, key, timeout=30)
        self.tenant = tenant
        self.path = NOTES.format(tenant=tenant) + "/changes"
        self.epoch = None
        self.since = 0
        self.notes = {}  # the feed's key of each note -> its id
        self.started_over = 0  # how many times a new epoch made it start again from 0

    def catch_up(self):
        """Pages until the head. Raises FollowerStuck when the feed answers anything but a page."""
        while True:
            answer = self.client.send("GET", f"{self.path}?since={self.since}&limit=1000")
            if answer.status != 200:
                raise FollowerStuck(f"{self.tenant}: GET changes?since={self.since} (epoch {self.epoch}): "
                                    f"{answer.status} {answer.body[:200]!r}")
            page = answer.json()
            if self.epoch is not None and page["epoch"] != self.epoch:
                self.epoch, self.since, self.notes = page["epoch"], 0, {}
                self.started_over += 1
                continue
            self.epoch = page["epoch"]
            for change in page["changes"]:
                if change["op"] == "delete":
                    self.notes.pop(change["key"], None)
                else:
                    self.notes[change["key"]] = change["object"]["identifier"]
            if page["next"] == self.since:
                return
            self.since = page["next"]

    @property
    def ids(self):
        """The ids of the notes the follower holds."""
        return set(self.notes.values())
