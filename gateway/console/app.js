// The s3-gateway console: plain DOM, no framework, no build step. Every
// name and value from the server is set with textContent or as a property,
// never parsed as HTML; the page's CSP allows only its own files.

const API = "/_s3gw/console/";
const MULTIPART_OVER = 16 * 1024 * 1024;
const PART_SIZE = 8 * 1024 * 1024;
const PAGE_SIZE = 50;
const S3NS = "http://s3.amazonaws.com/doc/2006-03-01/";

let csrf = null;
const view = { bucket: null, prefix: "", token: null };
const $ = (id) => document.getElementById(id);

function status(text, ok = false) {
  $("status").textContent = text;
  $("status").className = ok ? "ok" : "";
}

function element(tag, text, props = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  Object.assign(node, props);
  return node;
}

function encodeKey(key) {
  return key.split("/").map(encodeURIComponent).join("/");
}

function query(params) {
  return Object.entries(params)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
}

async function api(method, path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (csrf) headers["X-CSRF-Token"] = csrf;
  const response = await fetch(API + path, {
    method,
    headers,
    body: options.body,
    credentials: "same-origin",
    cache: "no-store",
  });
  if (response.status === 401 && path !== "api/session") {
    signedOut((await errorOf(response)) || "The session ended.");
    throw new Error("signed out");
  }
  return response;
}

const s3 = (method, path, options) => api(method, "s3/" + path, options);

// The Code and Message of an S3 XML error or a console JSON one.
async function errorOf(response) {
  const text = await response.text();
  try {
    const json = JSON.parse(text);
    return `${json.code}: ${json.message}`;
  } catch (_) {
    const doc = new DOMParser().parseFromString(text, "application/xml");
    const code = doc.getElementsByTagName("Code")[0];
    const message = doc.getElementsByTagName("Message")[0];
    if (code) return `${code.textContent}: ${message ? message.textContent : ""}`;
    return `${response.status} ${response.statusText}`;
  }
}

async function expectOk(response, what) {
  if (!response.ok) {
    const why = await errorOf(response);
    throw new Error(`${what}: ${why}`);
  }
  return response;
}

async function xml(response) {
  return new DOMParser().parseFromString(await response.text(), "application/xml");
}

const all = (node, tag) => Array.from(node.getElementsByTagName(tag));
const textOf = (node, tag) => {
  const found = node.getElementsByTagName(tag)[0];
  return found ? found.textContent : "";
};

function show(section) {
  for (const id of ["sign-in", "buckets", "browser"]) $(id).hidden = id !== section;
  $("sign-out").hidden = section === "sign-in";
}

function signedOut(message) {
  csrf = null;
  $("who").textContent = "";
  show("sign-in");
  status(message || "");
}

function signedIn(session) {
  csrf = session.csrf_token;
  $("who").textContent = `Signed in as ${session.access_key}`;
  $("secret-key").value = "";
  status("");
  listBuckets();
}

async function run(action) {
  try {
    await action();
  } catch (error) {
    if (error.message !== "signed out") status(error.message);
  }
}

// ---- Buckets ----

async function listBuckets() {
  show("buckets");
  const response = await expectOk(await s3("GET", ""), "Listing buckets");
  const list = $("bucket-list");
  list.replaceChildren();
  for (const bucket of all(await xml(response), "Bucket")) {
    const name = textOf(bucket, "Name");
    const item = element("li");
    item.dataset.bucket = name;
    const open = element("button", name, { type: "button", className: "open" });
    open.addEventListener("click", () => run(() => openBucket(name)));
    const remove = element("button", "Delete", { type: "button", className: "delete" });
    remove.addEventListener("click", () =>
      run(async () => {
        if (!confirm(`Delete bucket ${name}?`)) return;
        await expectOk(await s3("DELETE", encodeURIComponent(name)), "Deleting the bucket");
        status(`Deleted bucket ${name}.`, true);
        await listBuckets();
      }),
    );
    item.append(open, " ", remove);
    list.append(item);
  }
}

