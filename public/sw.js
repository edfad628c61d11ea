// The Control UI's service worker. It keeps this app's own files (the page and the files the
// page names), so that a reload while the gateway is down opens the app, with its saved
// conversations, drafts and unsent answers, instead of the browser's error page.
//
// It answers only two kinds of request: page loads under its scope (from the network first,
// from the cache when the network fails), and the files the cached page names. Everything else,
// WebSocket traffic and every API call among it, never reaches the cache: the handler returns
// without answering, and the browser goes to the network as if there were no worker.

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

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== SCOPE.origin || !url.pathname.startsWith(SCOPE.pathname)) return;
  if (request.mode === "navigate") {
    event.respondWith(navigate(event));
  } else if (/\.(?:js|wasm|css|svg)$/.test(url.pathname)) {
    event.respondWith(file(request));
  }
});

// The page asks each time it connects, naming the build it runs (its wasm file): if the
// gateway now serves another build, that one is stored and the page is told, so an old page
// never goes on as if it were current.
self.addEventListener("message", (event) => {
  const running = event.data && event.data.type === "ocui-check-update" ? event.data.running : null;
  if (!running) return;
  event.waitUntil(
    refresh()
      .then((files) => {
        if (files && !files.includes(running) && event.source) event.source.postMessage("ocui-update-ready");
      })
      .catch(() => {}),
  );
});

// How long a page load waits for the network before the stored page is shown instead.
const NETWORK_PATIENCE_MS = 4000;

async function navigate(event) {
  const cached = caches.match(SHELL, { cacheName: CACHE });
  const network = fetch(event.request).then((response) => {
    // A proxy in front of a stopped gateway answers 502/503: that is an outage too.
    if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
    // The app's own address is stored afresh, never this response: an agent's HTML page
    // under the same origin must not become the app.
    if (response.ok) event.waitUntil(refresh().catch(() => {}));
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

async function file(request) {
  const cached = await caches.match(request.url, { cacheName: CACHE });
  return cached || fetch(request);
}

// Fetches the page afresh and stores it with its files, one refresh at a time (two at once
// could each delete the other's files). Resolves to the files the page names, or null.
let queue = Promise.resolve();
function refresh() {
  const run = queue.then(async () => {
    const response = await fetch(SHELL, { cache: "no-store" });
    if (!response.ok) return null;
    return store(response);
  });
  queue = run.catch(() => null);
  return run;
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
  await cache.put(SHELL, response);
  for (const request of await cache.keys()) {
    if (request.url !== SHELL && !files.includes(request.url)) await cache.delete(request);
  }
  return files;
}

// The files of this app that a page names: in its links, and in its inline loader's imports.
function named(html) {
  const out = new Set();
  const patterns = [/\b(?:href|src)=["']?([^"'\s>]+)/g, /["']([^"'\s]+\.(?:js|wasm|css|svg))["']/g];
  for (const pattern of patterns) {
    for (const match of html.matchAll(pattern)) {
      const url = new URL(match[1], SHELL);
      url.hash = "";
      if (url.origin === SCOPE.origin && url.pathname.startsWith(SCOPE.pathname) && /\.(?:js|wasm|css|svg)$/.test(url.pathname)) {
        out.add(url.href);
      }
    }
  }
  return [...out];
}
