#!/usr/bin/env python3
"""Checks the built book (target/book) the way a reader meets it.

Without a browser: every link and anchor of every page resolves to a file
and an element id in the book, and no page links outside it (the site is
self-contained). With headless Chromium (the DevTools protocol over a
websocket): every page at 1280 and 375 px wide loads without console
errors or exceptions, the page is no wider than the window, and no table
is wider than the text column unless a scroll container holds it; a
screenshot of each page's first screen, and of its first table where it
has one, goes to the shots folder.

usage: check_site.py BOOK_DIR SHOTS_DIR
"""

import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

WIDTHS = (1280, 375)
# Pages mdBook writes besides the chapters: the print view repeats every
# chapter, the table of contents is a frame, 404 is served by a server.
SKIP = {"print.html", "toc.html", "404.html"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "img", "script", "link"):
                self.links.append((tag, a[key]))


def pages(book):
    out = []
    for root, _, files in os.walk(book):
        for f in files:
            if f.endswith(".html"):
                rel = os.path.relpath(os.path.join(root, f), book)
                if rel not in SKIP:
                    out.append(rel)
    return sorted(out)


def parse(book, rel, cache):
    if rel not in cache:
        p = Page()
        with open(os.path.join(book, rel), encoding="utf-8") as f:
            p.feed(f.read())
        cache[rel] = p
    return cache[rel]


def check_links(book, rels):
    problems, cache = [], {}
    for rel in rels:
        page = parse(book, rel, cache)
        for tag, link in page.links:
            u = urllib.parse.urlsplit(link)
            if u.scheme in ("http", "https") or link.startswith("//"):
                problems.append(f"{rel}: links outside the book: {link}")
                continue
            if u.scheme:  # mailto:, javascript:, data:
                continue
            target = rel
            if u.path:
                target = os.path.normpath(os.path.join(os.path.dirname(rel), urllib.parse.unquote(u.path)))
                full = os.path.join(book, target)
                if os.path.isdir(full):
                    target = os.path.join(target, "index.html")
                    full = os.path.join(book, target)
                if target.startswith("..") or not os.path.isfile(full):
                    problems.append(f"{rel}: broken link {link}")
                    continue
            if u.fragment and target.endswith(".html"):
                ids = parse(book, target, cache).ids
                if urllib.parse.unquote(u.fragment) not in ids:
                    problems.append(f"{rel}: broken anchor {link}")
    return problems


MEASURE = r"""
(() => {
  const main = document.querySelector('main') || document.body;
  const limit = main.getBoundingClientRect().right + 1;
  const bad = [];
  document.querySelectorAll('table').forEach((t, i) => {
    let el = t.parentElement, held = false;
    // A scroll container inside the text column (mdBook's table wrapper);
    // the page's own scrolling area does not count.
    while (el && el !== main && el !== document.body) {
      const s = getComputedStyle(el);
      if (s.overflowX === 'auto' || s.overflowX === 'scroll') { held = true; break; }
      el = el.parentElement;
    }
    if (!held && t.getBoundingClientRect().right > limit) bad.push(i + 1);
  });
  return JSON.stringify({
    wide: document.documentElement.scrollWidth > window.innerWidth + 1,
    width: document.documentElement.scrollWidth,
    tables: bad,
  });
})()
"""


class Browser:
    """Headless Chromium driven over the DevTools protocol."""

    def __init__(self, exe):
        import websocket  # websocket-client

        self.dir = tempfile.mkdtemp(prefix="tile-chromium-")
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--remote-debugging-port=0",
             f"--user-data-dir={self.dir}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.ws = self.connect(websocket)
        except Exception:
            self.proc.kill()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self.next_id = 0
        self.events = []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def connect(self, websocket):
        port_file = os.path.join(self.dir, "DevToolsActivePort")
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        for _ in range(400):
            if os.path.exists(port_file) and open(port_file).read().strip():
                port = open(port_file).read().split()[0]
                targets = json.load(direct.open(f"http://127.0.0.1:{port}/json/list"))
                pages = [t for t in targets if t["type"] == "page"]
                if pages:
                    return websocket.create_connection(
                        pages[0]["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
            time.sleep(0.05)
        raise RuntimeError("Chromium did not open its DevTools port within 20 s")

    def call(self, method, **params):
        self.next_id += 1
        me = self.next_id
        self.ws.send(json.dumps({"id": me, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == me:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, method, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    # Only the awaited event: console errors before it
                    # are still to be read.
                    del self.events[i]
                    return True
            self.ws.settimeout(max(0.1, end - time.time()))
            try:
                self.events.append(json.loads(self.ws.recv()))
            except Exception:
                break
        return False

    def errors(self):
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("text", "exception"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(p["entry"].get("text", "error"))
        self.events.clear()
        return out

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            shutil.rmtree(self.dir, ignore_errors=True)


def check_rendering(book, rels, shots, exe):
    import base64

    problems = []
    os.makedirs(shots, exist_ok=True)
    b = Browser(exe)
    try:
        for width in WIDTHS:
            b.call("Emulation.setDeviceMetricsOverride", width=width, height=900,
                   deviceScaleFactor=1, mobile=width < 600)
            for rel in rels:
                url = "file://" + os.path.abspath(os.path.join(book, rel))
                b.events.clear()
                b.call("Page.navigate", url=url)
                if not b.wait_for("Page.loadEventFired"):
                    problems.append(f"{rel} at {width}px: did not finish loading")
                    continue
                time.sleep(0.2)
                r = json.loads(b.call("Runtime.evaluate", expression=MEASURE, returnByValue=True)["result"]["value"])
                for e in b.errors():
                    problems.append(f"{rel} at {width}px: console error: {e}")
                if r["wide"]:
                    problems.append(f"{rel} at {width}px: the page is {r['width']} px wide")
                if r["tables"]:
                    problems.append(f"{rel} at {width}px: tables {r['tables']} overflow the text without a scroll container")
                name = rel.replace("/", "__").removesuffix(".html") + f"-{width}"
                shot = b.call("Page.captureScreenshot", format="png")["data"]
                with open(os.path.join(shots, name + ".png"), "wb") as f:
                    f.write(base64.b64decode(shot))
                # The first table too, where a page has one.
                has = b.call("Runtime.evaluate", returnByValue=True, expression=(
                    "(() => { const t = document.querySelector('main table');"
                    " if (!t) return false; t.scrollIntoView(); return true; })()"))["result"]["value"]
                if has:
                    time.sleep(0.1)
                    shot = b.call("Page.captureScreenshot", format="png")["data"]
                    with open(os.path.join(shots, name + "-table.png"), "wb") as f:
                        f.write(base64.b64decode(shot))
    finally:
        b.close()
    return problems


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    book, shots = sys.argv[1], sys.argv[2]
    rels = pages(book)
    if not rels:
        sys.exit(f"no pages in {book}: build the book first (bash docs/build.sh)")
    problems = check_links(book, rels)
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if exe is None:
        sys.exit("no Chromium found (docs/build.sh installs Debian's `chromium`)")
    problems += check_rendering(book, rels, shots, exe)
    for p in problems:
        print(f"FAIL {p}")
    print(f"{len(rels)} pages, {len(WIDTHS)} widths: {len(problems)} problems; screenshots in {shots}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
