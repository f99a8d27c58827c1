"""A small Chrome DevTools Protocol client for the browser tests, standard library only.

Chromium started with ``--remote-debugging-pipe`` reads commands on its fd 3 and writes
replies and events on its fd 4: JSON messages, each ended by a NUL byte. ``Browser`` starts a
headless Chromium with a fresh profile, opens one page and attaches to it (a "flat" session:
commands carry the ``sessionId``), records every network request, console error and uncaught
exception, and offers the few calls the tests need.

    with Browser.start() as b:
        b.open("file:///tmp/page.html")
        b.eval("document.title")
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1400,900"]
INSTALL = "apt-get install chromium"


def find_chromium():
    return next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome"))), None)


def _onto_3_and_4(read_fd: int, write_fd: int):
    """The child's fd 3 (commands in) and fd 4 (replies out), whatever numbers the pipes got."""
    def setup():
        r, w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (read_fd, write_fd))
        os.dup2(r, 3)
        os.dup2(w, 4)
    return setup


class Browser:
    def __init__(self, proc, to_browser: int, from_browser: int, profile):
        self.proc, self.out, self.inp, self.profile = proc, to_browser, from_browser, profile
        self.buffer, self.next_id, self.events, self.session = b"", 0, [], None

    @classmethod
    def start(cls, timeout: float = 30.0) -> "Browser":
        exe = find_chromium()
        if exe is None:
            raise RuntimeError("no chromium, chromium-browser or google-chrome on PATH")
        profile = tempfile.TemporaryDirectory(prefix="minigrad-chromium-",
                                              ignore_cleanup_errors=True)
        cmd_r, cmd_w = os.pipe()
        out_r, out_w = os.pipe()
        proc = subprocess.Popen([exe, *FLAGS, "--remote-debugging-pipe",
                                 f"--user-data-dir={profile.name}", "about:blank"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, pass_fds=(3, 4),
                                start_new_session=True,  # its helpers in its own group
                                preexec_fn=_onto_3_and_4(cmd_r, out_w))
        os.close(cmd_r), os.close(out_w)
        b = cls(proc, cmd_w, out_r, profile)
        try:
            b.timeout = timeout
            target = b.call("Target.createTarget", url="about:blank")["targetId"]
            b.session = b.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Network", "Log"):
                b.call(f"{domain}.enable")
            b.call("Network.setBlockedURLs", urls=["http://*", "https://*", "ws://*", "wss://*"])
        except BaseException:
            b.close()
            raise
        return b

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Ask Chromium to quit; then end the process group it was started in, if still there."""
        try:
            self.timeout = 5
            self.call("Browser.close")
            self.proc.wait(timeout=5)
        except Exception:  # not answering, or gone already
            pass
        for fd in (self.out, self.inp):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group of the process we started
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)
        self.profile.cleanup()

    # ---- the protocol --------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.inp], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.inp, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe (it exited?)")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, **params) -> dict:
        """Send a command (on the page's session once attached) and wait for its reply."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        seen = len(self.events)
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method:
                    return event
            seen = len(self.events)
            self.events.append(self._read_message(deadline))

    # ---- what the tests use --------------------------------------------------------------
    def open(self, url: str) -> None:
        """Load ``url``; ``requests()`` and ``errors()`` then tell of this page only."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def eval(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def mouse(self, selector: str, kind: str = "mouseMoved") -> None:
        """Move the mouse to the centre of the element (``mousePressed``/``Released``: click)."""
        x, y = self.eval(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                         f"e.scrollIntoView({{block: 'center', inline: 'center'}});"
                         f"const r = e.getBoundingClientRect();"
                         f"return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        if kind == "click":
            for t in ("mousePressed", "mouseReleased"):
                self.call("Input.dispatchMouseEvent", type=t, x=x, y=y, button="left",
                          clickCount=1)

    def type(self, selector: str, text: str) -> None:
        self.mouse(selector, "click")
        self.call("Input.insertText", text=text)

    def screenshot(self, path: str) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def requests(self) -> list:
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def errors(self) -> list:
        """Console errors, uncaught exceptions and error log entries (a CSP violation is one)."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("text", "exception"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(str(p.get("args")))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(p["entry"].get("text", ""))
            elif m == "Page.javascriptDialogOpening":  # alert(): script the page did not own
                out.append("dialog: " + p.get("message", ""))
        return out
