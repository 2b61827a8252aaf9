"""The web console (`console = true`, docs/console.md): its sign-in and sessions, its
proxy (every action an S3 request signed as the session's key), its security headers,
and the page itself in headless Chromium (Debian's `chromium`, driven by Playwright).

Plain HTTP (requests) where a browser adds nothing; Chromium for what only a browser
shows: the upload's progress events, share links opened elsewhere, CSRF from another
origin's form, XSS through names and metadata, and framing."""

import hashlib
import os
import re
import shutil
import uuid

import pytest
import requests
from playwright.sync_api import expect, sync_playwright

from browser import PageServer
import ozone_cluster
from conftest import OZONE_OM, external_endpoint, make_s3_client, start_server
from sigv4 import Credentials
from test_operations import FIXTURES, Launched

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
XSS_NAME = "<img src=x onerror=alert(1)>"
XSS_META = "<img src=x onerror=alert(2)><script>alert(3)</script>"
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    """A gateway of its own with the console on."""
    if external_endpoint() is not None:
        pytest.skip("starts its own server with the console on (S3_ENDPOINT is set)")
    server = start_server(tmp_path_factory, "console", ["--console", "true"])
    try:
        yield server
    finally:
        server.stop()


def url(server, path=""):
    return f"{server.endpoint}/_s3gw/console/{path}"


def root_s3(server):
    return make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))


def sign_in(server, access_key, secret_key, session=None):
    """A requests session signed in to the console, and its CSRF header."""
    session = session or requests.Session()
    answer = session.post(url(server, "api/session"), json={"access_key": access_key, "secret_key": secret_key})
    assert answer.status_code == 200, answer.text
    return session, {"X-CSRF-Token": answer.json()["csrf_token"]}


def sign_in_root(server):
    return sign_in(server, server.access_key, server.secret_key)


def new_bucket(hint):
    return f"console-{hint}-{uuid.uuid4().hex[:8]}"


# ---- Plain HTTP ----


def test_console_is_off_by_default(managed_target):
    answer = requests.get(managed_target.endpoint + "/_s3gw/console/")
    assert answer.status_code == 403, answer.text
    assert "text/html" not in answer.headers.get("Content-Type", "")


def test_pages_carry_a_strict_policy(console):
    for path in ["", "app.js", "app.css"]:
        answer = requests.get(url(console, path))
        assert answer.status_code == 200, path
        assert answer.headers["Content-Security-Policy"] == PAGE_CSP
        assert answer.headers["X-Frame-Options"] == "DENY"
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["Referrer-Policy"] == "no-referrer"
    assert "javascript" in requests.get(url(console, "app.js")).headers["Content-Type"]
    redirect = requests.get(console.endpoint + "/_s3gw/console", allow_redirects=False)
    assert redirect.status_code == 308 and redirect.headers["Location"] == "/_s3gw/console/"
    assert requests.get(url(console, "nothing.html")).status_code == 404


