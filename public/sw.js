// The Control UI's service worker. It keeps this app's own files (the page and the files the
// page names), so that a reload while the gateway is down opens the app, with its saved
// conversations, drafts and unsent answers, instead of the browser's error page.
//
// It answers only two kinds of request: loads of the app's own pages (from the network first,
// from the cache when the network fails), and the files the page names. Everything else, other
// pages of the origin, WebSocket traffic and every API call among them, never reaches the
// cache: the handler returns without answering, and the browser goes to the network as if
// there were no worker.
//
// A cached file is served only if its bytes match the SHA-384 that the page names for it
// (`<meta name=ocui-files>`, written at build time by scripts/shell-hashes.mjs), taken from the
// page the network served last: a same-origin script that wrote into this cache cannot make
// its bytes run on the next load.

const CACHE = "ocui-shell-v1";
const SCOPE = new URL(self.registration.scope);
// Every page load of the app is the same document (the gateway answers every app path with
// it), so it is kept once, under the scope's own address.
const SHELL = SCOPE.href;
// Only a page that says it is this app is kept (not an error page, nor another app's page).
// The release build's HTML is minified, so attribute quotes are optional.
const MARKER = /name=["']?ocui-shell["'\s>]/;

self.addEventListener("install", (event) => {
  event.waitUntil(refresh().catch(() => null));
  self.skipWaiting();
});

self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});

// The app's own pages, below the scope: the root, and the links it answers (`/chat/…`,
// `/ask/<id>`, `/approve/<id>`). Any other page of the origin is not the app's to answer.
const APP_ROUTE = /^(?:|index\.html|chat(?:\/.*)?|ask\/[^/]+|approve\/[^/]+)$/;

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== SCOPE.origin || !url.pathname.startsWith(SCOPE.pathname)) return;
  if (request.mode === "navigate") {
    if (!APP_ROUTE.test(url.pathname.slice(SCOPE.pathname.length))) return;
    event.respondWith(navigate(event));
  } else if (/\.(?:js|wasm|wasm\.gz|css|svg)$/.test(url.pathname)) {
    event.respondWith(file(event));
  }
});

// The page asks each time it connects, naming the build it runs (its wasm file): if the
// gateway now serves another build, that one is stored and the page is told, so an old page
// never goes on as if it were current.
// The page asks each time it connects, naming the build it runs (its wasm file): if the
// gateway now serves another build, that one is stored and the page is told, so an old page
// never goes on as if it were current. A page that came from the network just now runs the
// build its own load stored: its first question is answered from that, without fetching the
// page again.
self.addEventListener("message", (event) => {
  if (event.data && event.data.type === "ocui-keep") {
    event.waitUntil(keep(String(event.data.file)).catch(() => null));
    return;
  }
  const running = event.data && event.data.type === "ocui-check-update" ? event.data.running : null;
  if (!running) return;
  const client = event.source && event.source.id;
  const stored = client ? justStored.get(client) : undefined;
  if (client) justStored.delete(client);
  event.waitUntil(
    (stored || Promise.resolve(null))
      .then((files) => files || refresh())
      .then((files) => {
        if (files && !files.includes(running) && event.source) event.source.postMessage("ocui-update-ready");
      })
      .catch(() => {}),
  );
});

// Client id -> the files its page load stored (a promise), until that page's first question.
const justStored = new Map();

// How long a page load waits for the network before the stored page is shown instead.
const NETWORK_PATIENCE_MS = 4000;

async function navigate(event) {
  const cached = caches.match(SHELL, { cacheName: CACHE });
  const network = fetch(event.request).then((response) => {
    // A proxy in front of a stopped gateway answers 502/503: that is an outage too.
    if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
    // The hashes the page names are what cached files must match from now on. The page is
    // stored from this response (no second fetch of it) only if it is the app's own page at
    // the address asked for (an app route, not redirected, carrying the app's marker; store
    // checks the marker): an agent's HTML page under the same origin must not become the app.
    if (response.ok) {
      const copy = response.clone();
      const forStore = response.redirected ? null : response.clone();
      freshPage = copy
        .text()
        .then((html) => (MARKER.test(html) ? html : null))
        .catch(() => null);
      const stored = freshPage.then(() => (forStore ? queued(() => store(forStore)) : refresh())).catch(() => null);
      if (event.resultingClientId) {
        justStored.set(event.resultingClientId, stored);
        if (justStored.size > 32) justStored.delete(justStored.keys().next().value);
      }
      event.waitUntil(stored);
    }
    return response;
  });
  const patience = new Promise((resolve) => setTimeout(resolve, NETWORK_PATIENCE_MS));
  try {
    const first = await Promise.race([network, patience.then(() => cached)]);
    return first || (await network);
  } catch (offline) {
    const page = await cached;
    if (page) return page;
    throw offline;
  }
}

// The page fresh from the network (its text, as a promise; null until a page came from the
// network since this worker started; then the stored page is used): its hashes are what cached
// files must match.
let freshPage = null;

