// The s3-gateway console: plain DOM, no framework, no build step. Every
// name and value from the server is set with textContent or as a property,
// never parsed as HTML; the page's CSP allows only its own files.

const API = "/_s3gw/console/";
const MULTIPART_OVER = 16 * 1024 * 1024;
const PART_SIZE = 8 * 1024 * 1024;
const PAGE_SIZE = 50;
const S3NS = "http://s3.amazonaws.com/doc/2006-03-01/";

const POLL_MS = 2000;
const SAMPLES_KEPT = 60;
const SECTIONS = ["sign-in", "buckets", "browser", "keys", "all-buckets", "health"];

let csrf = null;
// Whether the admin API answers this session's key (a root key). Only
// decides what the page offers: the admin API itself refuses other keys.
let operator = false;
// The signed-in access key (the session's, never its secret).
const session = { accessKey: null };
const view = { bucket: null, prefix: "", token: null, object: null, versions: false };
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
  for (const id of SECTIONS) $(id).hidden = id !== section;
  $("sign-out").hidden = section === "sign-in";
  $("nav").hidden = section === "sign-in";
  if (section !== "health") stopHealth();
}

function signedOut(message) {
  csrf = null;
  operator = false;
  session.accessKey = null;
  $("operator-nav").hidden = true;
  $("who").textContent = "";
  closeSecret();
  show("sign-in");
  status(message || "");
}

async function signedIn(answer) {
  csrf = answer.csrf_token;
  session.accessKey = answer.access_key;
  $("who").textContent = `Signed in as ${answer.access_key}`;
  $("secret-key").value = "";
  status("");
  // The operator pages are offered only if the admin API answers the key.
  const probe = await api("GET", "admin/keys");
  operator = probe.ok;
  $("operator-nav").hidden = !operator;
  await listBuckets();
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
  view.versions = false;
  $("show-versions").checked = false;
  $("versions-toggle").hidden = true;
  $("bucket-name").textContent = name;
  $("details").hidden = true;
  show("browser");
  await Promise.all([listObjects(false), loadSettings()]);
}

async function openPrefix(prefix) {
  view.prefix = prefix;
  await listObjects(false);
}

// The table a listing fills: emptied for a first page, kept for "more".
function listingBody(more) {
  const body = $("objects");
  if (!more) {
    body.replaceChildren();
    view.token = null;
  }
  $("prefix").textContent = view.prefix;
  return body;
}

async function listObjects(more) {
  if (view.versions) return listVersions(more);
  const body = listingBody(more);
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
  body.append(...folderRows(doc, more));
  for (const object of all(doc, "Contents")) body.append(objectRow(object));
  const truncated = textOf(doc, "IsTruncated") === "true";
  view.token = truncated ? textOf(doc, "NextContinuationToken") : null;
  $("more").hidden = !truncated;
}

function folderRows(doc, more) {
  const rows = [];
  if (view.prefix && !more) {
    const parent = view.prefix.replace(/[^/]*\/$/, "");
    const row = element("tr", undefined, { className: "folder up" });
    row.append(element("td", ".."));
    row.addEventListener("click", () => run(() => openPrefix(parent)));
    rows.push(row);
  }
  for (const common of all(doc, "CommonPrefixes")) {
    const prefix = textOf(common, "Prefix");
    const row = element("tr", undefined, { className: "folder" });
    row.dataset.prefix = prefix;
    row.append(element("td", prefix.slice(view.prefix.length)), element("td"), element("td"));
    row.addEventListener("click", () => run(() => openPrefix(prefix)));
    rows.push(row);
  }
  return rows;
}

// ListObjectVersions: every version and delete marker under the prefix,
// newest first per key, 50 a page (key and version-id markers).
async function listVersions(more) {
  const body = listingBody(more);
  const q = query({
    versions: "",
    delimiter: "/",
    "max-keys": String(PAGE_SIZE),
    prefix: view.prefix,
    "key-marker": more ? view.token.key : null,
    "version-id-marker": more ? view.token.version : null,
  });
  const doc = await xml(
    await expectOk(
      await s3("GET", `${encodeURIComponent(view.bucket)}?${q}`),
      "Listing versions",
    ),
  );
  body.append(...folderRows(doc, more));
  const entries = Array.from(doc.documentElement.children).filter(
    (node) => node.localName === "Version" || node.localName === "DeleteMarker",
  );
  for (const entry of entries) body.append(versionRow(entry));
  const truncated = textOf(doc, "IsTruncated") === "true";
  view.token = truncated
    ? { key: textOf(doc, "NextKeyMarker"), version: textOf(doc, "NextVersionIdMarker") }
    : null;
  $("more").hidden = !truncated;
}

