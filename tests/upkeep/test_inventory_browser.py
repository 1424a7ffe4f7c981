"""The inventory page in a real headless Chromium (Debian's `chromium` package).

The browser is driven over its own DevTools protocol on `--remote-debugging-pipe` (fd 3 in,
fd 4 out, NUL-separated JSON): the standard library is enough, no driver package and no
browser download. Every request the page makes is recorded (Network domain) and the browser
is pointed at a proxy that does not exist, so a page that tried to fetch anything would be
caught and would still reach nothing. The screenshot is saved under build/ (or
$GIT_MEMEX_ARTIFACTS) and its path printed, for CI to keep.

Without Chromium the tests skip with the reason, except under CI=true, where they fail:
`.ci/run` installs it (`apt-get install chromium`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from test_inventory import MEM, OLD_FILE, OLD_ID, XSS, build_world

ARTIFACTS = Path(os.environ.get("GIT_MEMEX_ARTIFACTS") or Path(__file__).resolve().parents[2] / "build")


def chromium() -> str:
    exe = os.environ.get("GIT_MEMEX_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    reason = "Chromium is not installed (`apt-get install chromium`); the inventory page was not tested in a browser"
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " and CI=true requires it")
    pytest.skip(reason)


class Browser:
    """A headless Chromium spoken to over the DevTools pipe."""

    def __init__(self, exe: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="memex-chromium-")
        child_in, self._w = os.pipe()
        self._r, child_out = os.pipe()

        def wire() -> None:  # in the child, before exec: the pipe ends on fds 3 and 4
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
             f"--user-data-dir={self.profile}", "--window-size=1280,900", "about:blank"],
            preexec_fn=wire, pass_fds=(3, 4), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        os.close(child_in)
        os.close(child_out)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer within the timeout")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                err = self.proc.stderr.read().decode("utf-8", "replace") if self.proc.stderr else ""
                raise EOFError(f"Chromium closed its DevTools pipe: {err[-800:]}")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, params: dict[str, Any] | None = None, *, page: bool = True) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if page and self.session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read(60)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_for(self, method: str, timeout: float = 60) -> dict[str, Any]:
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read(timeout)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, page=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, page=False)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise AssertionError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def type_into(self, selector: str, text: str) -> None:
        """Focus the element and type `text` as keystrokes would insert it."""
        self.js(f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", {"text": text})

    def clear(self, selector: str) -> None:
        self.js(f"document.querySelector({json.dumps(selector)}).select()")
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Backspace", "code": "Backspace",
                                             "windowsVirtualKeyCode": 8})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Backspace", "code": "Backspace",
                                             "windowsVirtualKeyCode": 8})

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        path.write_bytes(base64.b64decode(data))

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def problems(self) -> list[str]:
        out = []
        for e in self.events:
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(json.dumps(e["params"]["exceptionDetails"])[:300])
            elif e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error":
                out.append(e["params"]["entry"]["text"])
            elif e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error":
                out.append(json.dumps(e["params"]["args"])[:300])
        return out

    def close(self) -> None:
        with contextlib.suppress(OSError, EOFError, TimeoutError, RuntimeError):
            self.send("Browser.close", page=False)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._r, self._w):
            os.close(fd)
        if self.proc.stderr:
            self.proc.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture
def browser():
    b = Browser(chromium())
    yield b
    b.close()


def visible_ids(b: Browser) -> list[str]:
    return b.js("Array.from(document.querySelectorAll('#all tbody tr')).filter(r => !r.hidden && r.offsetParent)"
                ".map(r => r.dataset.id)")


def test_the_page_renders_filters_and_fetches_nothing(tmp_path: Path, browser: Browser):
    world = build_world(tmp_path)
    ids = world.ids
    page = tmp_path / "inventory.html"
    r = world.cli("inventory", "--format", "html", "--out", str(page))
    assert r.code == 0, r.err
    url = page.as_uri()
    browser.open(url)

    # it renders: the title, the pipeline, every memory a row
    assert browser.js("document.title").startswith("Memory inventory")
    assert browser.js("document.querySelector('#pipeline li.published b').textContent") == "2"
    assert len(visible_ids(browser)) == 13
    # the body holding a script is text: the page title was not changed and no extra element exists
    assert "pwned" not in browser.js("document.title")
    assert browser.js("document.scripts.length") == 1 and browser.js("document.images.length") == 0
    assert XSS.split("<img")[0] in browser.js("document.querySelector('#all').textContent")

    shot = ARTIFACTS / "inventory-page.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.screenshot(shot)
    print(f"\nscreenshot of the inventory page: {shot}")

    # the filter box: words, then a key:value term, then cleared
    browser.type_into("#filter", "staging deploys")
    assert sorted(visible_ids(browser)) == sorted([ids["draft"], ids["contra"]])
    assert browser.js("document.getElementById('shown').textContent") == "2 of 13 memories match"
    assert browser.js("document.querySelector('#contradictions h2 .count').textContent") == "1 of 1"
    assert browser.js("document.querySelector('#duplicates .nomatch').hidden") is False
    browser.clear("#filter")
    browser.type_into("#filter", "state:proposed")
    assert visible_ids(browser) == [ids["proposed"]]
    browser.clear("#filter")
    browser.type_into("#filter", "scope:personal")
    assert sorted(visible_ids(browser)) == sorted([ids["personal"], ids["xss"]])
    browser.screenshot(ARTIFACTS / "inventory-page-filtered.png")
    browser.clear("#filter")
    assert len(visible_ids(browser)) == 13

    # nothing but the page itself was requested, and nothing went wrong on it
    assert browser.requests() == [url]
    assert browser.problems() == []


def test_a_long_page_filters_across_all_its_row_tables(repo: Path, tmp_path: Path, browser: Browser):
    """Long lists are cut into tables of 100 rows the browser lays out only on screen."""
    assert run_cli("init", "--yes").code == 0
    for i in range(250):
        mid = f"01H00000000000000000{i:06d}"
        (repo / MEM / f"{mid}.md").write_text(OLD_FILE.replace(OLD_ID, mid).replace("lives in", f"item{i} lives in"))
    page = tmp_path / "long.html"
    assert run_cli("inventory", "--scope", "project", "--format", "html", "--out", str(page)).code == 0
    browser.open(page.as_uri())
    assert browser.js("document.querySelectorAll('#all table.mem').length") == 3
    assert len(visible_ids(browser)) == 250
    browser.type_into("#filter", "item249 ")
    assert visible_ids(browser) == ["01H00000000000000000000249"]
    assert browser.js("document.querySelector('#stale h2 .count').textContent") == "1 of 250"
    browser.clear("#filter")
    assert len(visible_ids(browser)) == 250
    assert browser.requests() == [page.as_uri()] and browser.problems() == []


def test_the_filter_box_shows_the_regret_window(repo: Path, tmp_path: Path, browser: Browser):
    """`confidence:low` in the filter box: the low-confidence memories, as `list --confidence low`."""
    low = run_cli("add", "the flaky test is probably a race", "--confidence", "low", "--json").json()["id"]
    run_cli("add", "the build uses make", "--confidence", "high")
    run_cli("add", "the docs live in docs/")
    page = tmp_path / "regret.html"
    assert run_cli("inventory", "--format", "html", "--out", str(page)).code == 0
    browser.open(page.as_uri())
    assert len(visible_ids(browser)) == 3
    browser.type_into("#filter", "confidence:low")
    assert visible_ids(browser) == [low]
    assert browser.requests() == [page.as_uri()] and browser.problems() == []


def test_the_request_recorder_catches_a_page_that_fetches(tmp_path: Path, browser: Browser):
    """The guard above can fail: a page with one remote image is caught."""
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><title>x</title><img src="https://example.com/pixel.png">')
    browser.open(page.as_uri())
    assert "https://example.com/pixel.png" in browser.requests()