def test_the_page_never_builds_html_from_data():
    app = open(os.path.join(os.path.dirname(__file__), "..", "gateway", "console", "app.js")).read()
    for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("]:
        assert sink not in app, sink


def test_sign_in_sets_a_strict_cookie_with_a_new_id_each_time(console):
    session = requests.Session()
    # A session id planted before sign-in (fixation) is replaced, never adopted.
    planted = "ab" * 32
    session.cookies.set("s3gw_console", planted, path="/_s3gw/console/")
    ids = []
    for _ in range(2):
        answer = session.post(url(console, "api/session"),
                              json={"access_key": console.access_key, "secret_key": console.secret_key})
        assert answer.status_code == 200, answer.text
        cookie = answer.headers["Set-Cookie"]
        attributes = [part.strip() for part in cookie.split(";")]
        assert "HttpOnly" in attributes and "SameSite=Strict" in attributes
        assert "Path=/_s3gw/console/" in attributes
        assert "Secure" not in attributes  # plain HTTP: a Secure cookie would never come back
        ids.append(re.match(r"s3gw_console=([0-9a-f]{64});", cookie).group(1))
        assert answer.json()["access_key"] == console.access_key
        assert "secret" not in answer.text
    assert planted not in ids and ids[0] != ids[1]
    # The first id ended when the second sign-in replaced it.
    old = requests.get(url(console, "api/session"), cookies={"s3gw_console": ids[0]})
    assert old.status_code == 401
    now = requests.get(url(console, "api/session"), cookies={"s3gw_console": ids[1]})
    assert now.status_code == 200 and now.json()["access_key"] == console.access_key


def test_a_wrong_secret_or_a_form_cannot_sign_in(console):
    wrong = requests.post(url(console, "api/session"), json={"access_key": console.access_key, "secret_key": "x"})
    assert wrong.status_code == 403 and wrong.json()["code"] == "SignInRefused"
    assert "Set-Cookie" not in wrong.headers
    form = requests.post(url(console, "api/session"),
                         data={"access_key": console.access_key, "secret_key": console.secret_key})
    assert form.status_code == 415
    for body in ["{", "[]", '{"access_key": 1}', '{"access_key": "", "secret_key": ""}']:
        answer = requests.post(url(console, "api/session"), data=body,
                               headers={"Content-Type": "application/json"})
        assert answer.status_code == 400, body


def test_every_api_call_needs_the_csrf_token_and_this_origin(console):
    session, csrf = sign_in_root(console)
    name = new_bucket("csrf")
    for method in ["GET", "PUT", "DELETE", "POST"]:
        missing = session.request(method, url(console, f"s3/{name}"))
        assert missing.status_code == 403 and missing.json()["code"] == "InvalidCsrfToken", method
        wrong = session.request(method, url(console, f"s3/{name}"), headers={"X-CSRF-Token": "0" * 64})
        assert wrong.status_code == 403, method
    other_origin = session.put(url(console, f"s3/{name}"), headers={**csrf, "Origin": "http://evil.example"})
    assert other_origin.status_code == 403 and other_origin.json()["code"] == "CrossOriginRefused"
    cross_site = session.put(url(console, f"s3/{name}"), headers={**csrf, "Sec-Fetch-Site": "cross-site"})
    assert cross_site.status_code == 403
    # None of it made the bucket; the token and the right origin do.
    assert name not in [b["Name"] for b in root_s3(console).list_buckets()["Buckets"]]
    same_origin = session.put(url(console, f"s3/{name}"), headers={**csrf, "Origin": console.endpoint})
    assert same_origin.status_code == 200, same_origin.text
    assert session.delete(url(console, f"s3/{name}"), headers=csrf).status_code == 204


def test_the_proxy_is_s3_signed_as_the_session_key(console):
    session, csrf = sign_in_root(console)
    name = new_bucket("proxy")
    assert session.put(url(console, f"s3/{name}"), headers=csrf).status_code == 200
    key = "dir/a b+c%.txt"
    put = session.put(url(console, f"s3/{name}/dir/a%20b%2Bc%25.txt"), data=b"hello",
                      headers={**csrf, "x-amz-meta-note": XSS_META, "Content-Type": "text/html"})
    assert put.status_code == 200, put.text
    head = root_s3(console).head_object(Bucket=name, Key=key)
    assert head["Metadata"]["note"] == XSS_META
    listing = session.get(url(console, f"s3/{name}?list-type=2&delimiter=%2F&prefix=dir%2F"), headers=csrf)
    assert listing.status_code == 200 and "<Key>dir/a b+c%.txt</Key>" in listing.text
    # An object read through the proxy never runs as a page of the console's origin.
    got = session.get(url(console, f"s3/{name}/dir/a%20b%2Bc%25.txt"), headers=csrf)
    assert got.content == b"hello"
    assert got.headers["Content-Security-Policy"].startswith("sandbox")
    # A name that is not UTF-8 reaches S3 as sent, which refuses it: the proxy
    # never turns it into another key.
    not_utf8 = session.put(url(console, f"s3/{name}/%FF"), data=b"x", headers=csrf)
    assert not_utf8.status_code == 400 and "<Code>InvalidURI</Code>" in not_utf8.text
    assert "Contents" not in root_s3(console).list_objects_v2(Bucket=name, Prefix="\ufffd")
    # The server's own validation error reaches the page (the policy editor shows it).
    bad_policy = session.put(url(console, f"s3/{name}?policy"), data="{not json", headers=csrf)
    assert bad_policy.status_code == 400 and "<Code>MalformedPolicy</Code>" in bad_policy.text
    versioning = session.put(
        url(console, f"s3/{name}?versioning"), headers=csrf,
        data='<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
             "<Status>Enabled</Status></VersioningConfiguration>")
    if OZONE_OM:
        # Ozone keeps no versions: S3's own refusal reaches the console as it is.
        assert versioning.status_code == 501 and "<Code>NotImplemented</Code>" in versioning.text
    else:
        assert versioning.status_code == 200, versioning.text
        assert root_s3(console).get_bucket_versioning(Bucket=name)["Status"] == "Enabled"
    # The console cannot be told to send a signature of the caller's own.
    forged = session.get(url(console, f"s3/{name}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=00"),
                         headers=csrf)
    assert forged.status_code == 400


def test_share_links_are_presigned_and_bounded(console):
    session, csrf = sign_in_root(console)
    name = new_bucket("share")
    assert session.put(url(console, f"s3/{name}"), headers=csrf).status_code == 200
    assert session.put(url(console, f"s3/{name}/report.html"), data=b"<script>1</script>",
                       headers={**csrf, "Content-Type": "text/html"}).status_code == 200
    for expires in [0, 7 * 86400 + 1]:
        refused = session.post(url(console, "api/presign"), headers=csrf,
                               json={"bucket": name, "key": "report.html", "expires": expires})
        assert refused.status_code == 400 and refused.json()["code"] == "InvalidExpiry"
    link = session.post(url(console, "api/presign"), headers=csrf,
                        json={"bucket": name, "key": "report.html", "expires": 7 * 86400, "download": True})
    assert link.status_code == 200, link.text
    got = requests.get(console.endpoint + link.json()["url"])  # no cookie, no credentials
    assert got.status_code == 200 and got.content == b"<script>1</script>"
    assert got.headers["Content-Disposition"].startswith("attachment")
    # S3's own answers, while the console is on, run as an opaque origin at most.
    assert got.headers["Content-Security-Policy"].startswith("sandbox")
    no_csrf = session.post(url(console, "api/presign"), json={"bucket": name, "key": "report.html", "expires": 60})
    assert no_csrf.status_code == 403


def test_a_second_key_sees_nothing_of_the_first(console):
    session, csrf = sign_in_root(console)
    name = new_bucket("mine")
    assert session.put(url(console, f"s3/{name}"), headers=csrf).status_code == 200
    other = console.create_key(f"console-other-{uuid.uuid4().hex[:6]}")
    theirs, their_csrf = sign_in(console, other["access_key"], other["secret_key"])
    listing = theirs.get(url(console, "s3/"), headers=their_csrf)
    assert listing.status_code == 200 and "<Bucket>" not in listing.text
    refused = theirs.get(url(console, f"s3/{name}?list-type=2"), headers=their_csrf)
    assert refused.status_code == 403 and "<Code>AccessDenied</Code>" in refused.text
    # Nor does the console give it the admin API.
    keys = theirs.get(url(console, "admin/keys"), headers=their_csrf)
    assert keys.status_code == 403
    assert session.get(url(console, "admin/keys"), headers=csrf).status_code == 200


def test_a_deleted_keys_session_is_refused(console):
    key = console.create_key(f"console-gone-{uuid.uuid4().hex[:6]}")
    session, csrf = sign_in(console, key["access_key"], key["secret_key"])
    assert session.get(url(console, "s3/"), headers=csrf).status_code == 200
    console.admin("keys", "delete", key["access_key"])
    ended = session.get(url(console, "s3/"), headers=csrf)
    assert ended.status_code == 401 and ended.json()["code"] == "SessionEnded"
    assert session.get(url(console, "s3/"), headers=csrf).json()["code"] == "NoSession"
    # Deleted through the console by root: the key's sessions end at once.
    key = console.create_key(f"console-gone-{uuid.uuid4().hex[:6]}")
    victim, victim_csrf = sign_in(console, key["access_key"], key["secret_key"])
    root, root_csrf = sign_in_root(console)
    assert root.delete(url(console, f"admin/keys/{key['access_key']}"), headers=root_csrf).status_code == 204
    assert victim.get(url(console, "api/session")).status_code == 401


def test_sign_out_ends_the_session(console):
    session, csrf = sign_in_root(console)
    cookie = session.cookies.get("s3gw_console")
    out = session.delete(url(console, "api/session"), headers=csrf)
    assert out.status_code == 204 and "Max-Age=0" in out.headers["Set-Cookie"]
    again = requests.get(url(console, "s3/"), headers=csrf, cookies={"s3gw_console": cookie})
    assert again.status_code == 401


# ---- Chromium ----


@pytest.fixture(scope="module")
def chromium():
    if not CHROMIUM:
        pytest.skip("needs Chromium (Debian's chromium package)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


class Page:
    """A page of the console in a fresh browser context, with what it showed: dialogs
    (confirm() is accepted), console errors, and the upload progress events."""

    def __init__(self, chromium, server):
        self.context = chromium.new_context(accept_downloads=True)
        self.context.add_init_script(
            "document.addEventListener('s3gw-upload-progress',"
            " e => (window.__progress = window.__progress || []).push(e.detail));")
        self.page = self.context.new_page()
        self.dialogs = []
        self.page.on("dialog", self.on_dialog)
        self.server = server

    def on_dialog(self, dialog):
        self.dialogs.append((dialog.type, dialog.message))
        dialog.accept()

    def sign_in(self, access_key, secret_key):
        page = self.page
        page.goto(url(self.server))
        page.fill("#access-key", access_key)
        page.fill("#secret-key", secret_key)
        page.click("#sign-in button[type=submit]")
        page.wait_for_selector("#buckets:not([hidden])")

    def open_bucket(self, name):
        self.page.click(f'#bucket-list li[data-bucket="{name}"] button.open')
        self.page.wait_for_selector("#browser:not([hidden])")
        expect(self.page.locator("#bucket-name")).to_have_text(name)

    def close(self):
        self.context.close()


@pytest.fixture
def page(chromium, console):
    opened = Page(chromium, console)
    try:
        yield opened
    finally:
        opened.close()


def test_browser_upload_browse_share_settings_and_sign_out(page, console, chromium, tmp_path):
    p = page.page
    page.sign_in(console.access_key, console.secret_key)
    name = new_bucket("browser")
    p.fill("#new-bucket", name)
    p.click("#create-bucket button[type=submit]")
    p.wait_for_selector(f'#bucket-list li[data-bucket="{name}"]')
    page.open_bucket(name)

    # A 20 MB upload: multipart (over 16 MiB), its progress reported as it goes.
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(20 * MIB))
    small = tmp_path / "hello.txt"
    small.write_bytes(b"hello from the console\n")
    p.set_input_files("#upload", [str(big), str(small)])
    p.wait_for_selector('#uploads li.done[data-key="hello.txt"]', timeout=120_000)
    events = [e for e in p.evaluate("window.__progress") if e["name"] == "big.bin"]
    loaded = [e["loaded"] for e in events]
    assert loaded == sorted(loaded) and loaded[-1] == 20 * MIB, loaded
    assert any(0 < n < 20 * MIB for n in loaded), "no progress between start and end"
    assert all(e["total"] == 20 * MIB for e in events)
    head = root_s3(console).head_object(Bucket=name, Key="big.bin")
    assert head["ContentLength"] == 20 * MIB and head["ETag"].endswith('-3"')

    # Browse: a folder, paged by continuation token (50 a page).
    s3 = root_s3(console)
    for i in range(51):
        s3.put_object(Bucket=name, Key=f"many/{i:03d}", Body=b"x")
    p.click("#back")
    page.open_bucket(name)
    p.wait_for_selector('tr.object[data-key="big.bin"]')
    p.click('tr.folder[data-prefix="many/"]')
    p.wait_for_selector('tr.object[data-key="many/049"]')
    assert p.locator("tr.object").count() == 50
    p.click("#more")
    p.wait_for_selector('tr.object[data-key="many/050"]')
    assert p.locator("#more").is_hidden()
    p.click("tr.folder.up td")
    p.wait_for_selector('tr.object[data-key="hello.txt"]')

    # Download: an attachment from the console's origin.
    with p.expect_download() as download:
        p.click('tr.object[data-key="hello.txt"] button.download')
    assert download.value.suggested_filename == "hello.txt"
    assert download.value.url.startswith(console.endpoint + "/")

    # Share: the link opens in a second context that has no session.
    p.select_option("#expiry", "86400")
    p.click('tr.object[data-key="hello.txt"] button.share')
    expect(p.locator("#share-url")).not_to_have_value("")
    link = p.input_value("#share-url")
    assert "X-Amz-Expires=86400" in link
    stranger = chromium.new_context()
    try:
        assert stranger.cookies() == []
        other = stranger.new_page()
        answer = other.goto(link)
        assert answer.status == 200
        assert answer.body() == b"hello from the console\n"
    finally:
        stranger.close()

    # A bucket setting (versioning) and the policy editor's server error.
    p.click("#settings summary")
    p.check("#versioning")
    if OZONE_OM:
        # Ozone keeps no versions: the page shows S3's refusal.
        expect(p.locator("#status")).to_contain_text("Setting versioning: NotImplemented")
    else:
        expect(p.locator("#status")).to_have_text("Versioning enabled.")
        assert s3.get_bucket_versioning(Bucket=name)["Status"] == "Enabled"
    p.fill("#policy", '{"Version": "2012-10-17", "Statement": [')
    p.click("#save-policy")
    expect(p.locator("#policy-error")).not_to_have_text("")
    assert p.text_content("#policy-error").startswith("MalformedPolicy")

    # Delete a prefix: the count is asked first.
    p.click('tr.folder[data-prefix="many/"]')
    p.wait_for_selector('tr.object[data-key="many/000"]')
    p.click("#delete-prefix")
    expect(p.locator("#status")).to_have_text("Deleted 51 objects.", timeout=60_000)
    assert ("confirm", "Delete 51 objects under many/?") in page.dialogs
    assert s3.list_objects_v2(Bucket=name, Prefix="many/")["KeyCount"] == 0

    # Sign out: the cookie's session is gone, and the page shows the sign-in.
    cookie = [c["value"] for c in page.context.cookies() if c["name"] == "s3gw_console"][0]
    p.click("#sign-out")
    p.wait_for_selector("#sign-in:not([hidden])")
    assert requests.get(url(console, "api/session"), cookies={"s3gw_console": cookie}).status_code == 401


def test_browser_renders_names_and_metadata_as_text(page, console):
    name = new_bucket("xss")
    s3 = root_s3(console)
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key=XSS_NAME, Body=b"x", Metadata={"note": XSS_META})
    s3.put_object_tagging(Bucket=name, Key=XSS_NAME,
                          Tagging={"TagSet": [{"Key": "t", "Value": "<b>bold</b>"}]})
    p = page.page
    console_messages = []
    p.on("console", lambda message: console_messages.append(message.text))
    page.sign_in(console.access_key, console.secret_key)
    page.open_bucket(name)
    row = p.wait_for_selector(f"tr.object[data-key={XSS_NAME!r}]".replace("'", '"'))
    assert row.query_selector("td.name").text_content() == XSS_NAME
    row.query_selector("button.info").click()
    p.wait_for_selector("#details:not([hidden])")
    details = p.text_content("#details-list")
    assert XSS_META in details and "<b>bold</b>" in details
    assert p.text_content("#details-key") == XSS_NAME
    # Nothing became markup, nothing ran.
    assert p.locator("#objects img, #details img, #details script, #details b").count() == 0
    assert page.dialogs == []
    assert not any("Content Security Policy" in m for m in console_messages), console_messages