// `file name -> "sha384-…"` from a page's `<meta name=ocui-files>` (the files every load
// fetches, kept at install) and `<meta name=ocui-files-on-use>` (fetched the first time a
// page needs them, the markdown module: kept once used), or from one of the two (`which`).
function hashes(html, which = ["ocui-files", "ocui-files-on-use"]) {
  const out = new Map();
  for (const name of which) {
    const meta = html.match(new RegExp(`<meta name=["']?${name}["']? content="([^"]*)"`));
    const words = meta ? meta[1].split(/\s+/).filter(Boolean) : [];
    for (let i = 0; i + 1 < words.length; i += 2) out.set(words[i], words[i + 1]);
  }
  return out;
}

async function expectedHashes(which) {
  const fresh = freshPage && (await freshPage);
  if (fresh) return hashes(fresh, which);
  const page = await caches.match(SHELL, { cacheName: CACHE });
  return page ? hashes(await page.text(), which) : new Map();
}

async function sha384(response) {
  const digest = await crypto.subtle.digest("SHA-384", await response.arrayBuffer());
  let binary = "";
  for (const b of new Uint8Array(digest)) binary += String.fromCharCode(b);
  return "sha384-" + btoa(binary);
}

async function file(event) {
  const request = event.request;
  const cached = await caches.match(request.url, { cacheName: CACHE });
  if (cached) {
    const name = new URL(request.url).pathname.split("/").pop();
    const want = (await expectedHashes()).get(name);
    if (want && (await sha384(cached.clone())) === want) return cached;
    // Not what the page names (or nothing names it): never served; the network's bytes instead,
    // and the entry goes.
    const cache = await caches.open(CACHE);
    await cache.delete(request.url);
  }
  // A file kept on use is kept as it passes, if its bytes are the ones the page names.
  const name = new URL(request.url).pathname.split("/").pop();
  const onUse = (await expectedHashes(["ocui-files-on-use"])).has(name);
  const response = await fetch(request);
  if (onUse && response.ok) event.waitUntil(keep(name, response.clone()).catch(() => null));
  return response;
}

// Keeps a file that the page names for keeping on use (`ocui-files-on-use`), from `response`
// or else fetched (from the browser's HTTP cache when it holds it: a page that no worker
// controlled yet loaded it itself and asks for it to be kept). Only bytes matching the named
// hash are stored; a file the page does not name for it is left alone. Queued: never beside a
// new build's store(), and a second keep of a file finds the first's entry.
function keep(name, response) {
  return queued(() => keepNow(name, response));
}
async function keepNow(name, response) {
  const want = (await expectedHashes(["ocui-files-on-use"])).get(name);
  if (!want) return;
  const url = new URL(name, SCOPE).href;
  const cache = await caches.open(CACHE);
  if (await cache.match(url)) return;
  const bytes = response || (await fetch(url, { cache: "force-cache" }));
  if (!bytes.ok || (await sha384(bytes.clone())) !== want) return;
  await cache.put(url, bytes);
}

// Fetches the page afresh and stores it with its files, one refresh at a time (two at once
// could each delete the other's files). Resolves to the files the page names, or null.
let queue = Promise.resolve();
function queued(task) {
  const run = queue.then(task);
  queue = run.catch(() => null);
  return run;
}
function refresh() {
  return queued(async () => {
    const response = await fetch(SHELL, { cache: "no-store" });
    if (!response.ok) return null;
    return store(response);
  });
}

// Stores a page and exactly the files it names; the files of older builds go. Nothing is
// replaced unless every file of the new build could be fetched.
async function store(response) {
  const html = await response.clone().text();
  if (!MARKER.test(html)) return null;
  const cache = await caches.open(CACHE);
  const files = named(html);
  const missing = [];
  for (const url of files) {
    if (!(await cache.match(url))) missing.push(url);
  }
  await cache.addAll(missing);
  // Keep only files whose bytes are the ones this page names.
  const named_hashes = hashes(html);
  for (const url of files) {
    const entry = await cache.match(url);
    const want = named_hashes.get(new URL(url).pathname.split("/").pop());
    if (!entry || !want || (await sha384(entry)) !== want) {
      await cache.delete(url);
      return null;
    }
  }
  await cache.put(SHELL, response);
  // Files kept on use stay while the new page names them too (the same build's module).
  const onUse = [...hashes(html, ["ocui-files-on-use"]).keys()].map((name) => new URL(name, SCOPE).href);
  for (const request of await cache.keys()) {
    if (request.url !== SHELL && !files.includes(request.url) && !onUse.includes(request.url)) await cache.delete(request);
  }
  return files;
}

// The files of this app that every page load fetches: exactly those its `<meta name=ocui-files>`
// names (the wasm by its gzip'd copy, which the page's loader fetches).
function named(html) {
  return [...hashes(html, ["ocui-files"]).keys()].map((name) => new URL(name, SCOPE).href);
}