function versionRow(entry) {
  const key = textOf(entry, "Key");
  const version = textOf(entry, "VersionId");
  const marker = entry.localName === "DeleteMarker";
  const latest = textOf(entry, "IsLatest") === "true";
  const row = element("tr", undefined, {
    className: `version${marker ? " delete-marker" : ""}${latest ? " latest" : ""}`,
  });
  row.dataset.key = key;
  row.dataset.version = version;
  const label = marker ? " (delete marker)" : latest ? " (latest)" : "";
  row.append(
    element("td", key.slice(view.prefix.length) + label, { className: "name" }),
    element("td", marker ? "" : textOf(entry, "Size")),
    element("td", textOf(entry, "LastModified")),
  );
  const actions = element("td");
  if (!marker) {
    const get = element("button", "Download", { type: "button", className: "download" });
    get.addEventListener("click", () => run(() => download(key, version)));
    actions.append(get, " ");
  }
  const remove = element("button", "Delete version", { type: "button", className: "delete-version" });
  remove.addEventListener("click", () => run(() => deleteVersion(key, version, marker)));
  actions.append(remove);
  row.append(actions, element("td", version, { className: "version-id" }));
  return row;
}

async function deleteVersion(key, version, marker) {
  const what = marker ? "the delete marker" : "version";
  if (!confirm(`Delete ${what} ${version} of ${key}? This cannot be undone.`)) return;
  const path = `${encodeURIComponent(view.bucket)}/${encodeKey(key)}?${query({ versionId: version })}`;
  await expectOk(await s3("DELETE", path), "Deleting the version");
  status(`Deleted ${what} ${version} of ${key}.`, true);
  await listObjects(false);
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

async function presign(key, expires, download, version) {
  const response = await expectOk(
    await api("POST", "api/presign", {
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ bucket: view.bucket, key, expires, download, version_id: version }),
    }),
    "Signing a link",
  );
  return location.origin + (await response.json()).url;
}

async function download(key, version) {
  const link = element("a", undefined, { href: await presign(key, 300, true, version || null) });
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
  const meta = $("meta-rows");
  meta.replaceChildren();
  for (const [name, value] of head.headers) {
    if (name.startsWith("x-amz-meta-")) meta.append(pairRow(name.slice(11), value));
  }
  const tags = $("tag-rows");
  tags.replaceChildren();
  const tagging = await s3("GET", `${path}?tagging`);
  if (tagging.ok) {
    for (const tag of all(await xml(tagging), "Tag")) {
      add(`tag ${textOf(tag, "Key")}`, textOf(tag, "Value"));
      tags.append(pairRow(textOf(tag, "Key"), textOf(tag, "Value")));
    }
  }
  view.object = { key, head: head.headers };
  $("details-key").textContent = key;
  $("share-url").value = "";
  $("details").hidden = false;
}

// ---- Tags and metadata ----

// One editable name/value pair; the values are input properties, never markup.
function pairRow(name, value) {
  const row = element("tr", undefined, { className: "pair" });
  const nameInput = element("input", undefined, { className: "name", value: name });
  const valueInput = element("input", undefined, { className: "value", value: value });
  const remove = element("button", "Remove", { type: "button", className: "remove" });
  remove.addEventListener("click", () => row.remove());
  row.append(element("td"), element("td"), element("td"));
  row.children[0].append(nameInput);
  row.children[1].append(valueInput);
  row.children[2].append(remove);
  return row;
}

function pairs(tbody) {
  return Array.from(tbody.querySelectorAll("tr.pair"))
    .map((row) => [row.querySelector("input.name").value.trim(), row.querySelector("input.value").value])
    .filter(([name]) => name !== "");
}

async function saveTags() {
  const key = view.object.key;
  const path = `${encodeURIComponent(view.bucket)}/${encodeKey(key)}`;
  const tags = pairs($("tag-rows"));
  if (tags.length === 0) {
    await expectOk(await s3("DELETE", `${path}?tagging`), "Deleting the tags");
  } else {
    const body = s3Xml("Tagging", [
      ["TagSet", tags.map(([name, value]) => ["Tag", [["Key", name], ["Value", value]]])],
    ]);
    await expectOk(
      await s3("PUT", `${path}?tagging`, {
        headers: { "Content-Type": "application/xml" },
        body,
      }),
      "Saving the tags",
    );
  }
  await info(key);
  status(`Saved ${tags.length} tag(s) of ${key}.`, true);
}

// The headers a copy with REPLACE would otherwise drop: kept as they are.
const KEPT_ON_COPY = [
  "content-type",
  "cache-control",
  "content-disposition",
  "content-encoding",
  "content-language",
  "expires",
];

// Metadata is replaced by copying the object onto itself (S3 has no other
// way); its content type and other headers are sent again unchanged.
async function saveMetadata() {
  const { key, head } = view.object;
  const path = `${encodeURIComponent(view.bucket)}/${encodeKey(key)}`;
  const headers = {
    "x-amz-copy-source": `/${path}`,
    "x-amz-metadata-directive": "REPLACE",
  };
  for (const name of KEPT_ON_COPY) {
    // The console's answers are all no-store: the object's own Cache-Control
    // comes as x-s3gw-cache-control.
    const value = head.get(name === "cache-control" ? "x-s3gw-cache-control" : name);
    if (value) headers[name] = value;
  }
  const meta = pairs($("meta-rows"));
  for (const [name, value] of meta) headers[`x-amz-meta-${name.toLowerCase()}`] = value;
  await expectOk(await s3("PUT", path, { headers }), "Saving the metadata");
  await info(key);
  status(`Saved ${meta.length} metadata value(s) of ${key}.`, true);
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
    request.addEventListener("error", () =>
      reject(Object.assign(new Error("Upload failed: network error"), { network: true })),
    );
    request.send(body);
  });
}

// ---- Resumable multipart uploads ----

