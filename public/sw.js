// The Control UI's service worker. It keeps this app's own files (the page and the files the
// page names), so that a reload while the gateway is down opens the app, with its saved
// conversations, drafts and unsent answers, instead of the browser's error page.
//
// It answers only two kinds of request: loads of the app's own pages (from the network; from
// the cache only when the network fails), and the files the page names. Everything else, other
// pages of the origin, WebSocket traffic and every API call among them, never reaches the
// cache: the handler returns without answering, and the browser goes to the network as if
// there were no worker.
//
// Nothing in the cache is trusted for what it is: a same-origin script can write into it. The
// page is the root of the trust: the build writes its SHA-384 into this file
// (scripts/seal-worker.mjs, on the `const BUILD` line below), and a cached page is served only
// if its bytes hash to it, with a CSP this worker builds from the build's hashes of the page's
// inline scripts. The page then names the SHA-384 of every other file it loads
// (`<meta name=ocui-files>`), and a cached file is served only if its bytes match the hash
// named by the page fresh from the network or by the checked cached page. Anything else found
// in the cache is dropped, never served.

// Written by the build (scripts/seal-worker.mjs): the page's SHA-384 and the SHA-256s of its
// inline scripts. Unsealed (`page: null`), no cached page is ever served.
const BUILD = { page: null, scripts: [] };

const CACHE = "ocui-shell-v1";
const SCOPE = new URL(self.registration.scope);
// Every page load of the app is the same document (the gateway answers every app path with
// it), so it is kept once, under the scope's own address.
const SHELL = SCOPE.href;
// The base path the real gateway writes on the page (`data-openclaw-control-ui-base-path`):
// the app registers this worker with its scope at `<base path>/`.
const BASE_PATH = SCOPE.pathname.replace(/\/$/, "");
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
// gateway now serves another build, the page is told, so an old page never goes on as if it
// were current (and the browser is asked to fetch this worker again: another build comes with
// its own, which keeps that build). A page that came from the network just now runs the
// build its own load fetched: its first question is answered from that, without fetching the
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

// Client id -> the files its page load fetched (a promise), until that page's first question.
const justStored = new Map();

// A page load goes to the network and waits for it, however long it takes: the cached page is
// used only when the network fails (no connection, or a 5xx, which a proxy in front of a
// stopped gateway answers), never because the gateway is slow.
async function navigate(event) {
  let response;
  try {
    response = await fetch(event.request);
  } catch (offline) {
    return fromCache(event, "The connection to it failed.");
  }
  if (response.status >= 500) return fromCache(event, `It answered HTTP ${response.status}.`);
  // The hashes the page names are what cached files must match from now on. The page is
  // stored from this response (no second fetch of it) only if it is the app's own page at the
  // address asked for (an app route, not redirected, carrying the app's marker; store checks
  // the marker, and that it is this worker's build): an agent's HTML page under the same origin
  // must not become the app.
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
}

// The network failed: the cached page if it is exactly this build's, else this worker's own
// page saying the gateway is unreachable. A cached page that is not this build's is dropped.
async function fromCache(event, why) {
  const page = await checkedShell();
  if (page) return shellResponse(page);
  event.waitUntil(dropForgedShell().catch(() => null));
  return offlinePage(why);
}

// The page fresh from the network (its text, as a promise; null until a page came from the
// network since this worker started; then the checked cached page is used): its hashes are
// what cached files must match.
let freshPage = null;

// The cached page's bytes if they are this build's page (checked against BUILD.page), else null.
async function checkedShell() {
  const cached = await caches.match(SHELL, { cacheName: CACHE });
  if (!cached) return null;
  const bytes = await cached.arrayBuffer();
  return (await isThisBuildsPage(bytes)) ? bytes : null;
}

// Removes a cached page that is not this build's (in the queue: never while store() puts one).
function dropForgedShell() {
  return queued(async () => {
    if (!(await caches.match(SHELL, { cacheName: CACHE }))) return;
    if (!(await checkedShell())) await (await caches.open(CACHE)).delete(SHELL);
  });
}

// The real gateway writes its attributes on the page's `<html>` tag, right after `<html`
// (`data-openclaw-control-ui-base-path`, `data-openclaw-terminal-enabled`, and
// `data-openclaw-environment` when configured); the local gateway sends the page as built. The
// page is this build's if its bytes are the built page's, or the built page with exactly these
// attributes added there, naming this worker's base path.
const GATEWAY_ATTRIBUTES =
  /^<html data-openclaw-control-ui-base-path="([^"<>&]*)" data-openclaw-terminal-enabled="(?:true|false)"(?: data-openclaw-environment="[^"<>]*")?/;