def test_browser_second_key_sees_nothing_and_a_deleted_keys_session_ends(page, console):
    s3 = root_s3(console)
    name = new_bucket("private")
    s3.create_bucket(Bucket=name)
    key = console.create_key(f"console-browser-{uuid.uuid4().hex[:6]}")
    p = page.page
    page.sign_in(key["access_key"], key["secret_key"])
    assert p.locator("#bucket-list li").count() == 0
    console.admin("keys", "delete", key["access_key"])
    p.fill("#new-bucket", new_bucket("after"))
    p.click("#create-bucket button[type=submit]")
    p.wait_for_selector("#sign-in:not([hidden])")
    assert p.text_content("#status").startswith("SessionEnded")


def test_a_form_from_another_origin_changes_nothing(page, console):
    name = new_bucket("csrf-form")
    s3 = root_s3(console)
    s3.create_bucket(Bucket=name)
    page.sign_in(console.access_key, console.secret_key)
    target = url(console, f"s3/{name}/planted?uploads")
    other = PageServer(
        f'<form id="f" method="POST" action="{target}" enctype="text/plain">'
        '<input name="X-CSRF-Token" value="guess"></form>'
        '<script>document.getElementById("f").submit()</script>')
    try:
        p = page.page
        with p.expect_navigation(url=re.compile(re.escape(target))):
            p.goto(f"http://127.0.0.1:{other.port}/")
        body = p.text_content("body")
        assert "CrossOriginRefused" in body or "InvalidCsrfToken" in body, body
    finally:
        other.close()
    assert s3.list_multipart_uploads(Bucket=name).get("Uploads", []) == []


