#!/usr/bin/env python3
"""The browser console (docs/console.md) in a real browser: headless Chromium driven by Selenium.

Starts the real server on a free port with a scratch data directory, loads the README walk-through's data
through the API (its shell blocks, run verbatim), then in the browser: signs in with a tenant key, opens
the model's diagram, browses, filters, sorts and pages a model's objects, opens an object and follows a
relationship, dry-runs a payload and reads its trace, watches a write made through the API arrive in the
live change feed, uses the API reference's "try it", and signs in with the admin token to list tenants.
A screenshot of each step is written to the output directory the script prints. Any error in the
browser's console (a script error, a CSP violation, a failed request) fails the run.

Usage: scripts/console-test.py path/to/cartograph [--out DIR]
"""
import argparse
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from selenium.common.exceptions import StaleElementReferenceException
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

REPO = Path(__file__).resolve().parent.parent


class Server:
    """`cartograph serve` on 127.0.0.1, port chosen by the kernel, logging to `log`."""

    def __init__(self, binary, data, log, admin_token):
        self.log = log
        environment = dict(os.environ, CARTOGRAPH_ADMIN_TOKEN=admin_token)
        self.process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", str(data)],
            stdout=open(log, "wb"), stderr=subprocess.STDOUT, env=environment)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            found = re.search(r" port=(\d+)", log.read_text(errors="replace"))
            if found:
                self.url = f"http://127.0.0.1:{found.group(1)}"
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        sys.exit(f"the server did not start:\n{log.read_text(errors='replace')}")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def call(url, method, path, token, body=None):
    """One API request; the parsed JSON answer (or None), failing the run on anything but 2xx."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{method} {path}: {error.code} {error.read().decode()}") from None
    return json.loads(text) if text else None


def status_of(url, path, token):
    request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def load_walkthrough(url, admin_token, scratch):
    """Runs the README's walk-through blocks verbatim (as scripts/walkthrough.sh does)."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("<!-- walkthrough:start -->", 1)[1].split("<!-- walkthrough:end -->", 1)[0]
    script = "\n".join(re.findall(r"```sh\n(.*?)```", section, re.S))
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=scratch, capture_output=True, text=True,
                            env=dict(os.environ, CARTOGRAPH_URL=url, ADMIN_TOKEN=admin_token), timeout=120)
    if result.returncode != 0:
        sys.exit(f"the README walk-through failed:\n{result.stdout}\n{result.stderr}")


class ConsoleTest:
    def __init__(self, driver, url, out):
        self.driver, self.url, self.out = driver, url, out
        self.steps = 0
        self.secrets = []

    def wait(self, condition, timeout=15):
        return WebDriverWait(self.driver, timeout).until(condition)

    def element(self, css, timeout=15):
        return self.wait(EC.presence_of_element_located((By.CSS_SELECTOR, css)), timeout)

    def text_in(self, css, text, timeout=15):
        try:
            self.wait(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text), timeout)
        except Exception:
            found = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, css)]
            raise AssertionError(f"{css} does not show {text!r} (shows {found!r})") from None

    def texts_are(self, css, texts, timeout=15):
        """Waits until the elements at `css` show exactly `texts` (a view re-rendered meanwhile is read again)."""
        def shown(driver):
            try:
                return [e.text for e in driver.find_elements(By.CSS_SELECTOR, css)] == texts
            except StaleElementReferenceException:
                return False
        try:
            self.wait(shown, timeout)
        except Exception:
            raise AssertionError(f"{css} does not show {texts!r}") from None

    def click(self, css):
        self.wait(EC.element_to_be_clickable((By.CSS_SELECTOR, css))).click()

    def click_link(self, text):
        self.wait(EC.element_to_be_clickable((By.LINK_TEXT, text))).click()

    def type_into(self, css, text):
        field = self.element(css)
        field.clear()
        field.send_keys(text)

    def step(self, name, focus=None, answered=()):
        """Ends a step: a screenshot (scrolled to `focus`), no error in the browser's console (but the
        browser's own note of a response whose status is in `answered`, which the step asked for), no
        secret in the address."""
        self.steps += 1
        if focus:
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", self.element(focus))
        path = self.out / f"{self.steps:02d}-{name}.png"
        self.driver.save_screenshot(str(path))
        errors = [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"
                  and not (entry.get("source") == "network" and any(f"status of {status}" in entry["message"] for status in answered))]
        assert not errors, f"browser console errors at {name}: {json.dumps(errors, indent=2)}"
        shown = self.driver.find_element(By.TAG_NAME, "body").text
        assert "[object " not in shown and "undefined" not in shown, f"a value rendered as text at {name}: {shown[:500]}"
        for secret in self.secrets:
            assert secret not in self.driver.current_url, f"a token is in the address at {name}"
        print(f"ok {self.steps:2d} {name} ({path.name})", flush=True)

    def sign_in(self, token, tenant):
        self.driver.get(self.url + "/console")
        self.type_into("#signin-token", token)
        self.type_into("#signin-tenant", tenant)
        self.click("#signin-submit")