// A multipart upload in progress is remembered in localStorage so that, after
// a reload or a closed tab, picking the same file for the same bucket and key
// continues it. An entry holds only the bucket, key, upload id, file name,
// size, lastModified, part size and the access key that started it (never a
// secret): another key signing in on this browser neither sees nor resumes it.
const RESUMABLE = "s3gw-console-uploads";

function remembered() {
  try {
    const list = JSON.parse(localStorage.getItem(RESUMABLE));
    return Array.isArray(list) ? list : [];
  } catch (_) {
    return [];
  }
}

function keepRemembered(list) {
  try {
    if (list.length) localStorage.setItem(RESUMABLE, JSON.stringify(list));
    else localStorage.removeItem(RESUMABLE);
  } catch (_) {
    // No storage (private mode, quota): uploads still work, just not resumably.
  }
}

const sameTarget = (a, b) => a.accessKey === b.accessKey && a.bucket === b.bucket && a.key === b.key;
const sameFile = (a, b) =>
  a.name === b.name && a.size === b.size && a.lastModified === b.lastModified && a.partSize === b.partSize;

function remember(entry) {
  keepRemembered([...remembered().filter((e) => !sameTarget(e, entry)), entry]);
}

function forget(entry) {
  keepRemembered(remembered().filter((e) => !sameTarget(e, entry)));
}

const uploadPath = (bucket, key) => `${encodeURIComponent(bucket)}/${encodeKey(key)}`;

async function abortUpload(entry) {
  const path = uploadPath(entry.bucket, entry.key);
  await s3("DELETE", `${path}?${query({ uploadId: entry.uploadId })}`).catch(() => {});
}

// Sign-out: this key's unfinished uploads can no longer be resumed here, so
// they are aborted and forgotten.
async function abandonUploads() {
  const accessKey = session.accessKey;
  const mine = remembered().filter((e) => e.accessKey === accessKey);
  keepRemembered(remembered().filter((e) => e.accessKey !== accessKey));
  for (const entry of mine) await abortUpload(entry);
}

// The parts S3 holds of an upload, by number, or null if it is gone.
async function listedParts(path, uploadId) {
  const parts = new Map();
  let marker = null;
  for (;;) {
    const q = query({ uploadId, "part-number-marker": marker });
    const response = await s3("GET", `${path}?${q}`);
    if (response.status === 404) {
      const why = await errorOf(response);
      if (why.startsWith("NoSuchUpload")) return null;
      throw new Error(`Resuming the upload: ${why}`);
    }
    const doc = await xml(await expectOk(response, "Resuming the upload"));
    for (const part of all(doc, "Part")) {
      parts.set(Number(textOf(part, "PartNumber")), {
        etag: textOf(part, "ETag"),
        size: Number(textOf(part, "Size")),
      });
    }
    if (textOf(doc, "IsTruncated") !== "true") return parts;
    marker = textOf(doc, "NextPartNumberMarker");
  }
}

// Parts are sent one after another; on resuming, only those S3 does not hold
// at their expected size. A network failure keeps the upload (pick the file
// again to resume it); any other failure aborts it.
async function multipart(file, key, path, report, say) {
  const wanted = {
    accessKey: session.accessKey,
    bucket: view.bucket,
    key,
    name: file.name,
    size: file.size,
    lastModified: file.lastModified,
    partSize: PART_SIZE,
  };
  const count = Math.ceil(file.size / PART_SIZE);
  const sizeOf = (number) => Math.min(PART_SIZE, file.size - (number - 1) * PART_SIZE);
  const done = new Map();
  let entry = remembered().find((e) => sameTarget(e, wanted));
  if (entry && !sameFile(entry, wanted)) {
    // Another file for this key: its upload will never be resumed.
    await abortUpload(entry);
    forget(entry);
    entry = null;
  }
  if (entry) {
    const listed = await listedParts(path, entry.uploadId);
    if (listed === null) {
      forget(entry);
      entry = null;
    } else {
      for (const [number, part] of listed) {
        if (number >= 1 && number <= count && part.size === sizeOf(number)) done.set(number, part.etag);
      }
    }
  }
  if (!entry) {
    const created = await expectOk(await s3("POST", `${path}?uploads`), "Starting the upload");
    entry = Object.assign({ uploadId: textOf(await xml(created), "UploadId") }, wanted);
    remember(entry);
  }
  const uploadId = entry.uploadId;
  let uploaded = 0;
  for (const number of done.keys()) uploaded += sizeOf(number);
  if (done.size) say(`resuming: ${done.size} of ${count} parts already uploaded`);
  report(uploaded);
  try {
    for (let number = 1; number <= count; number++) {
      if (done.has(number)) continue;
      const start = (number - 1) * PART_SIZE;
      const q = query({ partNumber: String(number), uploadId });
      const before = uploaded;
      const answer = await put(`${path}?${q}`, file.slice(start, start + PART_SIZE), (n) =>
        report(before + n),
      );
      done.set(number, answer.getResponseHeader("ETag"));
      uploaded += sizeOf(number);
    }
    const body = s3Xml("CompleteMultipartUpload",
      Array.from(done.keys()).sort((a, b) => a - b)
        .map((number) => ["Part", [["PartNumber", number], ["ETag", done.get(number)]]]));
    await expectOk(
      await s3("POST", `${path}?${query({ uploadId })}`, {
        headers: { "Content-Type": "application/xml" },
        body,
      }),
      "Completing the upload",
    );
  } catch (error) {
    if (error.network) {
      throw new Error(`${error.message}; pick ${file.name} again to resume its upload`);
    }
    await abortUpload(entry);
    forget(entry);
    throw error;
  }
  forget(entry);
}