def test_the_console_cannot_be_framed(page, console):
    other = PageServer(f'<iframe id="f" src="{url(console)}"></iframe>')
    try:
        p = page.page
        p.goto(f"http://127.0.0.1:{other.port}/")
        p.wait_for_load_state("load")
        frames = [f for f in p.frames if f != p.main_frame]
        assert len(frames) == 1
        try:
            shown = frames[0].evaluate("document.getElementById('sign-in') !== null")
        except Exception:  # noqa: BLE001 - a blocked frame may not even take a script
            shown = False
        assert not shown
    finally:
        other.close()


# ---- Operator pages (root keys) ----

# Where the OM keeps every key's S3 secret (Ozone with security on), the
# gateway refuses to give a key a new secret of its own (docs/operations.md).
ROTATES = not (OZONE_OM and ozone_cluster.SECURE)


def test_the_admin_proxy_rotates_a_secret_and_refuses_other_keys(console):
    root, root_csrf = sign_in_root(console)
    key = console.create_key(f"console-rot-{uuid.uuid4().hex[:6]}")
    theirs, their_csrf = sign_in(console, key["access_key"], key["secret_key"])
    # A key that is not root gets nothing of the admin API through the console.
    for method, path in [("GET", "admin/keys"), ("GET", "admin/buckets"),
                         ("POST", "admin/keys"), ("POST", f"admin/keys/{key['access_key']}"),
                         ("DELETE", f"admin/keys/{key['access_key']}")]:
        refused = theirs.request(method, url(console, path), headers=their_csrf)
        assert refused.status_code == 403 and "<Code>AccessDenied</Code>" in refused.text, (method, path)
    if not ROTATES:
        return
    # Root gives the key a new secret: shown once, the old one refused at once,
    # and the key's console sessions end with it.
    rotated = root.post(url(console, f"admin/keys/{key['access_key']}"), headers=root_csrf)
    assert rotated.status_code == 200, rotated.text
    fresh = rotated.json()
    assert fresh["access_key"] == key["access_key"] and fresh["name"] == key["name"]
    assert fresh["secret_key"] != key["secret_key"] and len(fresh["secret_key"]) == 40
    assert theirs.get(url(console, "api/session")).status_code == 401
    old = requests.post(url(console, "api/session"),
                        json={"access_key": key["access_key"], "secret_key": key["secret_key"]})
    assert old.status_code == 403 and old.json()["code"] == "SignInRefused"
    sign_in(console, key["access_key"], fresh["secret_key"])
    listed = root.get(url(console, "admin/keys"), headers=root_csrf).json()
    assert fresh["secret_key"] not in str(listed)
    missing = root.post(url(console, "admin/keys/S3GWNOSUCHKEY0000000"), headers=root_csrf)
    assert missing.status_code == 404


def test_browser_keys_page_creates_rotates_and_deletes_a_key(page, console, chromium):
    p = page.page
    page.sign_in(console.access_key, console.secret_key)
    expect(p.locator("#operator-nav")).to_be_visible()
    p.click('#nav button[data-page="keys"]')
    p.wait_for_selector("#keys:not([hidden])")
    name = f"console-page-{uuid.uuid4().hex[:6]}"
    p.fill("#new-key", name)
    p.click("#create-key button[type=submit]")
    p.wait_for_selector("#secret-dialog[open]")
    assert p.text_content("#secret-name") == name
    access_key = p.text_content("#secret-access")
    secret = p.text_content("#secret-value")
    # 40 characters made here; where the OM makes the secret, its own 64.
    assert access_key.startswith("S3GW") and len(secret) >= 40
    p.click("#secret-done")
    expect(p.locator("#secret-dialog")).not_to_have_attribute("open", "")
    # Shown once: nothing of the secret is left in the page.
    assert secret not in p.content() and p.text_content("#secret-value") == ""
    p.wait_for_selector(f'tr.key[data-access-key="{access_key}"]')
    assert p.text_content(f'tr.key[data-access-key="{access_key}"] td.name') == name

    # The new key signs in in a second context, and is offered no operator page.
    other = Page(chromium, console)
    try:
        other.sign_in(access_key, secret)
        expect(other.page.locator("#operator-nav")).to_be_hidden()

        # Rotated: a new secret, shown once; the old one no longer signs in,
        # and the second context's session ended.
        if ROTATES:
            p.click(f'tr.key[data-access-key="{access_key}"] button.rotate')
            p.wait_for_selector("#secret-dialog[open]")
            assert p.text_content("#secret-access") == access_key
            rotated = p.text_content("#secret-value")
            assert rotated != secret and len(rotated) >= 40
            p.click("#secret-done")
            assert rotated not in p.content()
            assert any(kind == "confirm" and "new secret" in text for kind, text in page.dialogs)
            other.page.click('#nav button[data-page="buckets"]')
            other.page.wait_for_selector("#sign-in:not([hidden])")
            other.page.fill("#access-key", access_key)
            other.page.fill("#secret-key", secret)
            other.page.click("#sign-in button[type=submit]")
            expect(other.page.locator("#status")).to_contain_text("SignInRefused")
            other.sign_in(access_key, rotated)

        # Deleted (after a confirmation): gone from the list, its session ended.
        p.click(f'tr.key[data-access-key="{access_key}"] button.delete')
        expect(p.locator(f'tr.key[data-access-key="{access_key}"]')).to_have_count(0)
        assert any(kind == "confirm" and text.startswith(f"Delete key {name}") for kind, text in page.dialogs)
        cookie = [c["value"] for c in other.context.cookies() if c["name"] == "s3gw_console"][0]
        assert requests.get(url(console, "api/session"), cookies={"s3gw_console": cookie}).status_code == 401
    finally:
        other.close()
    assert access_key not in console.admin("keys", "list").stdout


def test_browser_operator_pages_are_not_offered_to_other_keys(page, console):
    key = console.create_key(f"console-plain-{uuid.uuid4().hex[:6]}")
    p = page.page
    page.sign_in(key["access_key"], key["secret_key"])
    expect(p.locator("#nav")).to_be_visible()
    expect(p.locator("#operator-nav")).to_be_hidden()
    for section in ["keys", "all-buckets", "health"]:
        expect(p.locator(f"#{section}")).to_be_hidden()


def test_browser_all_buckets_page_shows_owners_and_gives_a_bucket_away(page, console):
    s3 = root_s3(console)
    name = new_bucket("owned")
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="a", Body=b"12345")
    key = console.create_key(f"console-heir-{uuid.uuid4().hex[:6]}")
    p = page.page
    page.sign_in(console.access_key, console.secret_key)
    p.click('#nav button[data-page="all-buckets"]')
    row = f'#all-bucket-list tr.bucket[data-bucket="{name}"]'
    p.wait_for_selector(row)
    cells = p.locator(f"{row} td").all_text_contents()
    assert console.access_key in cells[1] and cells[3:5] == ["1", "5"], cells
    p.select_option(f"{row} select.new-owner", key["access_key"])
    p.click(f"{row} button.set-owner")
    expect(p.locator(f"{row} td.owner")).to_have_text(f"{key['name']} ({key['access_key']})")
    heir = make_s3_client(console.endpoint, Credentials(key["access_key"], key["secret_key"]))
    assert heir.get_object(Bucket=name, Key="a")["Body"].read() == b"12345"


