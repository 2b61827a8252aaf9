"""Drives headless Chromium (Debian's `chromium`) at a page served from another origin than
the gateway, and collects what the page's script reports back to that origin.

The page posts its findings as JSON to `/result` on its own server, so nothing depends on
scraping the DOM or on a DevTools client; a page that never reports fails after a timeout."""

import http.server
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class PageServer:
    """Serves one HTML page on 127.0.0.1 at a free port and receives its /result POSTs."""

    def __init__(self, html: str):
        self.results: queue.Queue = queue.Queue()
        page, results = html.encode(), self.results

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                results.put(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def run_page(url: str, server: PageServer, timeout: float = 90) -> dict:
    """Opens `url` in headless Chromium and returns the first result the page reports."""
    with tempfile.TemporaryDirectory(prefix="s3gw-chromium-") as profile:
        env = dict(os.environ, HOME=profile)
        # Its own process group: Chromium's helper processes write to the
        # profile until they exit, so all of them must be gone before the
        # profile is removed.
        browser = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-background-networking", f"--user-data-dir={profile}", url],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )
        try:
            return server.results.get(timeout=timeout)
        except queue.Empty:
            stop(browser, signal.SIGKILL)
            err = browser.stderr.read()
            raise AssertionError(f"the page reported nothing within {timeout} s; chromium said:\n"
                                 f"{err.decode(errors='replace')[-3000:]}") from None
        finally:
            stop(browser, signal.SIGTERM)


def stop(browser: subprocess.Popen, how: signal.Signals) -> None:
    """Ends Chromium and every process of its group, and waits until none is left (a
    member that outlives 30 s and SIGKILL, such as a zombie nobody reaps, is left)."""
    start = time.monotonic()
    while time.monotonic() - start < 35:
        try:
            os.killpg(browser.pid, how if time.monotonic() - start < 30 else signal.SIGKILL)
        except ProcessLookupError:
            break
        browser.poll()  # reaps the leader; its helpers are reaped by init
        time.sleep(0.05)
    browser.wait()