// A file of a chosen folder keeps its path under that folder's name.
async function upload(file) {
  const key = view.prefix + (file.webkitRelativePath || file.name);
  const path = uploadPath(view.bucket, key);
  const bar = element("progress", undefined, { max: file.size || 1, value: 0 });
  const note = element("span", "", { className: "resume" });
  const item = element("li");
  item.dataset.key = key;
  item.append(element("span", key + " "), bar, note);
  $("uploads").append(item);
  const report = (loaded) => {
    bar.value = loaded;
    progressEvent(key, loaded, file.size);
  };
  const say = (text) => {
    note.textContent = text;
    item.classList.add("resumed");
  };
  if (file.size <= MULTIPART_OVER) await put(path, file, report);
  else await multipart(file, key, path, report, say);
  report(file.size);
  item.classList.add("done");
}

async function uploadAll(files) {
  for (const file of files) await upload(file);
  status(`Uploaded ${files.length} file(s).`, true);
  await listObjects(false);
}

// ---- Bucket settings ----

// Every setting is read and written with S3's own calls as the session's
// key; what S3 refuses is shown as S3 said it, beside the setting.

// The documents edited as text: the server's validation error shows as is.
const DOCUMENTS = [
  { query: "policy", label: "Policy", type: "application/json", rows: 12, format: "JSON" },
  { query: "cors", label: "CORS", type: "application/xml", rows: 10, format: "CORSConfiguration XML" },
  { query: "lifecycle", label: "Lifecycle", type: "application/xml", rows: 10, format: "LifecycleConfiguration XML" },
];
const PUBLIC_ACCESS = ["BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets"];

const bucketPath = (subresource) => `${encodeURIComponent(view.bucket)}?${subresource}`;

// A setting shows the answer of its latest read. Opening a bucket reads
// every setting, and a change made while those reads run (or a bucket
// opened after them) must not be undone by an earlier answer that arrives
// late: each read or change takes a number, and a read whose number is no
// longer the setting's latest shows nothing.
const settingReads = new Map();
function newRead(subresource) {
  const number = (settingReads.get(subresource) || 0) + 1;
  settingReads.set(subresource, number);
  return () => settingReads.get(subresource) === number;
}

const CRC32_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

// x-amz-checksum-crc32 of a body: S3 wants a digest on lifecycle and object
// lock configurations, and WebCrypto has no MD5 (nor any digest outside
// HTTPS or localhost).
function crc32Base64(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC32_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  c = (c ^ 0xffffffff) >>> 0;
  return btoa(String.fromCharCode(c >>> 24, (c >>> 16) & 0xff, (c >>> 8) & 0xff, c & 0xff));
}

// An S3 XML document from [name, text or [children]] pairs, built as DOM
// nodes: names and values are never spliced into markup.
function s3Xml(root, children) {
  const doc = document.implementation.createDocument(S3NS, root);
  const fill = (parent, entries) => {
    for (const [name, content] of entries) {
      const node = doc.createElementNS(S3NS, name);
      if (Array.isArray(content)) fill(node, content);
      else node.textContent = String(content);
      parent.append(node);
    }
  };
  fill(doc.documentElement, children);
  return new XMLSerializer().serializeToString(doc);
}

function putSetting(subresource, type, text) {
  const body = new TextEncoder().encode(text);
  return s3("PUT", bucketPath(subresource), {
    headers: { "Content-Type": type, "x-amz-checksum-crc32": crc32Base64(body) },
    body,
  });
}

// A setting's change: S3's refusal goes to the setting's own error line.
async function changeSetting(errorId, request, done) {
  $(errorId).textContent = "";
  const response = await request();
  if (!response.ok) {
    $(errorId).textContent = await errorOf(response);
    return false;
  }
  status(done, true);
  return true;
}

async function loadSettings() {
  for (const id of ["public-access-error", "object-lock-error"].concat(
    DOCUMENTS.map((d) => `${d.query}-error`),
  )) {
    $(id).textContent = "";
  }
  const versioning = await s3("GET", bucketPath("versioning"));
  const state = versioning.ok ? textOf(await xml(versioning), "Status") : "";
  $("versioning").checked = state === "Enabled";
  // Versions are worth showing once versioning was ever on (Suspended keeps them).
  $("versions-toggle").hidden = state === "";
  for (const { query: subresource } of DOCUMENTS) {
    const latest = newRead(subresource);
    const answer = await s3("GET", bucketPath(subresource));
    const text = answer.ok ? await answer.text() : "";
    if (latest()) $(subresource).value = text;
  }
  await Promise.all([loadPublicAccess(), loadObjectLock()]);
}