def test_browser_health_page_shows_readiness_and_live_charts(page, console):
    p = page.page
    messages = []
    p.on("console", lambda message: messages.append(message.text))
    page.sign_in(console.access_key, console.secret_key)
    p.click('#nav button[data-page="health"]')
    p.wait_for_selector("#health:not([hidden])")
    expect(p.locator("#health-facts")).to_contain_text("ready (200)")
    expect(p.locator("#health-facts")).to_contain_text("Back end")
    if OZONE_OM:
        # Ozone: how its OM answers the gateway's calls (failures since the last poll), the OM
        # it believes leads, and the datanodes it has called (an object written and read: some).
        expect(p.locator("#health-facts")).to_contain_text("Ozone Manager calls")
        s3 = root_s3(console)
        bucket = f"health-{uuid.uuid4().hex[:8]}"
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="k", Body=b"x" * 1000)
        assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x" * 1000
        s3.delete_object(Bucket=bucket, Key="k")
        s3.delete_bucket(Bucket=bucket)
        metrics = requests.get(console.endpoint + "/metrics").text
        leaders = re.findall(r'^s3gw_ozone_om_leader\{address="([^"]+)"\} 1$', metrics, re.M)
        assert len(leaders) == 1, metrics
        reachable = re.findall(r'^s3gw_ozone_datanode_reachable\{datanode="[^"]+",host="[^"]+"\} 1$',
                               metrics, re.M)
        assert reachable, metrics
        expect(p.locator("#health-facts")).to_contain_text(f"OM leader{leaders[0]}")
        expect(p.locator("#health-facts")).to_contain_text(re.compile(r"Datanodes reachable[1-9]\d* of [1-9]"))
    else:
        # Embedded: the data dir's disk, from /metrics (statvfs of the data dir).
        metrics = requests.get(console.endpoint + "/metrics").text
        size, free = (float(re.search(rf"^s3gw_data_dir_{name}_bytes (\S+)$", metrics, re.M).group(1))
                      for name in ["filesystem", "available"])
        assert 0 < free <= size
        expect(p.locator("#health-facts")).to_contain_text(re.compile(r"Disk \(data dir\).* used of .* free"))
    s3 = root_s3(console)
    s3.list_buckets()
    expect(p.locator("#chart-rate")).to_have_attribute("data-samples", re.compile(r"^[1-9]"), timeout=15_000)
    first = int(p.get_attribute("#chart-rate", "data-samples"))
    for _ in range(20):
        s3.list_buckets()
    # (wait_for_function would evaluate a string, which the page's CSP refuses.)
    for _ in range(60):
        if int(p.get_attribute("#chart-rate", "data-samples")) >= first + 2:
            break
        p.wait_for_timeout(250)
    assert int(p.get_attribute("#chart-rate", "data-samples")) >= first + 2
    points = p.get_attribute("#chart-rate polyline", "points").split()
    assert len(points) >= first + 2
    assert p.locator("#health-ops td", has_text="ListBuckets").count() == 1
    # Leaving the page stops the polling.
    p.click('#nav button[data-page="buckets"]')
    shown = p.get_attribute("#chart-rate", "data-samples")
    p.wait_for_timeout(4500)
    assert p.get_attribute("#chart-rate", "data-samples") == shown
    assert not any("Content Security Policy" in m for m in messages), messages


# ---- Tags and metadata ----


def test_browser_edits_tags_and_metadata_as_text(page, console):
    s3 = root_s3(console)
    name = new_bucket("edit")
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="doc.txt", Body=b"body", ContentType="text/plain",
                  CacheControl="max-age=60", Metadata={"old": "1", "keep": "yes"})
    s3.put_object_tagging(Bucket=name, Key="doc.txt", Tagging={"TagSet": [{"Key": "team", "Value": "a"}]})
    p = page.page
    messages = []
    p.on("console", lambda message: messages.append(message.text))
    page.sign_in(console.access_key, console.secret_key)
    page.open_bucket(name)
    p.click('tr.object[data-key="doc.txt"] button.info')
    p.wait_for_selector("#details:not([hidden])")
    assert p.input_value("#tag-rows tr.pair input.name") == "team"
    # Versioning was never on: no versions to show.
    expect(p.locator("#versions-toggle")).to_be_hidden()

    # Tags: change one, add one whose value is markup.
    p.fill("#tag-rows tr.pair input.value", "b")
    p.click("#add-tag")
    p.locator("#tag-rows tr.pair input.name").nth(1).fill("xss")
    p.locator("#tag-rows tr.pair input.value").nth(1).fill(XSS_NAME)
    p.click("#save-tags")
    expect(p.locator("#status")).to_have_text("Saved 2 tag(s) of doc.txt.")
    tags = {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=name, Key="doc.txt")["TagSet"]}
    assert tags == {"team": "b", "xss": XSS_NAME}

    # Metadata: drop one, change one, add one whose value is markup; the
    # content type and cache control stay.
    rows = p.locator("#meta-rows tr.pair")
    names = [rows.nth(i).locator("input.name").input_value() for i in range(rows.count())]
    assert sorted(names) == ["keep", "old"]
    rows.nth(names.index("old")).locator("button.remove").click()
    p.locator("#meta-rows tr.pair input.value").first.fill("still")
    p.click("#add-meta")
    p.locator("#meta-rows tr.pair input.name").nth(1).fill("note")
    p.locator("#meta-rows tr.pair input.value").nth(1).fill(XSS_META)
    p.click("#save-meta")
    expect(p.locator("#status")).to_have_text("Saved 2 metadata value(s) of doc.txt.")
    head = s3.head_object(Bucket=name, Key="doc.txt")
    assert head["Metadata"] == {"keep": "still", "note": XSS_META}
    assert head["ContentType"] == "text/plain" and head["CacheControl"] == "max-age=60"
    assert s3.get_object(Bucket=name, Key="doc.txt")["Body"].read() == b"body"
    tags = {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=name, Key="doc.txt")["TagSet"]}
    assert tags == {"team": "b", "xss": XSS_NAME}

    # Read back into the page as text, never markup; nothing ran.
    details = p.text_content("#details-list")
    assert XSS_META in details and XSS_NAME in details
    values = p.locator("#details input.value")
    assert XSS_META in [values.nth(i).input_value() for i in range(values.count())]
    assert p.locator("#details img, #details script").count() == 0
    assert page.dialogs == []
    assert not any("Content Security Policy" in m for m in messages), messages

    # Every tag removed: the object's tagging is deleted.
    for _ in range(2):
        p.locator("#tag-rows tr.pair button.remove").first.click()
    p.click("#save-tags")
    expect(p.locator("#status")).to_have_text("Saved 0 tag(s) of doc.txt.")
    assert s3.get_object_tagging(Bucket=name, Key="doc.txt")["TagSet"] == []



# ---- Versions ----