// ---- Objects ----

async function openBucket(name) {
  view.bucket = name;
  view.prefix = "";
  $("bucket-name").textContent = name;
  $("details").hidden = true;
  show("browser");
  await Promise.all([listObjects(false), loadSettings()]);
}

async function openPrefix(prefix) {
  view.prefix = prefix;
  await listObjects(false);
}

async function listObjects(more) {
  const body = $("objects");
  if (!more) {
    body.replaceChildren();
    view.token = null;
  }
  $("prefix").textContent = view.prefix;
  const q = query({
    "list-type": "2",
    delimiter: "/",
    "max-keys": String(PAGE_SIZE),
    prefix: view.prefix,
    "continuation-token": more ? view.token : null,
  });
  const response = await expectOk(
    await s3("GET", `${encodeURIComponent(view.bucket)}?${q}`),
    "Listing objects",
  );
  const doc = await xml(response);
  if (view.prefix && !more) {
    const parent = view.prefix.replace(/[^/]*\/$/, "");
    const row = element("tr", undefined, { className: "folder up" });
    row.append(element("td", ".."));
    row.addEventListener("click", () => run(() => openPrefix(parent)));
    body.append(row);
  }
  for (const common of all(doc, "CommonPrefixes")) {
    const prefix = textOf(common, "Prefix");
    const row = element("tr", undefined, { className: "folder" });
    row.dataset.prefix = prefix;
    row.append(element("td", prefix.slice(view.prefix.length)), element("td"), element("td"));
    row.addEventListener("click", () => run(() => openPrefix(prefix)));
    body.append(row);
  }
  for (const object of all(doc, "Contents")) body.append(objectRow(object));
  const truncated = textOf(doc, "IsTruncated") === "true";
  view.token = truncated ? textOf(doc, "NextContinuationToken") : null;
  $("more").hidden = !truncated;
}

function objectRow(object) {
  const key = textOf(object, "Key");
  const row = element("tr", undefined, { className: "object" });
  row.dataset.key = key;
  row.append(
    element("td", key.slice(view.prefix.length), { className: "name" }),
    element("td", textOf(object, "Size")),
    element("td", textOf(object, "LastModified")),
  );
  const actions = element("td");
  const button = (label, action) => {
    const b = element("button", label, { type: "button", className: label.toLowerCase() });
    b.addEventListener("click", () => run(() => action(key)));
    actions.append(b, " ");
  };
  button("Download", download);
  button("Share", share);
  button("Info", info);
  button("Delete", deleteObject);
  row.append(actions);
  return row;
}

async function presign(key, expires, download) {
  const response = await expectOk(
    await api("POST", "api/presign", {
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ bucket: view.bucket, key, expires, download }),
    }),
    "Signing a link",
  );
  return location.origin + (await response.json()).url;
}

async function download(key) {
  const link = element("a", undefined, { href: await presign(key, 300, true) });
  link.download = "";
  document.body.append(link);
  link.click();
  link.remove();
}

async function share(key) {
  const url = await presign(key, Number($("expiry").value), false);
  await info(key);
  $("share-url").value = url;
  $("share-url").select();
  status("Share link ready.", true);
}

async function info(key) {
  const path = `${encodeURIComponent(view.bucket)}/${encodeKey(key)}`;
  const head = await expectOk(await s3("HEAD", path), "Reading the object");
  const list = $("details-list");
  list.replaceChildren();
  const add = (name, value) => list.append(element("dt", name), element("dd", value));
  for (const name of ["content-type", "content-length", "etag", "last-modified"]) {
    add(name, head.headers.get(name) || "");
  }
  for (const [name, value] of head.headers) {
    if (name.startsWith("x-amz-meta-")) add(name, value);
  }
  const tagging = await s3("GET", `${path}?tagging`);
  if (tagging.ok) {
    for (const tag of all(await xml(tagging), "Tag")) {
      add(`tag ${textOf(tag, "Key")}`, textOf(tag, "Value"));
    }
  }
  $("details-key").textContent = key;
  $("share-url").value = "";
  $("details").hidden = false;
}