async function setVersioning() {
  const state = $("versioning").checked ? "Enabled" : "Suspended";
  await expectOk(
    await s3("PUT", bucketPath("versioning"), {
      headers: { "Content-Type": "application/xml" },
      body: s3Xml("VersioningConfiguration", [["Status", state]]),
    }),
    "Setting versioning",
  );
  status(`Versioning ${state.toLowerCase()}.`, true);
  $("versions-toggle").hidden = false;
}

// A document's editor: its text, Save and Delete, and the line for S3's error.
function documentEditor(setting) {
  const { query: subresource, label, rows, format } = setting;
  const text = element("textarea", undefined, { id: subresource, rows, cols: 80, spellcheck: false });
  const save = element("button", `Save ${label}`, { id: `save-${subresource}`, type: "button" });
  const remove = element("button", `Delete ${label}`, { id: `delete-${subresource}`, type: "button" });
  save.addEventListener("click", () => run(() => saveDocument(setting)));
  remove.addEventListener("click", () => run(() => deleteDocument(setting)));
  const buttons = element("div");
  buttons.append(save, " ", remove);
  return [
    element("h3", `${label} (${format})`),
    text,
    buttons,
    element("pre", undefined, { id: `${subresource}-error`, className: "error" }),
  ];
}

async function saveDocument({ query: subresource, label, type }) {
  newRead(subresource);
  await changeSetting(`${subresource}-error`, () => putSetting(subresource, type, $(subresource).value),
    `${label} saved.`);
}

async function deleteDocument({ query: subresource, label }) {
  newRead(subresource);
  const deleted = await changeSetting(`${subresource}-error`,
    () => s3("DELETE", bucketPath(subresource)), `${label} deleted.`);
  if (deleted) $(subresource).value = "";
}

// No configuration (NoSuchPublicAccessBlockConfiguration) is all off.
async function loadPublicAccess() {
  const latest = newRead("publicAccessBlock");
  const answer = await s3("GET", bucketPath("publicAccessBlock"));
  const doc = answer.ok ? await xml(answer) : null;
  if (!latest()) return;
  for (const flag of PUBLIC_ACCESS) {
    $(`pab-${flag}`).checked = doc !== null && textOf(doc, flag) === "true";
  }
}

async function savePublicAccess() {
  newRead("publicAccessBlock");
  const body = s3Xml("PublicAccessBlockConfiguration",
    PUBLIC_ACCESS.map((flag) => [flag, String($(`pab-${flag}`).checked)]));
  await changeSetting("public-access-error",
    () => putSetting("publicAccessBlock", "application/xml", body), "Public access block saved.");
}

async function deletePublicAccess() {
  newRead("publicAccessBlock");
  const deleted = await changeSetting("public-access-error",
    () => s3("DELETE", bucketPath("publicAccessBlock")), "Public access block deleted.");
  if (deleted) await loadPublicAccess();
}

// Object lock is turned on when a bucket is made; where it is, the default
// retention can be set.
async function loadObjectLock() {
  const answer = await s3("GET", bucketPath("object-lock"));
  $("object-lock-editor").hidden = !answer.ok;
  if (!answer.ok) {
    const why = await errorOf(answer);
    $("object-lock-state").textContent = why.startsWith("ObjectLockConfigurationNotFoundError")
      ? "Not enabled on this bucket (S3 turns it on only when a bucket is created)."
      : why;
    return;
  }
  const doc = await xml(answer);
  const mode = textOf(doc, "Mode");
  const years = textOf(doc, "Years");
  const period = years || textOf(doc, "Days");
  $("lock-mode").value = mode;
  $("lock-unit").value = years ? "Years" : "Days";
  if (period) $("lock-period").value = period;
  const unit = years ? "year(s)" : "day(s)";
  $("object-lock-state").textContent = mode
    ? `Enabled; new objects are kept ${period} ${unit} in ${mode} mode.`
    : "Enabled; no default retention.";
}

async function saveObjectLock() {
  const mode = $("lock-mode").value;
  const children = [["ObjectLockEnabled", "Enabled"]];
  if (mode) {
    const retention = [["Mode", mode], [$("lock-unit").value, $("lock-period").value]];
    children.push(["Rule", [["DefaultRetention", retention]]]);
  }
  const saved = await changeSetting("object-lock-error",
    () => putSetting("object-lock", "application/xml", s3Xml("ObjectLockConfiguration", children)),
    "Object lock saved.");
  if (saved) await loadObjectLock();
}

// ---- Operators: keys ----

const admin = (method, path, options) => api(method, "admin/" + path, options);

// A secret shown once: in a modal the user dismisses, emptied when it closes.
function showSecret(title, created) {
  $("secret-title").textContent = title;
  $("secret-name").textContent = created.name;
  $("secret-access").textContent = created.access_key;
  $("secret-value").textContent = created.secret_key;
  $("secret-dialog").showModal();
}

function closeSecret() {
  const dialog = $("secret-dialog");
  if (dialog.open) dialog.close();
  for (const id of ["secret-title", "secret-name", "secret-access", "secret-value"]) {
    $(id).textContent = "";
  }
}

