"""A real browser against the gateway: headless Chromium on a page from another origin uses
presigned URLs with fetch() (a PUT, which needs a preflight, then a GET), as a web app does.
The bucket's CORS rules decide: the allowed origin gets its bytes back, another is refused
by the browser itself. Chromium comes from Debian (scripts/install-browser)."""

import json

import pytest

from browser import CHROMIUM, PageServer, run_page
from conftest import payload

PAGE = """<!doctype html><meta charset="utf-8"><title>cors</title><script>
const job = %s;
async function report(result) {
  await fetch("/result", {method: "POST", body: JSON.stringify(result)});
}
async function main() {
  const bytes = new Uint8Array(job.data);
  let put;
  try {
    put = await fetch(job.put, {method: "PUT", body: bytes, headers: {"Content-Type": "application/x-test"}});
  } catch (e) {
    return report({stage: "put", refused: String(e)});
  }
  const got = await fetch(job.get);
  const back = new Uint8Array(await got.arrayBuffer());
  report({stage: "done", putStatus: put.status, putEtag: put.headers.get("ETag"),
          getStatus: got.status, data: Array.from(back),
          contentType: got.headers.get("Content-Type")});
}
main().catch(e => report({stage: "error", error: String(e)}));
</script>"""

@pytest.fixture
def page_server():
    assert CHROMIUM, "no chromium on PATH: run scripts/install-browser"
    servers = []

    def start(job: dict) -> PageServer:
        server = PageServer(PAGE % json.dumps(job))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def presigned_job(client, bucket, key, data):
    return {
        "put": client.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=600),
        "get": client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=600),
        "data": list(data),
    }


def allow_origin(client, bucket, origin):
    client.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [{
        "AllowedOrigins": [origin], "AllowedMethods": ["GET", "PUT"], "AllowedHeaders": ["*"],
        "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 60,
    }]})


def test_a_page_on_an_allowed_origin_puts_and_gets_with_presigned_urls(root_s3, bucket, page_server):
    data = payload(3000, "browser")
    server = page_server(presigned_job(root_s3, bucket, "from-browser", data))
    allow_origin(root_s3, bucket, f"http://127.0.0.1:{server.port}")
    result = run_page(f"http://127.0.0.1:{server.port}/", server)
    assert result["stage"] == "done", result
    assert (result["putStatus"], result["getStatus"]) == (200, 200)
    assert bytes(result["data"]) == data
    assert result["contentType"] == "application/x-test"
    # ETag is readable by the page only because the rule exposes it.
    stored = root_s3.head_object(Bucket=bucket, Key="from-browser")
    assert result["putEtag"] == stored["ETag"]


def test_a_page_on_another_origin_is_refused_by_the_browser(root_s3, bucket, page_server):
    data = b"never stored"
    server = page_server(presigned_job(root_s3, bucket, "refused", data))
    allow_origin(root_s3, bucket, f"http://127.0.0.1:{server.port}")
    # Same server, but reached as localhost: another origin, which no rule allows.
    result = run_page(f"http://localhost:{server.port}/", server)
    assert result["stage"] == "put", result
    assert "Failed to fetch" in result["refused"]
    # The preflight failed, so the browser never sent the PUT.
    assert root_s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0