async function deleteObject(key) {
  if (!confirm(`Delete ${key}?`)) return;
  const path = `${encodeURIComponent(view.bucket)}/${encodeKey(key)}`;
  await expectOk(await s3("DELETE", path), "Deleting the object");
  status(`Deleted ${key}.`, true);
  await listObjects(false);
}

async function deletePrefix() {
  const keys = [];
  let token = null;
  do {
    const q = query({ "list-type": "2", prefix: view.prefix, "continuation-token": token });
    const doc = await xml(
      await expectOk(await s3("GET", `${encodeURIComponent(view.bucket)}?${q}`), "Listing"),
    );
    for (const object of all(doc, "Contents")) keys.push(textOf(object, "Key"));
    token = textOf(doc, "IsTruncated") === "true" ? textOf(doc, "NextContinuationToken") : null;
  } while (token);
  const where = view.prefix || "the bucket";
  if (!confirm(`Delete ${keys.length} objects under ${where}?`)) return;
  for (const key of keys) {
    const path = `${encodeURIComponent(view.bucket)}/${encodeKey(key)}`;
    await expectOk(await s3("DELETE", path), `Deleting ${key}`);
  }
  status(`Deleted ${keys.length} objects.`, true);
  await listObjects(false);
}

// ---- Uploads ----

function progressEvent(name, loaded, total) {
  document.dispatchEvent(
    new CustomEvent("s3gw-upload-progress", { detail: { name, loaded, total } }),
  );
}

function put(path, body, onProgress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open("PUT", API + "s3/" + path);
    request.setRequestHeader("X-CSRF-Token", csrf);
    request.upload.addEventListener("progress", (e) => onProgress(e.loaded));
    request.addEventListener("load", () => {
      if (request.status >= 200 && request.status < 300) resolve(request);
      else reject(new Error(`Upload refused: ${request.status} ${request.responseText.slice(0, 300)}`));
    });
    request.addEventListener("error", () => reject(new Error("Upload failed: network error")));
    request.send(body);
  });
}

async function upload(file) {
  const key = view.prefix + file.name;
  const path = `${encodeURIComponent(view.bucket)}/${encodeKey(key)}`;
  const bar = element("progress", undefined, { max: file.size || 1, value: 0 });
  const item = element("li");
  item.dataset.key = key;
  item.append(element("span", key + " "), bar);
  $("uploads").append(item);
  const report = (loaded) => {
    bar.value = loaded;
    progressEvent(key, loaded, file.size);
  };
  if (file.size <= MULTIPART_OVER) {
    await put(path, file, report);
  } else {
    const created = await expectOk(await s3("POST", `${path}?uploads`), "Starting the upload");
    const uploadId = textOf(await xml(created), "UploadId");
    const parts = [];
    try {
      for (let start = 0, number = 1; start < file.size; start += PART_SIZE, number++) {
        const q = query({ partNumber: String(number), uploadId });
        const done = start;
        const answer = await put(`${path}?${q}`, file.slice(start, start + PART_SIZE), (n) =>
          report(done + n),
        );
        parts.push([number, answer.getResponseHeader("ETag")]);
      }
      const doc = document.implementation.createDocument(S3NS, "CompleteMultipartUpload");
      for (const [number, etag] of parts) {
        const part = doc.createElementNS(S3NS, "Part");
        const n = doc.createElementNS(S3NS, "PartNumber");
        n.textContent = String(number);
        const e = doc.createElementNS(S3NS, "ETag");
        e.textContent = etag;
        part.append(n, e);
        doc.documentElement.append(part);
      }
      await expectOk(
        await s3("POST", `${path}?${query({ uploadId })}`, {
          headers: { "Content-Type": "application/xml" },
          body: new XMLSerializer().serializeToString(doc),
        }),
        "Completing the upload",
      );
    } catch (error) {
      await s3("DELETE", `${path}?${query({ uploadId })}`).catch(() => {});
      throw error;
    }
  }
  report(file.size);
  item.classList.add("done");
}