async function listKeys() {
  show("keys");
  const response = await expectOk(await admin("GET", "keys"), "Listing keys");
  const body = $("key-list");
  body.replaceChildren();
  for (const key of await response.json()) {
    const row = element("tr", undefined, { className: "key" });
    row.dataset.accessKey = key.access_key;
    row.append(
      element("td", key.name, { className: "name" }),
      element("td", key.access_key, { className: "access-key" }),
      element("td", key.is_root ? "yes" : ""),
    );
    const actions = element("td");
    const rotate = element("button", "New secret", { type: "button", className: "rotate" });
    rotate.addEventListener("click", () => run(() => rotateKey(key)));
    const remove = element("button", "Delete", { type: "button", className: "delete" });
    remove.addEventListener("click", () => run(() => deleteKey(key)));
    actions.append(rotate, " ", remove);
    row.append(actions);
    body.append(row);
  }
}

async function createKey(name) {
  const response = await expectOk(
    await admin("POST", `keys?${query({ name })}`),
    "Creating the key",
  );
  $("new-key").value = "";
  showSecret("New key", await response.json());
  status(`Created key ${name}.`, true);
  await listKeys();
}

async function rotateKey(key) {
  if (!confirm(`Give ${key.name} (${key.access_key}) a new secret? The old one stops at once.`)) return;
  const response = await expectOk(
    await admin("POST", `keys/${encodeURIComponent(key.access_key)}`),
    "Changing the secret",
  );
  showSecret("New secret", await response.json());
  status(`New secret for ${key.name}.`, true);
}

async function deleteKey(key) {
  if (!confirm(`Delete key ${key.name} (${key.access_key})? Its sessions end.`)) return;
  await expectOk(
    await admin("DELETE", `keys/${encodeURIComponent(key.access_key)}`),
    "Deleting the key",
  );
  status(`Deleted key ${key.name}.`, true);
  await listKeys();
}

// ---- Operators: every bucket ----

function formatTime(seconds) {
  return new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
}

async function listAllBuckets() {
  show("all-buckets");
  const [buckets, keys] = await Promise.all([
    expectOk(await admin("GET", "buckets"), "Listing every bucket").then((r) => r.json()),
    expectOk(await admin("GET", "keys"), "Listing keys").then((r) => r.json()),
  ]);
  const body = $("all-bucket-list");
  body.replaceChildren();
  for (const bucket of buckets) {
    const row = element("tr", undefined, { className: "bucket" });
    row.dataset.bucket = bucket.name;
    const owner = bucket.owner_name
      ? `${bucket.owner_name} (${bucket.owner})`
      : `${bucket.owner} (no such key)`;
    row.append(
      element("td", bucket.name),
      element("td", owner, { className: "owner" }),
      element("td", formatTime(bucket.created)),
      element("td", String(bucket.objects)),
      element("td", String(bucket.bytes)),
      element("td", String(bucket.noncurrent_versions)),
      element("td", String(bucket.noncurrent_bytes)),
    );
    const give = element("td");
    const select = element("select", undefined, { className: "new-owner" });
    for (const key of keys) {
      select.append(element("option", key.name, { value: key.access_key, title: key.access_key }));
    }
    select.value = bucket.owner;
    const button = element("button", "Set owner", { type: "button", className: "set-owner" });
    button.addEventListener("click", () => run(() => setOwner(bucket.name, select.value)));
    give.append(select, " ", button);
    row.append(give);
    body.append(row);
  }
}

async function setOwner(bucket, accessKey) {
  if (!confirm(`Give bucket ${bucket} to ${accessKey}? Its ACL becomes the new owner's.`)) return;
  await expectOk(
    await admin("PUT", `buckets/${encodeURIComponent(bucket)}/owner?${query({ access_key: accessKey })}`),
    "Setting the owner",
  );
  status(`Bucket ${bucket} now belongs to ${accessKey}.`, true);
  await listAllBuckets();
}

// ---- Operators: health ----

const health = { timer: null, last: null, samples: [] };