async function isThisBuildsPage(bytes) {
  if (!BUILD.page) return false;
  let html;
  try {
    html = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (notUtf8) {
    return false;
  }
  const tag = /<html\b[^>]*>/i.exec(html);
  const added = tag && GATEWAY_ATTRIBUTES.exec(html.slice(tag.index));
  if (added) {
    if (added[1] !== BASE_PATH) return false;
    bytes = new TextEncoder().encode(html.slice(0, tag.index) + "<html" + html.slice(tag.index + added[0].length));
  }
  return (await digest("SHA-384", bytes)) === BUILD.page;
}

// The checked page, with the headers the gateway sends for it: its CSP (the real gateway's for
// a configured UI root: this page's inline scripts by their hashes, 'wasm-unsafe-eval' for the
// app's wasm, and sockets and the gateway's own host) and the rest.
function shellResponse(bytes) {
  const host = self.location.hostname;
  const scripts = BUILD.scripts.map((h) => `'${h}'`).join(" ");
  const csp = [
    "default-src 'self'",
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "frame-src 'self' http: https:",
    `script-src 'self' ${scripts} 'wasm-unsafe-eval'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob: https:",
    "media-src 'self' data: blob:",
    "font-src 'self'",
    "worker-src 'self'",
    `connect-src 'self' ws: wss: http://${host}:* https://${host}:*`,
  ].join("; ");
  return new Response(bytes, {
    status: 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-cache",
      "content-security-policy": csp,
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}

// This worker's own page for a load that neither the network nor the cache can answer: it says
// so and offers a reload (which keeps the address, `#token=…` included). Never a blank page.
const OFFLINE_SCRIPT = 'document.getElementById("reload").addEventListener("click", function () { location.reload(); });';
async function offlinePage(why) {
  const html = [
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>OpenClaw Control: the gateway is unreachable</title>",
    "<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:12vh auto;padding:0 1rem;color:#1f2328;background:#fff}",
    "@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}}button{font:inherit;padding:.4rem 1.2rem}</style></head>",
    '<body data-testid="sw-offline"><main><h1>The gateway is unreachable</h1>',
    `<p data-testid="sw-offline-reason">The Control UI could not be loaded from its gateway. ${why}</p>`,
    "<p>This browser holds no checked copy of the Control UI to open instead. Check that the gateway is running, then reload.</p>",
    '<p><button id="reload" type="button">Reload</button></p></main>',
    `<script>${OFFLINE_SCRIPT}</script></body></html>`,
  ].join("");
  const script = await digest("SHA-256", new TextEncoder().encode(OFFLINE_SCRIPT));
  return new Response(html, {
    status: 503,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": `default-src 'none'; script-src '${script}'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}

// `file name -> "sha384-…"` from a page's `<meta name=ocui-files>` (the files every load
// fetches, kept at install) and `<meta name=ocui-files-on-use>` (the app's split modules,
// fetched the first time a page needs them, and the early module, which a page asks to have kept:
// kept once used or asked for), or from one of the two (`which`).
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
  const page = await checkedShell();
  return page ? hashes(new TextDecoder().decode(page), which) : new Map();
}

// `"sha384-…"` (or `sha256-…`) of some bytes, as SRI and CSP write it.
async function digest(algorithm, bytes) {
  const sum = await crypto.subtle.digest(algorithm, bytes);
  let binary = "";
  for (const b of new Uint8Array(sum)) binary += String.fromCharCode(b);
  return `${algorithm.replace("-", "").toLowerCase()}-${btoa(binary)}`;
}

async function sha384(response) {
  return digest("SHA-384", await response.arrayBuffer());
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
// controlled yet loaded a split module itself and asks for it to be kept; the early module, which
// a page asks for without having used it, comes from the network). Only bytes matching the named
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
// replaced unless the page is this worker's build and every file it names could be fetched.
// Resolves to the files the page names (stored or not), or null.
async function store(response) {
  const bytes = await response.clone().arrayBuffer();
  const html = new TextDecoder().decode(bytes);
  if (!MARKER.test(html)) return null;
  const files = named(html);
  if (!(await isThisBuildsPage(bytes))) {
    // Another build's page: this worker could not check it offline, so it keeps its own. The
    // browser is asked to fetch the worker again: another build's worker keeps that build.
    self.registration.update().catch(() => null);
    return files;
  }
  const cache = await caches.open(CACHE);
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

// Web Push (the gateway's `push.web.*`): a notification for what an agent waits on, while no
// window of the app shows it. The payload is the real gateway's `{title, body, tag, renotify,
// url}`, `url` relative to the scope (`approve/<id>`, `ask/<id>`, a conversation); the local
// gateway adds `choices` (the options of a single single-choice question, at most two) and
// `secret`. What a lock screen may show is decided here too, whatever the payload says: an
// approval is named, never its command, and a secrets request never carries a value.
self.addEventListener("push", (event) => {
  event.waitUntil(showPush(event.data).catch(() => null));
});

const APPROVAL = /^approve\/[^/?#]+$/;
const QUESTION = /^ask\/[^/?#]+$/;

function readPush(data) {
  let p = null;
  try {
    p = data ? data.json() : null;
  } catch (notJson) {
    p = { body: data ? data.text() : "" };
  }
  return p && typeof p === "object" ? p : {};
}

function text(value, max) {
  return typeof value === "string" ? value.slice(0, max) : "";
}

// The payload's target, kept only inside the scope; the scope itself otherwise.
function target(url) {
  try {
    const href = new URL(typeof url === "string" ? url : "", SCOPE).href;
    return href.startsWith(SCOPE.href) ? href : SCOPE.href;
  } catch (bad) {
    return SCOPE.href;
  }
}

// What the notification shows and offers (pure: the e2e tests read it back).
function notificationFor(p) {
  const url = target(p.url);
  const path = url.slice(SCOPE.href.length);
  const title = text(p.title, 120) || "OpenClaw";
  const options = { tag: text(p.tag, 200) || "openclaw-notification", renotify: p.renotify === true, icon: "icon-192.png", data: { url, kind: "other" } };
  if (APPROVAL.test(path)) {
    // The real gateway replaces a request's notification through its tag once it is decided
    // or expired ("OpenClaw approval updated"): that one offers nothing.
    const over = /approval updated$/i.test(title);
    options.body = over ? "This approval is no longer pending." : "An agent is waiting for your approval. Open it to review what it asks.";
    options.data.kind = over ? "other" : "approval";
    // Deny only: Allow never comes from a notification (it opens the card, where the consent
    // rules apply). The tap opens the card with Deny chosen, for one confirming click.
    if (!over) options.actions = [{ action: "deny", title: "Deny" }];
  } else if (QUESTION.test(path)) {
    options.data.kind = "question";
    options.body = p.secret === true ? "An agent asks for a secret. Open it to answer." : text(p.body, 300);
    const choices = Array.isArray(p.choices) ? p.choices.filter((c) => typeof c === "string" && c.trim() !== "") : [];
    if (p.secret !== true && choices.length >= 1 && choices.length <= 2 && choices.length === p.choices.length) {
      options.actions = choices.map((c, i) => ({ action: `choose-${i}`, title: c.slice(0, 40) }));
      options.data.choices = choices;
    }
  } else {
    options.body = text(p.body, 300);
  }
  return { title, options };
}

// A request or a conversation's news is not shown while a visible window of the app shows it
// already (its dock and transcript do); anything else (a test) is.
const SHOWN_IN_PAGE = /^(?:approve|ask|chat)\//;
async function showPush(data) {
  const { title, options } = notificationFor(readPush(data));
  // An approval's update replaces its request's notification (same tag): always shown, so a
  // decided approval never keeps offering Deny.
  const update = options.data.kind === "other" && APPROVAL.test(options.data.url.slice(SCOPE.href.length));
  if (!update && SHOWN_IN_PAGE.test(options.data.url.slice(SCOPE.href.length))) {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    if (windows.some((w) => w.visibilityState === "visible" && w.url.startsWith(SCOPE.href))) return;
  }
  await self.registration.showNotification(title, options);
}

// A tap opens the target in a window of the app (the first one, navigated; else a new one). An
// action opens it with the choice made (`?choice=deny`, `?choice=option-<n>`): the page shows
// the whole card with it chosen, and one click there sends it. Nothing is decided here.
self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const data = event.notification.data || {};
  const url = new URL(target(data.url));
  const chosen = /^choose-([01])$/.exec(event.action || "");
  if (event.action === "deny" && data.kind === "approval") url.searchParams.set("choice", "deny");
  else if (chosen && data.kind === "question") url.searchParams.set("choice", `option-${chosen[1]}`);
  event.waitUntil(openApp(url.href, event.notification.title));
});

async function openApp(href, title) {
  const windows = (await self.clients.matchAll({ type: "window", includeUncontrolled: true })).filter((w) => w.url.startsWith(SCOPE.href));
  for (const w of windows) {
    let moved = null;
    try {
      moved = await w.navigate(href);
    } catch (cannot) {
      // A window this worker does not control cannot be navigated: the next, or a new one.
    }
    if (moved) {
      // Navigated: a refused focus (its permission may have run out) opens nothing more.
      await moved.focus().catch(() => null);
      return;
    }
  }
  const opened = await self.clients.openWindow(href).catch(() => null);
  if (!opened) {
    await self.registration.showNotification("OpenClaw could not open", {
      body: `Open OpenClaw to answer: ${title}`,
      tag: "openclaw-open-failed",
      data: { url: href, kind: "other" },
    });
  }
}