def run(driver, server, out, admin_token, write_key):
    test = ConsoleTest(driver, server.url, out)
    test.secrets = [admin_token, write_key]
    drv = driver

    # `/` leads to the console, whose page asks for a token.
    drv.get(server.url + "/")
    test.element("#signin-token")
    assert drv.current_url.endswith("/console"), drv.current_url
    # The browser's console is read: an error written to it is seen (and read once).
    drv.execute_script("console.error('console-test probe')")
    assert any("console-test probe" in entry["message"] for entry in drv.get_log("browser")), "the browser log cannot be read"
    test.step("sign-in-page")

    # A key alone signs in: it says which tenant it belongs to (GET /v1/key).
    test.sign_in(write_key, "")
    test.text_in("#models", "comics")
    assert drv.execute_script("return sessionStorage.getItem('cartograph.tenant')") == "acme", "the key's own tenant is chosen"
    stored = drv.execute_script("return [sessionStorage.getItem('cartograph.token'), localStorage.length, document.cookie]")
    assert stored == [write_key, 0, ""], "the key is in sessionStorage only"
    test.step("signed-in-models")

    test.click_link("comics")
    test.element("#diagram a.entity[data-entity='Character']")
    diagram = test.element("#diagram").get_attribute("textContent")
    for shown in ["Publisher", "Character", "identifier: integer64", "publisher → Publisher", "characters → Character [*]"]:
        assert shown in diagram, f"the diagram lacks {shown!r}: {diagram!r}"
    assert len(drv.find_elements(By.CSS_SELECTOR, "#diagram path.edge")) == 1, "one line joins the inverse pair"
    test.text_in("#mappings", "characters")
    test.text_in("#entities span.count[data-entity='Character']", "2 objects")
    test.text_in("#entities span.count[data-entity='Publisher']", "1 object")
    test.step("model-diagram")

    test.click("#entities a[href$='/e/Character']")
    test.text_in("#total", "2 objects match.")
    test.text_in("#objects", "Spider-Man")
    test.text_in("#objects", "Iron Man")
    test.step("objects")

    test.type_into("#where", "name BEGINSWITH[c] 'spider' AND publisher.name == 'Marvel'")
    test.type_into("#orderBy", "-name")
    test.click("#apply")
    test.text_in("#total", "1 object match.")
    rows = drv.find_elements(By.CSS_SELECTOR, "#objects tr")
    assert len(rows) == 2 and "Spider-Man" in rows[1].text and "Iron Man" not in test.element("#objects").text, rows[1].text
    # R-Q7: the filter's matches, downloaded as one CSV answer (one object: the filter went with it).
    test.click("#download-csv")
    test.text_in("#download-status", "Saved Character.csv: 1 object.")
    test.step("filtered-by-predicate")

    # A bad predicate is answered under the form, which keeps what was typed; SQL's LIKE wildcards get a note.
    test.type_into("#where", "name ==")
    test.click("#apply")
    test.text_in("#filter-problem", "400")
    assert test.element("#where").get_attribute("value") == "name ==", "the typed predicate is kept"
    test.type_into("#where", "name LIKE 'Spider%'")
    test.click("#apply")
    test.text_in("p.warning", "'Spider*'")
    test.step("bad-predicate-kept", answered=(400,))

    # A column's header orders by it, ascending, then descending.
    test.type_into("#where", "")
    test.type_into("#orderBy", "")
    test.click("#apply")
    test.text_in("#total", "2 objects match.")
    test.click("#objects a.sort[data-sort='name']")
    test.texts_are("#objects tr td:nth-child(3)", ["Iron Man", "Spider-Man"])
    test.text_in("#objects a.sort[data-sort='name']", "▲")
    test.click("#objects a.sort[data-sort='name']")
    test.texts_are("#objects tr td:nth-child(3)", ["Spider-Man", "Iron Man"])
    test.text_in("#objects a.sort[data-sort='name']", "▼")
    test.step("sorted-by-header")

    # Facets (R-Q8): each value of a key path with its count over every match; a value narrows the filter to it.
    test.type_into("#facets", "name, publisher.name")
    test.click("#apply")
    test.text_in("#facets section[data-facet='publisher.name']", "Marvel 2")
    test.text_in("#facets section[data-facet='name']", "Spider-Man 1")
    test.click_link("Spider-Man")
    test.text_in("#total", "1 object match.")
    assert test.element("#where").get_attribute("value") == 'name == "Spider-Man"', test.element("#where").get_attribute("value")
    test.text_in("#facets section[data-facet='publisher.name']", "Marvel 1")
    test.step("faceted")
    test.type_into("#facets", "")

    # Group by (R-Q9): each group's count and aggregates over every match of the filter, the largest first.
    test.type_into("#where", "")
    test.click("#apply")
    test.text_in("#total", "2 objects match.")
    test.type_into("#group-by", "publisher.name")
    test.type_into("#group-aggregates", "sum:identifier, max:identifier")
    test.click("#group")
    test.texts_are("#groups tr.group td", ["Marvel", "2", str(1699 + 1455), "1699"])
    # The filter applies: Iron Man (1455) alone.
    test.type_into("#where", "identifier < 1600")
    test.click("#apply")
    test.text_in("#total", "1 object match.")
    test.texts_are("#groups tr.group td", ["Marvel", "1", "1455", "1455"])
    assert test.element("#group-by").get_attribute("value") == "publisher.name"
    test.step("grouped", focus="#groups")
    # One group of two asked: the first by count then name, and a note that more were left out.
    test.type_into("#where", "")
    test.click("#apply")
    test.text_in("#total", "2 objects match.")
    test.type_into("#group-by", "name")
    test.type_into("#group-aggregates", "")
    test.type_into("#group-limit", "1")
    test.click("#group")
    test.texts_are("#groups tr.group td", ["Iron Man", "1"])
    test.text_in("#more-groups", "More groups not shown")
    # A refused grouping is shown under its form, which keeps what was typed.
    test.type_into("#group-aggregates", "sum:name")
    test.click("#group")
    test.text_in("#group-problem", "400")
    assert test.element("#group-aggregates").get_attribute("value") == "sum:name", "the typed aggregate is kept"
    test.element("#objects")
    test.step("grouped-refused", focus="#group-problem", answered=(400,))
    for field in ("#group-by", "#group-aggregates", "#group-limit"):
        test.type_into(field, "")
    test.click("#group")
    test.text_in("#total", "2 objects match.")

    # A searchable attribute brings a search box (R-Q6): matches by rank, the matched words marked.
    model = call(server.url, "GET", "/v1/tenants/acme/models/comics", admin_token)
    for entity in model["entities"]:
        for attribute in entity["attributes"]:
            if entity["name"] == "Character" and attribute["name"] == "name":
                attribute["searchable"] = True
    call(server.url, "PUT", "/v1/tenants/acme/models/comics", admin_token, model)
    drv.refresh()
    test.type_into("#search", "spider")
    test.click("#apply")
    test.text_in("#total", "1 object match.")
    test.text_in("#objects td.snippet mark", "Spider")
    assert "Iron Man" not in test.element("#objects").text
    # The groups follow the search too: Spider-Man alone.
    test.type_into("#group-by", "publisher.name")
    test.click("#group")
    test.texts_are("#groups tr.group td", ["Marvel", "1"])
    test.step("searched")
    test.type_into("#search", "")
    test.type_into("#group-by", "")

    # Sorted by name, one per page: Iron Man, then (following the cursor) Spider-Man.
    test.type_into("#where", "")
    test.type_into("#orderBy", "name")
    test.type_into("#limit", "1")
    test.click("#apply")
    test.text_in("#objects", "Iron Man")
    test.click("#next-page")
    test.text_in("#objects", "Spider-Man")
    assert "Iron Man" not in test.element("#objects").text
    assert "cursor=" in drv.current_url
    test.element("#first-page")
    test.step("sorted-second-page")

    test.click("#objects a.object-link")
    test.text_in("#object tr[data-attribute='name']", "Spider-Man")
    test.text_in("#object tr[data-relationship='publisher']", "10")
    test.step("object")

    test.click("#object tr[data-relationship='publisher'] a")
    test.text_in("#object tr[data-attribute='name']", "Marvel")
    test.text_in("h1", "Publisher 10")
    characters = test.element("#object tr[data-relationship='characters']").text
    assert "1699" in characters and "1455" in characters, characters
    test.step("followed-relationship")

    # A dry run with the trace: what would happen, object by object, and nothing stored.
    drv.get(server.url + "/console#/t/acme/m/comics")
    test.click("#mappings a")
    test.text_in("#mapping-document", '"keyPath": "results"')
    test.element("#mapping-drift")  # what committed payloads drifted (R-P17), or the note that none did
    payload = {"results": [{"id": 2001, "name": "Hulk", "powers": "smash", "publisher": {"id": 10, "name": "Marvel"}},
                           {"id": 1699, "name": "Spider-Man", "publisher": {"id": 10, "name": "Marvel"}}]}
    test.element("#payload").send_keys(json.dumps(payload))
    test.click("#dry-run")
    test.text_in("#dry-run-counts", "Dry run: nothing was stored.")
    test.text_in("#dry-run-counts", "1 inserted")
    test.text_in("#trace", "2001")
    test.text_in("#dry-run-drift", "/results/*/powers")
    # A row per object, in payload order: the new character inserted, its publisher and Spider-Man unchanged.
    trace = [row.text for row in drv.find_elements(By.CSS_SELECTOR, "#trace tr")[1:]]
    expected = [("/results/0", "Character", "2001", "insert"), ("/results/0/publisher", "Publisher", "10", "unchanged"),
                ("/results/1", "Character", "1699", "unchanged")]
    assert len(trace) == len(expected) and all(all(part in row.split() for part in parts) for row, parts in zip(trace, expected)), trace
    assert status_of(server.url, "/v1/tenants/acme/models/comics/entities/Character/objects/2001", admin_token) == 404
    test.step("dry-run-trace", focus="#trace")

    # A mapping that keeps a cursor (R-P16) shows where a fetcher resumes.
    call(server.url, "PUT", "/v1/tenants/acme/models/comics/mappings/by-id", admin_token,
         {"entity": "Character", "keyPath": "results", "attributes": {"id": "identifier", "name": "name"}, "cursor": "identifier",
          "archive": {"days": 7}, "discardsInvalidObjectsOnInsert": True})
    call(server.url, "POST", "/v1/tenants/acme/models/comics/mappings/by-id/payloads", write_key,
         {"results": [{"id": 1699, "name": "Spider-Man"}, {"id": 1455, "name": "Ant-Man"}, {"id": "x"}]})
    drv.get(server.url + "/console#/t/acme/m/comics/map/by-id")
    test.text_in("#mapping-cursor", "1699")
    test.step("mapping-cursor", focus="#mapping-cursor")

    # The archive (R-P18): the payload kept, its discarded object a dead letter, a dry-run replay that changes nothing.
    test.text_in("#mapping-archive", "1")
    test.text_in("#dead-letters", "/results/2")
    test.click("#replay-dry-run")
    test.text_in("#replay", "unchanged")
    cells = [c.text for c in drv.find_elements(By.CSS_SELECTOR, "#replay tr:nth-child(2) td")]
    assert cells[1:5] == ["0", "0", "2", "0"], cells
    test.step("mapping-archive", focus="#mapping-archive")

    # The feed: caught up, then a write made through the API arrives through the long poll.
    drv.get(server.url + "/console#/t/acme/m/comics")
    test.click("#follow-changes")
    test.text_in("#feed-state", "Following live")
    test.text_in("#feed", "Character 1699")
    before = len(drv.find_elements(By.CSS_SELECTOR, "#feed li"))
    time.sleep(0.5)  # the console is now parked in its long poll (wait=30)
    call(server.url, "POST", "/v1/tenants/acme/models/comics/mappings/characters/payloads", write_key,
         {"results": [{"id": 2002, "name": "Thor", "publisher": {"id": 10, "name": "Marvel"}}]})
    test.text_in("#feed li:first-child", "Character 2002", timeout=10)
    test.text_in("#feed li:first-child", "Thor")
    assert len(drv.find_elements(By.CSS_SELECTOR, "#feed li")) == before + 1
    test.step("live-change-feed")

    # The API reference, rendered from the served openapi.yaml, and its "try it" with the session's key.
    test.click("#nav-reference")
    test.element("#op-listObjects")
    test.text_in("#op-getConsole summary", "/console")
    # Descriptions read as prose: `code` as code, no rule ids of the design in parentheses.
    described = " ".join(e.get_attribute("textContent") for e in drv.find_elements(By.CSS_SELECTOR, ".description"))
    assert "`" not in described, "a description shows raw backticks"
    assert not re.search(r"\(R-[A-Z]{1,2}\d+", described), re.findall(r".{0,40}\(R-[A-Z]{1,2}\d+.{0,30}", described)[:3]
    assert len(drv.find_elements(By.CSS_SELECTOR, ".description code")) > 50, "code spans are rendered as code"
    test.click("#op-listModels summary")
    assert test.element("#op-listModels input[name='tenant']").get_attribute("value") == "acme"
    test.click("#op-listModels button.send")
    test.text_in("#op-listModels .status", "200")
    test.text_in("#op-listModels pre.response", '"name": "comics"')
    test.step("api-reference-try-it", focus="#op-listModels .try-result")

    # The admin token: every tenant.
    test.click("#sign-out")
    test.element("#signin-token")
    assert drv.execute_script("return sessionStorage.length") == 0, "signing out forgets the key"
    # A webhook (docs/webhooks.md), which the admin token's tenant page lists (R-W1).
    call(server.url, "PUT", "/v1/tenants/acme/webhooks/mirror", admin_token,
         {"url": "https://hooks.example.invalid/cartograph", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
          "models": [{"name": "comics", "entities": ["Character"]}]})
    test.sign_in(admin_token, "")
    test.text_in("#tenants", "acme")
    test.click_link("acme")
    test.text_in("#models", "comics")
    test.text_in("#webhooks", "mirror")
    test.text_in("#webhooks", "comics (Character)")
    test.step("admin-tenants")
    return test.steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--out", default=str(REPO / ".build" / "console-test"), help="where screenshots and the server log go")
    arguments = parser.parse_args()
    out = Path(arguments.out).resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    print(f"console test: screenshots and logs in {out}", flush=True)

    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="cartograph-console-"))
    admin_token = secrets.token_hex(24)
    server = Server(str(Path(arguments.binary).resolve()), scratch / "data", out / "server.log", admin_token)
    driver = None
    try:
        load_walkthrough(server.url, admin_token, scratch)
        write_key = call(server.url, "POST", "/v1/tenants/acme/keys", admin_token, {"scope": "write"})["apiKey"]

        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000",
                     "--no-first-run", "--disable-extensions"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
        steps = run(driver, server, out, admin_token, write_key)
    except Exception as error:
        if driver:
            driver.save_screenshot(str(out / "failure.png"))
            (out / "failure.html").write_text(driver.page_source)
        print(f"console test FAILED: {type(error).__name__}: {error}", file=sys.stderr)
        print(f"screenshots, the page and the server log are in {out}", file=sys.stderr)
        return 1
    finally:
        if driver:
            driver.quit()
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    log = (out / "server.log").read_text(errors="replace")
    for secret in [admin_token, write_key]:
        if secret in log or secret.split("_")[-1] in log:
            print("console test FAILED: a token is in the server log", file=sys.stderr)
            return 1
    print(f"console test: {steps} steps passed in {time.monotonic() - started:.1f} s; screenshots in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