// Prometheus text: [{name, labels, value}].
function parseMetrics(text) {
  const out = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = {};
    for (const pair of (match[2] || "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]] = pair[2];
    }
    out.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return out;
}

// What a poll keeps: totals by class, latency buckets summed over operations.
function digest(metrics) {
  const byClass = {};
  const buckets = {};
  const operations = {};
  const services = {};
  const single = {};
  const cluster = { oms: [], datanodes: [] };
  for (const m of metrics) {
    if (m.name === "s3gw_requests_total") {
      byClass[m.labels.class] = (byClass[m.labels.class] || 0) + m.value;
      const op = (operations[m.labels.operation] = operations[m.labels.operation] || {});
      op[m.labels.class] = m.value;
    } else if (m.name === "s3gw_request_duration_seconds_bucket") {
      buckets[m.labels.le] = (buckets[m.labels.le] || 0) + m.value;
    } else if (m.name === "s3gw_backend_call_duration_seconds_count" || m.name === "s3gw_backend_call_errors_total") {
      const service = (services[m.labels.service] = services[m.labels.service] || { calls: 0, errors: 0 });
      service[m.name.endsWith("_count") ? "calls" : "errors"] += m.value;
    } else if (m.name === "s3gw_ozone_om_leader") {
      cluster.oms.push({ address: m.labels.address, leads: m.value === 1 });
    } else if (m.name === "s3gw_ozone_datanode_reachable") {
      cluster.datanodes.push({ host: m.labels.host, uuid: m.labels.datanode, reachable: m.value === 1 });
    } else if (Object.keys(m.labels).length === 0 || m.name === "s3gw_build_info") {
      single[m.name] = m;
    }
  }
  return { at: Date.now(), byClass, buckets, operations, services, single, cluster };
}

// The q-quantile of the requests finished between two polls, in seconds,
// interpolated in its histogram bucket as Prometheus does; null if none.
function quantile(q, before, after) {
  const bounds = Object.keys(after.buckets)
    .map((le) => [le === "+Inf" ? Infinity : Number(le), le])
    .sort((a, b) => a[0] - b[0]);
  const delta = (le) => after.buckets[le] - ((before && before.buckets[le]) || 0);
  const total = delta("+Inf");
  if (!(total > 0)) return null;
  let lower = 0;
  let below = 0;
  for (const [bound, le] of bounds) {
    const count = delta(le);
    if (count >= q * total) {
      if (bound === Infinity) return lower;
      return lower + ((bound - lower) * (q * total - below)) / Math.max(count - below, 1);
    }
    lower = bound;
    below = count;
  }
  return lower;
}

const SVG = "http://www.w3.org/2000/svg";

// A line chart of up to two series (arrays of numbers or null gaps).
function drawChart(id, series, unit) {
  const svg = $(id);
  const width = 300;
  const height = 120;
  const top = 14;
  const values = series.flat().filter((v) => v !== null);
  const max = Math.max(1e-9, ...values);
  svg.replaceChildren();
  series.forEach((points, index) => {
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("class", `s${index}`);
    const step = width / (SAMPLES_KEPT - 1);
    const start = SAMPLES_KEPT - points.length;
    const coordinates = [];
    points.forEach((v, i) => {
      if (v === null) return;
      const x = (start + i) * step;
      const y = height - (v / max) * (height - top);
      coordinates.push(`${x.toFixed(1)},${y.toFixed(1)}`);
    });
    line.setAttribute("points", coordinates.join(" "));
    svg.append(line);
  });
  const label = document.createElementNS(SVG, "text");
  label.setAttribute("x", "4");
  label.setAttribute("y", "10");
  label.textContent = `max ${values.length ? max.toPrecision(3) : 0} ${unit}`;
  svg.append(label);
  svg.dataset.samples = String(series[0].length);
}

function formatBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit++;
  }
  return `${unit === 0 ? n : n.toFixed(1)} ${units[unit]}`;
}

// Ozone's services as the gateway's calls to them name them.
const SERVICES = [
  ["om", "Ozone Manager calls"],
  ["dn", "Datanode reads"],
  ["ratis", "Datanode writes (Ratis)"],
];

// The back end: the embedded store's disk, or how Ozone's services answer.
function backendFacts(list, now, before) {
  const single = now.single;
  if ("s3gw_small_blocks" in single) {
    fact(list, "Small-block store",
      `${single.s3gw_small_blocks.value} blocks, ${single.s3gw_small_block_bytes.value} bytes`);
  }
  if ("s3gw_data_dir_filesystem_bytes" in single) {
    const total = single.s3gw_data_dir_filesystem_bytes.value;
    const free = single.s3gw_data_dir_available_bytes.value;
    const used = total > 0 ? (100 * (total - free)) / total : 0;
    fact(list, "Disk (data dir)",
      `${formatBytes(total - free)} used of ${formatBytes(total)} (${used.toFixed(1)}%), ${formatBytes(free)} free`,
      used > 90 ? "unready" : "");
  }
  const { oms, datanodes } = now.cluster;
  if (oms.length > 0) {
    const leader = oms.find((om) => om.leads);
    fact(list, "OM leader", `${leader ? leader.address : "none known"} (${oms.length} OM${oms.length > 1 ? "s" : ""} configured)`);
  }
  if (oms.length > 0 || datanodes.length > 0) {
    const down = datanodes.filter((d) => !d.reachable);
    const listed = down.map((d) => `${d.host} (${d.uuid.slice(0, 8)})`).join(", ");
    fact(list, "Datanodes reachable",
      `${datanodes.length - down.length} of ${datanodes.length} called since start` +
        (down.length > 0 ? `; last call unanswered: ${listed}` : ""),
      down.length > 0 ? "unready" : "ready");
  }
  for (const [service, label] of SERVICES) {
    const calls = now.services[service];
    if (!calls) continue;
    const earlier = before && before.services[service];
    const recent = earlier ? calls.errors - earlier.errors : 0;
    fact(list, label, `${calls.calls} since start, ${calls.errors} failed (${recent} since the last poll)`,
      recent > 0 ? "unready" : "ready");
  }
}

function fact(list, name, value, className) {
  list.append(element("dt", name), element("dd", value, className ? { className } : {}));
}