@pytest.mark.skipif(bool(OZONE_OM), reason="Ozone keeps no versions")
def test_browser_shows_versions_and_delete_markers(page, console):
    s3 = root_s3(console)
    name = new_bucket("versions")
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    first = s3.put_object(Bucket=name, Key="v.txt", Body=b"one")["VersionId"]
    second = s3.put_object(Bucket=name, Key="v.txt", Body=b"two")["VersionId"]
    marker = s3.delete_object(Bucket=name, Key="v.txt")["VersionId"]
    p = page.page
    page.sign_in(console.access_key, console.secret_key)
    page.open_bucket(name)
    expect(p.locator("#versions-toggle")).to_be_visible()
    assert p.locator("tr.object").count() == 0
    p.check("#show-versions")
    p.wait_for_selector(f'tr.version.delete-marker[data-version="{marker}"]')
    assert p.locator("tr.version").count() == 3
    assert p.text_content(f'tr.version[data-version="{marker}"] td.name') == "v.txt (delete marker)"
    # Download a specific (older) version: a presigned GET naming it.
    with p.expect_download() as download:
        p.click(f'tr.version[data-version="{first}"] button.download')
    assert "versionId=" in download.value.url
    assert open(download.value.path(), "rb").read() == b"one"
    # Deleting the delete marker brings the object back; deleting a version removes it.
    p.click(f'tr.version[data-version="{marker}"] button.delete-version')
    expect(p.locator("tr.version")).to_have_count(2)
    assert s3.get_object(Bucket=name, Key="v.txt")["Body"].read() == b"two"
    p.click(f'tr.version[data-version="{first}"] button.delete-version')
    expect(p.locator("tr.version")).to_have_count(1)
    versions = s3.list_object_versions(Bucket=name)["Versions"]
    assert [v["VersionId"] for v in versions] == [second]
    assert any(kind == "confirm" and "cannot be undone" in text for kind, text in page.dialogs)
    p.uncheck("#show-versions")
    p.wait_for_selector('tr.object[data-key="v.txt"]')


# ---- Bucket settings ----

CORS_XML = ('<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><CORSRule>'
            "<AllowedOrigin>https://app.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
            "<AllowedHeader>*</AllowedHeader><MaxAgeSeconds>300</MaxAgeSeconds></CORSRule></CORSConfiguration>")
LIFECYCLE_XML = ('<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule>'
                 "<ID>old-logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>"
                 "<Expiration><Days>30</Days></Expiration></Rule></LifecycleConfiguration>")


def test_browser_sets_public_access_block_cors_and_lifecycle(page, console):
    s3 = root_s3(console)
    name = new_bucket("settings")
    s3.create_bucket(Bucket=name)
    p = page.page
    page.sign_in(console.access_key, console.secret_key)
    page.open_bucket(name)
    p.click("#settings summary")

    # Public access block: two flags on, read back through boto3 and by the page.
    for flag in ["BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets"]:
        expect(p.locator(f"#pab-{flag}")).not_to_be_checked()
    p.check("#pab-BlockPublicAcls")
    p.check("#pab-RestrictPublicBuckets")
    p.click("#save-public-access")
    expect(p.locator("#status")).to_have_text("Public access block saved.")
    assert s3.get_public_access_block(Bucket=name)["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "IgnorePublicAcls": False,
        "BlockPublicPolicy": False, "RestrictPublicBuckets": True}
    p.click("#back")
    page.open_bucket(name)
    expect(p.locator("#pab-RestrictPublicBuckets")).to_be_checked()
    expect(p.locator("#pab-IgnorePublicAcls")).not_to_be_checked()

    # CORS: S3's error for a document it refuses, then a rule it takes.
    p.fill("#cors", "<CORSConfiguration><CORSRule></CORSRule>")
    p.click("#save-cors")
    expect(p.locator("#cors-error")).to_contain_text("MalformedXML")
    with pytest.raises(s3.exceptions.ClientError):
        s3.get_bucket_cors(Bucket=name)
    p.fill("#cors", CORS_XML)
    p.click("#save-cors")
    expect(p.locator("#status")).to_have_text("CORS saved.")
    expect(p.locator("#cors-error")).to_have_text("")
    rules = s3.get_bucket_cors(Bucket=name)["CORSRules"]
    assert rules[0]["AllowedOrigins"] == ["https://app.example"] and rules[0]["MaxAgeSeconds"] == 300

    # Lifecycle: S3's own validation error (no days), then a rule it takes.
    p.fill("#lifecycle", LIFECYCLE_XML.replace("<Days>30</Days>", "<Days>0</Days>"))
    p.click("#save-lifecycle")
    expect(p.locator("#lifecycle-error")).to_contain_text("InvalidArgument")
    p.fill("#lifecycle", LIFECYCLE_XML)
    p.click("#save-lifecycle")
    expect(p.locator("#status")).to_have_text("Lifecycle saved.")
    rule = s3.get_bucket_lifecycle_configuration(Bucket=name)["Rules"][0]
    assert rule["ID"] == "old-logs" and rule["Expiration"] == {"Days": 30}

    # What the bucket has is what the page shows when it is opened again
    # (the settings stay unfolded).
    p.click("#back")
    page.open_bucket(name)
    expect(p.locator("#cors")).to_have_value(re.compile("https://app.example"))
    expect(p.locator("#lifecycle")).to_have_value(re.compile("old-logs"))

    # Deleted, each through its own S3 call.
    for setting, label in [("public-access", "Public access block"), ("cors", "CORS"), ("lifecycle", "Lifecycle")]:
        p.click(f"#delete-{setting}")
        expect(p.locator("#status")).to_have_text(f"{label} deleted.")
    expect(p.locator("#pab-BlockPublicAcls")).not_to_be_checked()
    expect(p.locator("#cors")).to_have_value("")
    for call, code in [(s3.get_public_access_block, "NoSuchPublicAccessBlockConfiguration"),
                       (s3.get_bucket_cors, "NoSuchCORSConfiguration"),
                       (s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration")]:
        with pytest.raises(s3.exceptions.ClientError) as refused:
            call(Bucket=name)
        assert refused.value.response["Error"]["Code"] == code


@pytest.mark.skipif(bool(OZONE_OM), reason="Ozone keeps no versions, so no object lock")
def test_browser_sets_an_object_lock_default_retention(page, console):
    s3 = root_s3(console)
    plain = new_bucket("nolock")
    s3.create_bucket(Bucket=plain)
    locked = new_bucket("lock")
    s3.create_bucket(Bucket=locked, ObjectLockEnabledForBucket=True)
    p = page.page
    page.sign_in(console.access_key, console.secret_key)

    page.open_bucket(plain)
    p.click("#settings summary")
    expect(p.locator("#object-lock-state")).to_contain_text("Not enabled on this bucket")
    expect(p.locator("#object-lock-editor")).to_be_hidden()

    p.click("#back")
    page.open_bucket(locked)
    expect(p.locator("#object-lock-state")).to_have_text("Enabled; no default retention.")
    expect(p.locator("#object-lock-editor")).to_be_visible()
    # S3's own refusal of a period of 0 days, shown beside the setting.
    p.select_option("#lock-mode", "GOVERNANCE")
    p.fill("#lock-period", "0")
    p.click("#save-object-lock")
    expect(p.locator("#object-lock-error")).to_contain_text("InvalidArgument")
    assert "Rule" not in s3.get_object_lock_configuration(Bucket=locked)["ObjectLockConfiguration"]
    p.fill("#lock-period", "3")
    p.click("#save-object-lock")
    expect(p.locator("#status")).to_have_text("Object lock saved.")
    expect(p.locator("#object-lock-state")).to_have_text("Enabled; new objects are kept 3 day(s) in GOVERNANCE mode.")
    config = s3.get_object_lock_configuration(Bucket=locked)["ObjectLockConfiguration"]
    assert config == {"ObjectLockEnabled": "Enabled",
                      "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 3}}}
    # The default applies to what is written next.
    version = s3.put_object(Bucket=locked, Key="kept", Body=b"x")["VersionId"]
    assert s3.get_object_retention(Bucket=locked, Key="kept", VersionId=version)["Retention"]["Mode"] == "GOVERNANCE"
    # In years, then no default at all.
    p.select_option("#lock-mode", "COMPLIANCE")
    p.select_option("#lock-unit", "Years")
    p.fill("#lock-period", "1")
    p.click("#save-object-lock")
    expect(p.locator("#object-lock-state")).to_have_text("Enabled; new objects are kept 1 year(s) in COMPLIANCE mode.")
    assert s3.get_object_lock_configuration(Bucket=locked)["ObjectLockConfiguration"]["Rule"] == {
        "DefaultRetention": {"Mode": "COMPLIANCE", "Years": 1}}
    p.select_option("#lock-mode", "")
    p.click("#save-object-lock")
    expect(p.locator("#object-lock-state")).to_have_text("Enabled; no default retention.")
    assert "Rule" not in s3.get_object_lock_configuration(Bucket=locked)["ObjectLockConfiguration"]


# ---- Folders ----


def test_browser_uploads_a_folder_keeping_its_paths(page, console, tmp_path):
    s3 = root_s3(console)
    name = new_bucket("folder")
    s3.create_bucket(Bucket=name)
    folder = tmp_path / "site"
    (folder / "css").mkdir(parents=True)
    (folder / "index.html").write_bytes(b"<h1>hi</h1>")
    (folder / "css" / "main.css").write_bytes(b"h1 {}")
    (folder / "css" / XSS_NAME).write_bytes(b"x" * 4096)
    p = page.page
    page.sign_in(console.access_key, console.secret_key)
    page.open_bucket(name)
    # Into the prefix shown: the folder's own name and its paths follow it.
    s3.put_object(Bucket=name, Key="www/.keep", Body=b"")
    p.click("#back")
    page.open_bucket(name)
    p.click('tr.folder[data-prefix="www/"]')
    p.wait_for_selector('tr.object[data-key="www/.keep"]')
    p.set_input_files("#upload-folder", str(folder))
    expect(p.locator("#status")).to_have_text("Uploaded 3 file(s).", timeout=60_000)
    expected = {"www/site/index.html": b"<h1>hi</h1>", "www/site/css/main.css": b"h1 {}",
                f"www/site/css/{XSS_NAME}": b"x" * 4096}
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=name, Prefix="www/site/")["Contents"]}
    assert keys == set(expected)
    for key, body in expected.items():
        assert s3.get_object(Bucket=name, Key=key)["Body"].read() == body
        # A progress bar and events per file, each to its whole size.
        p.wait_for_selector(f'#uploads li.done[data-key="{key}"]')
        events = [e for e in p.evaluate("window.__progress") if e["name"] == key]
        assert events and events[-1]["loaded"] == len(body) == events[-1]["total"], (key, events)
    assert p.locator("#uploads img").count() == 0 and page.dialogs == []
    p.wait_for_selector('tr.folder[data-prefix="www/site/"]')


# ---- Resumable uploads ----

RESUMABLE = "s3gw-console-uploads"
RESUME_FIELDS = {"accessKey", "bucket", "key", "uploadId", "name", "size", "lastModified", "partSize"}
PART = 8 * MIB


def interrupted_root_upload(page, console, hint, tmp_path):
    """A new bucket and a file of six parts (five of 8 MiB and a short last one) that
    the root key starts uploading in the page: its part 2 is held once part 1 is
    stored (part 2 starts only then) and the page reloaded, the upload unfinished."""
    name = new_bucket(hint)
    root_s3(console).create_bucket(Bucket=name)
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(5 * PART + 12345))
    page.sign_in(console.access_key, console.secret_key)
    page.open_bucket(name)
    p = page.page
    held = []
    p.route(lambda u: "partNumber=2&" in u, lambda route: held.append(route))
    p.set_input_files("#upload", str(big))
    for _ in range(600):
        if held:
            break
        p.wait_for_timeout(100)
    assert held, "part 2 never started"
    loaded = [e["loaded"] for e in p.evaluate("window.__progress") if e["name"] == big.name]
    assert max(loaded) >= PART, loaded
    # Part 2 stays held through the reload (unrouting first would let it go on).
    p.reload()
    p.unroute_all(behavior="ignoreErrors")
    # The session cookie outlives the reload: signed in again without a form.
    p.wait_for_selector("#buckets:not([hidden])")
    return name, big