async function uploadAll(files) {
  for (const file of files) await upload(file);
  status(`Uploaded ${files.length} file(s).`, true);
  await listObjects(false);
}

// ---- Bucket settings ----

async function loadSettings() {
  const bucket = encodeURIComponent(view.bucket);
  $("policy-error").textContent = "";
  const versioning = await s3("GET", `${bucket}?versioning`);
  $("versioning").checked = versioning.ok && textOf(await xml(versioning), "Status") === "Enabled";
  const policy = await s3("GET", `${bucket}?policy`);
  $("policy").value = policy.ok ? await policy.text() : "";
}

async function setVersioning() {
  const state = $("versioning").checked ? "Enabled" : "Suspended";
  const body = `<VersioningConfiguration xmlns="${S3NS}"><Status>${state}</Status></VersioningConfiguration>`;
  await expectOk(
    await s3("PUT", `${encodeURIComponent(view.bucket)}?versioning`, {
      headers: { "Content-Type": "application/xml" },
      body,
    }),
    "Setting versioning",
  );
  status(`Versioning ${state.toLowerCase()}.`, true);
}

async function savePolicy() {
  $("policy-error").textContent = "";
  const response = await s3("PUT", `${encodeURIComponent(view.bucket)}?policy`, {
    headers: { "Content-Type": "application/json" },
    body: $("policy").value,
  });
  if (!response.ok) {
    $("policy-error").textContent = await errorOf(response);
    return;
  }
  status("Policy saved.", true);
}

async function deletePolicy() {
  await expectOk(
    await s3("DELETE", `${encodeURIComponent(view.bucket)}?policy`),
    "Deleting the policy",
  );
  $("policy").value = "";
  status("Policy deleted.", true);
}

// ---- Wiring ----

function wire() {
  $("sign-in").addEventListener("submit", (event) => {
    event.preventDefault();
    run(async () => {
      const response = await fetch(API + "api/session", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        credentials: "same-origin",
        body: JSON.stringify({
          access_key: $("access-key").value,
          secret_key: $("secret-key").value,
        }),
      });
      if (!response.ok) {
        status(await errorOf(response));
        return;
      }
      signedIn(await response.json());
    });
  });
  $("sign-out").addEventListener("click", () =>
    run(async () => {
      await api("DELETE", "api/session");
      signedOut("Signed out.");
    }),
  );
  $("create-bucket").addEventListener("submit", (event) => {
    event.preventDefault();
    run(async () => {
      const name = $("new-bucket").value.trim();
      await expectOk(await s3("PUT", encodeURIComponent(name)), "Creating the bucket");
      $("new-bucket").value = "";
      status(`Created bucket ${name}.`, true);
      await listBuckets();
    });
  });
  $("back").addEventListener("click", (event) => {
    event.preventDefault();
    run(listBuckets);
  });
  $("more").addEventListener("click", () => run(() => listObjects(true)));
  $("upload").addEventListener("change", (event) => {
    const files = Array.from(event.target.files);
    event.target.value = "";
    run(() => uploadAll(files));
  });
  $("delete-prefix").addEventListener("click", () => run(deletePrefix));
  $("versioning").addEventListener("change", () => run(setVersioning));
  $("save-policy").addEventListener("click", () => run(savePolicy));
  $("delete-policy").addEventListener("click", () => run(deletePolicy));
}

async function start() {
  wire();
  const response = await fetch(API + "api/session", { credentials: "same-origin" });
  if (response.ok) signedIn(await response.json());
  else signedOut("");
}

start();