async function pollHealth() {
  const [ready, metricsResponse] = await Promise.all([
    fetch("/ready", { credentials: "omit", cache: "no-store" }),
    fetch("/metrics", { credentials: "omit", cache: "no-store" }),
  ]);
  const readyText = (await ready.text()).trim();
  if (!metricsResponse.ok) throw new Error(`Reading /metrics: ${metricsResponse.status}`);
  const text = await metricsResponse.text();
  // A poll that was under way when the page was left draws nothing.
  if ($("health").hidden) return;
  const now = digest(parseMetrics(text));
  const before = health.last;
  health.last = now;
  const list = $("health-facts");
  list.replaceChildren();
  fact(list, "Readiness", `${readyText} (${ready.status})`, ready.ok ? "ready" : "unready");
  const build = now.single.s3gw_build_info;
  if (build) fact(list, "Version", `${build.labels.version} (${build.labels.commit})`);
  const embedded = "s3gw_small_blocks" in now.single;
  fact(list, "Back end", embedded ? "embedded" : "Ozone");
  backendFacts(list, now, before);
  const gauge = (name) => (now.single[name] ? String(now.single[name].value) : "");
  fact(list, "Requests in flight", gauge("s3gw_requests_in_flight"));
  fact(list, "Connections open", gauge("s3gw_connections_open"));
  fact(list, "Multipart uploads in progress", gauge("s3gw_multipart_uploads_in_progress"));
  fact(list, "Bytes received / sent", `${gauge("s3gw_received_bytes_total")} / ${gauge("s3gw_sent_bytes_total")}`);
  if (before) {
    const seconds = Math.max((now.at - before.at) / 1000, 0.001);
    const rate = (classes) =>
      classes.reduce((sum, c) => sum + ((now.byClass[c] || 0) - (before.byClass[c] || 0)), 0) / seconds;
    const p50 = quantile(0.5, before, now);
    const p99 = quantile(0.99, before, now);
    health.samples.push({
      rate: rate(["1xx", "2xx", "3xx", "4xx", "5xx", "not_implemented"]),
      clientErrors: rate(["4xx"]),
      serverErrors: rate(["5xx"]),
      p50: p50 === null ? null : p50 * 1000,
      p99: p99 === null ? null : p99 * 1000,
    });
    if (health.samples.length > SAMPLES_KEPT) health.samples.shift();
    const latest = health.samples[health.samples.length - 1];
    fact(list, "Requests per second", latest.rate.toFixed(2));
    fact(list, "Errors per second (4xx / 5xx)",
      `${latest.clientErrors.toFixed(2)} / ${latest.serverErrors.toFixed(2)}`);
    fact(list, "Latency p50 / p99",
      latest.p50 === null ? "no requests" : `${latest.p50.toFixed(1)} ms / ${latest.p99.toFixed(1)} ms`);
  }
  const samples = health.samples;
  drawChart("chart-rate", [samples.map((s) => s.rate)], "req/s");
  drawChart("chart-errors", [samples.map((s) => s.clientErrors), samples.map((s) => s.serverErrors)], "err/s");
  drawChart("chart-latency", [samples.map((s) => s.p50), samples.map((s) => s.p99)], "ms");
  const body = $("health-ops");
  body.replaceChildren();
  for (const [operation, classes] of Object.entries(now.operations).sort()) {
    const row = element("tr");
    row.append(element("td", operation));
    for (const c of ["2xx", "3xx", "4xx", "5xx", "not_implemented"]) {
      row.append(element("td", String(classes[c] || 0)));
    }
    body.append(row);
  }
}

async function showHealth() {
  show("health");
  health.last = null;
  health.samples = [];
  await pollHealth();
  health.timer = setInterval(() => run(pollHealth), POLL_MS);
}

function stopHealth() {
  if (health.timer !== null) clearInterval(health.timer);
  health.timer = null;
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
      await signedIn(await response.json());
    });
  });
  for (const button of document.querySelectorAll("#nav button[data-page]")) {
    const pages = { buckets: listBuckets, keys: listKeys, "all-buckets": listAllBuckets, health: showHealth };
    button.addEventListener("click", () => run(pages[button.dataset.page]));
  }
  $("create-key").addEventListener("submit", (event) => {
    event.preventDefault();
    run(() => createKey($("new-key").value.trim()));
  });
  $("secret-dialog").addEventListener("close", closeSecret);
  $("add-tag").addEventListener("click", () => $("tag-rows").append(pairRow("", "")));
  $("add-meta").addEventListener("click", () => $("meta-rows").append(pairRow("", "")));
  $("save-tags").addEventListener("click", () => run(saveTags));
  $("save-meta").addEventListener("click", () => run(saveMetadata));
  $("sign-out").addEventListener("click", () =>
    run(async () => {
      await abandonUploads();
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
  for (const id of ["upload", "upload-folder"]) {
    $(id).addEventListener("change", (event) => {
      const files = Array.from(event.target.files);
      event.target.value = "";
      run(() => uploadAll(files));
    });
  }
  $("delete-prefix").addEventListener("click", () => run(deletePrefix));
  $("show-versions").addEventListener("change", () => {
    view.versions = $("show-versions").checked;
    for (const cell of document.querySelectorAll(".version-column")) cell.hidden = !view.versions;
    run(() => listObjects(false));
  });
  $("versioning").addEventListener("change", () => run(setVersioning));
  $("documents").append(...DOCUMENTS.flatMap(documentEditor));
  $("save-public-access").addEventListener("click", () => run(savePublicAccess));
  $("delete-public-access").addEventListener("click", () => run(deletePublicAccess));
  $("save-object-lock").addEventListener("click", () => run(saveObjectLock));
}

async function start() {
  wire();
  const response = await fetch(API + "api/session", { credentials: "same-origin" });
  if (response.ok) {
    const answer = await response.json();
    await run(() => signedIn(answer));
  }
  else signedOut("");
}

start();