def remembered(p):
    return p.evaluate(f"JSON.parse(localStorage.getItem('{RESUMABLE}'))")


def pick_and_count_parts(page, big):
    """Picks BIG again and waits for it to finish; the part numbers the page sent."""
    p = page.page
    sent = []
    p.on("request", lambda r: sent.append(int(re.search(r"partNumber=(\d+)", r.url).group(1)))
         if r.method == "PUT" and "partNumber=" in r.url else None)
    p.evaluate("window.__progress = []")
    p.set_input_files("#upload", str(big))
    p.wait_for_selector(f'#uploads li.done[data-key="{big.name}"]', timeout=120_000)
    return sent


def test_browser_resumes_a_multipart_upload_after_a_reload(page, console, tmp_path):
    s3 = root_s3(console)
    name, big = interrupted_root_upload(page, console, "resume", tmp_path)
    p = page.page

    uploads = s3.list_multipart_uploads(Bucket=name)["Uploads"]
    assert [u["Key"] for u in uploads] == ["big.bin"]
    upload_id = uploads[0]["UploadId"]
    listed = s3.list_parts(Bucket=name, Key="big.bin", UploadId=upload_id)["Parts"]
    assert [(x["PartNumber"], x["Size"]) for x in listed] == [(1, PART)]
    # What the page remembers: no secret, nothing but the upload's identity.
    [entry] = remembered(p)
    assert set(entry) == RESUME_FIELDS
    assert entry["accessKey"] == console.access_key and entry["uploadId"] == upload_id
    assert (entry["bucket"], entry["key"], entry["name"], entry["size"]) == (name, "big.bin", "big.bin",
                                                                          big.stat().st_size)
    assert console.secret_key not in p.evaluate("JSON.stringify(localStorage)")

    page.open_bucket(name)
    sent = pick_and_count_parts(page, big)
    expect(p.locator('#uploads li[data-key="big.bin"] .resume')).to_have_text(
        "resuming: 1 of 6 parts already uploaded")
    assert sorted(sent) == [2, 3, 4, 5, 6], sent
    loaded = [e["loaded"] for e in p.evaluate("window.__progress") if e["name"] == "big.bin"]
    assert loaded[0] == PART and loaded == sorted(loaded) and loaded[-1] == big.stat().st_size, loaded
    got = s3.get_object(Bucket=name, Key="big.bin")
    assert hashlib.md5(got["Body"].read()).hexdigest() == hashlib.md5(big.read_bytes()).hexdigest()
    assert got["ETag"].endswith('-6"')
    assert s3.list_multipart_uploads(Bucket=name).get("Uploads", []) == []
    assert remembered(p) is None
    assert page.dialogs == []


def test_browser_another_key_never_resumes_the_first_keys_upload(page, console, tmp_path):
    name, big = interrupted_root_upload(page, console, "resume-other", tmp_path)
    p = page.page
    [first] = remembered(p)
    assert first["accessKey"] == console.access_key

    # The same browser, another key, the same bucket (given to it) and file.
    other = console.create_key(f"console-resume-{uuid.uuid4().hex[:6]}")
    console.admin("buckets", "set-owner", name, other["access_key"])
    page.context.clear_cookies()
    page.sign_in(other["access_key"], other["secret_key"])
    page.open_bucket(name)
    sent = pick_and_count_parts(page, big)
    expect(p.locator('#uploads li[data-key="big.bin"] .resume')).to_have_text("")
    assert sorted(sent) == [1, 2, 3, 4, 5, 6], sent
    theirs = make_s3_client(console.endpoint, Credentials(other["access_key"], other["secret_key"]))
    got = theirs.get_object(Bucket=name, Key="big.bin")
    assert hashlib.md5(got["Body"].read()).hexdigest() == hashlib.md5(big.read_bytes()).hexdigest()
    # The first key's upload is untouched, and still remembered for it alone.
    uploads = theirs.list_multipart_uploads(Bucket=name)["Uploads"]
    assert [u["UploadId"] for u in uploads] == [first["uploadId"]]
    assert remembered(p) == [first]

    # Signing out forgets only the signed-out key's uploads.
    p.click("#sign-out")
    p.wait_for_selector("#sign-in:not([hidden])")
    assert remembered(p) == [first]
    page.sign_in(console.access_key, console.secret_key)
    p.click("#sign-out")
    p.wait_for_selector("#sign-in:not([hidden])")
    expect(p.locator("#status")).to_have_text("Signed out.")
    assert remembered(p) is None


# ---- TLS ----


def test_the_session_cookie_is_secure_over_tls(tmp_path):
    """Served over TLS, the console's cookie carries Secure (and still HttpOnly, SameSite=Strict)."""
    if external_endpoint() is not None:
        pytest.skip("starts its own server (S3_ENDPOINT is set)")
    server = Launched(tmp_path, "--console", "true", "--tls-cert", str(FIXTURES / "tls-cert.pem"),
                      "--tls-key", str(FIXTURES / "tls-key.pem"))
    try:
        assert server.endpoint.startswith("https://"), server.endpoint
        base = f"{server.endpoint}/_s3gw/console/"
        session = requests.Session()
        session.verify = str(FIXTURES / "test-ca.pem")  # its certificate names 127.0.0.1
        session.trust_env = False  # a CA bundle in the environment would replace it
        answer = session.post(base + "api/session", json={"access_key": server.access, "secret_key": server.secret})
        assert answer.status_code == 200, answer.text
        attributes = [part.strip() for part in answer.headers["Set-Cookie"].split(";")]
        assert {"Secure", "HttpOnly", "SameSite=Strict"} <= set(attributes), attributes
        csrf = {"X-CSRF-Token": answer.json()["csrf_token"]}
        # The session works over TLS, and signing out ends it with a Secure cookie too.
        listing = session.get(base + "s3/", headers=csrf)
        assert listing.status_code == 200 and "<ListAllMyBucketsResult" in listing.text
        out = session.delete(base + "api/session", headers=csrf)
        assert out.status_code == 204 and "Secure" in [p.strip() for p in out.headers["Set-Cookie"].split(";")]
    finally:
        server.close()


# ---- Screenshots for docs/console.md ----


@pytest.mark.skipif(not os.environ.get("S3GW_CONSOLE_SCREENSHOTS"),
                    reason="set S3GW_CONSOLE_SCREENSHOTS=DIR to write the operator pages' screenshots")
def test_screenshots_of_the_operator_pages(chromium, console):
    """Writes console-keys.png, console-all-buckets.png, console-health.png,
    console-edit.png and console-bucket-settings.png (docs/console/) to
    $S3GW_CONSOLE_SCREENSHOTS."""
    out = os.environ["S3GW_CONSOLE_SCREENSHOTS"]
    s3 = root_s3(console)
    for bucket in ["photos", "reports"]:
        s3.create_bucket(Bucket=bucket)
    for i in range(3):
        s3.put_object(Bucket="photos", Key=f"2026/img-{i}.jpg", Body=os.urandom(2048 * (i + 1)),
                      ContentType="image/jpeg")
    s3.put_object(Bucket="reports", Key="q3.csv", Body=b"a,b\n1,2\n", ContentType="text/csv",
                  Metadata={"author": "alice"})
    s3.put_object_tagging(Bucket="reports", Key="q3.csv",
                          Tagging={"TagSet": [{"Key": "team", "Value": "finance"}]})
    console.create_key("alice")
    context = chromium.new_context(viewport={"width": 1100, "height": 700})
    try:
        p = context.new_page()
        p.on("dialog", lambda dialog: dialog.accept())
        p.goto(url(console))
        p.fill("#access-key", console.access_key)
        p.fill("#secret-key", console.secret_key)
        p.click("#sign-in button[type=submit]")
        p.wait_for_selector("#buckets:not([hidden])")
        p.click('#nav button[data-page="keys"]')
        p.fill("#new-key", "bob")
        p.click("#create-key button[type=submit]")
        p.wait_for_selector("#secret-dialog[open]")
        p.wait_for_selector('tr.key td.name:text-is("bob")')
        p.screenshot(path=os.path.join(out, "console-keys.png"))
        p.click("#secret-done")
        p.click('#nav button[data-page="all-buckets"]')
        p.wait_for_selector('#all-bucket-list tr.bucket[data-bucket="reports"]')
        p.screenshot(path=os.path.join(out, "console-all-buckets.png"))
        p.click('#nav button[data-page="health"]')
        for _ in range(8):
            for _ in range(30):
                s3.list_objects_v2(Bucket="photos")
            with pytest.raises(s3.exceptions.NoSuchKey):
                s3.get_object(Bucket="photos", Key="nothing-here")
            p.wait_for_timeout(2000)
        p.screenshot(path=os.path.join(out, "console-health.png"), full_page=True)
        p.click('#nav button[data-page="buckets"]')
        p.click('#bucket-list li[data-bucket="reports"] button.open')
        p.click('tr.object[data-key="q3.csv"] button.info')
        p.wait_for_selector("#details:not([hidden])")
        p.click("#add-tag")
        p.locator("#tag-rows tr.pair input.name").nth(1).fill("review")
        p.locator("#tag-rows tr.pair input.value").nth(1).fill("2026-12")
        p.screenshot(path=os.path.join(out, "console-edit.png"), full_page=True)
        s3.create_bucket(Bucket="archive", ObjectLockEnabledForBucket=True)
        s3.put_public_access_block(Bucket="archive", PublicAccessBlockConfiguration={
            "BlockPublicAcls": True, "IgnorePublicAcls": True,
            "BlockPublicPolicy": True, "RestrictPublicBuckets": True})
        s3.put_object_lock_configuration(Bucket="archive", ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 30}}})
        p.click('#nav button[data-page="buckets"]')
        p.click('#bucket-list li[data-bucket="archive"] button.open')
        p.click("#settings summary")
        p.fill("#lifecycle", LIFECYCLE_XML)
        p.click("#save-lifecycle")
        p.wait_for_selector("#status.ok")
        p.fill("#cors", CORS_XML.replace("<AllowedMethod>GET</AllowedMethod>", "<AllowedMethod>FETCH</AllowedMethod>"))
        p.click("#save-cors")
        p.wait_for_selector("#cors-error:not(:empty)")
        p.locator("#settings").screenshot(path=os.path.join(out, "console-bucket-settings.png"))
    finally:
        context.close()
