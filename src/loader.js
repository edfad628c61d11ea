// The page's start-up, in one place. `scripts/post-build.mjs` puts each part below into the built
// page as an inline script (the real gateway compresses the page and no other file of a
// configured root, and its CSP allows each inline script by its hash), fills in the `@…@` names,
// and drops the lines that are only comments. Trunk's `pattern_script` (Trunk.toml) only names
// wasm-bindgen's glue, which the hook inlines between these parts:
//
//   <script>  part "before-glue"                     the wasm's download, the gateway's socket
//   <script>  part "early"                           the early module, when the worker holds it
//   <script>  wasm-bindgen's glue (its `no-modules` output, defining `wasm_bindgen`)
//   <script>  part "start-app"                       starts the app once the page is parsed
//
// The names this start-up leaves on `window`, each read by one place in Rust:
// - `ocuiFetchWasm(plain)`: a wasm module's response, fetched by its gzip'd copy and unpacked as
//   it streams (the plain file without DecompressionStream or the copy). Used here only.
// - `ocuiFetchPart(file)`: one of the app's split modules (code a view needs only when it is
//   first shown, `components::on_use`, markdown among them), fetched like the app's wasm and then
//   kept by the service worker. Called by the split loader that the hook puts into
//   wasm-bindgen's glue.
// - `ocuiWasm`: the app's wasm download, started before anything else on the page.
// - `ocuiBuild`: the app's build, named by its wasm file, for the service worker's update check
//   (src/io/service_worker.rs).
// - `ocuiSocket`: the page's own gateway's WebSocket, opened while the app downloads, with the
//   frames that arrived on it and the early module's `ready` promise (src/io/early_socket.rs).
// - `wasmBindings`: wasm-bindgen's exports once the app started (Trunk's convention).
//
// Filled in by the hook: `@BASE@` the public URL's path ("/" at the root, "/ui/" under a base
// path), `@APP_WASM@` and `@EARLY_WASM@` the modules' plain file names, `@EARLY_PACKED@` the early
// module's gzip'd copy and `@EARLY_GLUE@` its glue.

// @part before-glue
// The app's download goes out first, before the socket and sessionStorage (whose first use
// opens the storage area): over a real link it is the longest wait of the first visit. A
// preload in the page (written by the hook) started the same fetch from the page's first
// bytes; this same-origin fetch takes its response over.
window.ocuiFetchWasm = function (plain) {
  var load = function () { return fetch(plain); };
  if (typeof DecompressionStream !== "function") return load();
  return fetch(plain + ".gz").then(function (r) {
    if (!r.ok || !r.body) return load();
    return new Response(r.body.pipeThrough(new DecompressionStream("gzip")), { headers: { "content-type": "application/wasm" } });
  });
};
window.ocuiFetchPart = function (file) {
  return window.ocuiFetchWasm("@BASE@" + file).then(function (r) {
    if (r.ok && navigator.serviceWorker) navigator.serviceWorker.ready.then(function (reg) { if (reg.active) reg.active.postMessage({ type: "ocui-keep", file: file + ".gz" }); });
    return r;
  });
};
window.ocuiBuild = "@BASE@@APP_WASM@.gz";
window.ocuiWasm = window.ocuiFetchWasm("@BASE@@APP_WASM@");
// The page's own gateway's socket opens during the download, so its handshake overlaps it; not
// when a link or this tab names another gateway (the app asks first).
(function () {
  try {
    if (/[#&]gatewayUrl=/.test(location.hash) || sessionStorage.getItem("ocui.gatewayUrl.v1")) return;
    var base = (document.documentElement.getAttribute("data-openclaw-control-ui-base-path") || "").replace(/\/+$/, "");
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + base;
    var socket = new WebSocket(url);
    var early = { socket: socket, url: url, at: Date.now(), messages: [] };
    var keep = function (e) { if (typeof e.data === "string") early.messages.push(e.data); };
    socket.addEventListener("message", keep);
    early.stop = function () { socket.removeEventListener("message", keep); };
    // Settled by the early module once it has sent `connect` (`early.sent`) or given up; the
    // app waits for it before it loads the identity (src/io/early_connect.rs).
    early.ready = new Promise(function (settle) { early.settle = settle; });
    window.ocuiSocket = early;
  } catch (e) {}
})();

// @part early
// The early module (src/bin/early.rs): its `main` signs and sends `connect` on the socket above
// before the app arrives. It is no part of a first visit, whose bytes go to the app's wasm: its
// glue and wasm are kept on use. On a visit that the service worker controls and whose worker
// does not hold them yet, the worker is asked to keep them once the app has started; on a visit
// whose worker holds both, the module starts from them. Otherwise the app connects by itself, on
// the same socket.
(function () {
  var early = window.ocuiSocket;
  if (!early || !early.settle) return;
  var controlled = !!(navigator.serviceWorker && navigator.serviceWorker.controller);
  var files = ["@EARLY_GLUE@", "@EARLY_PACKED@"];
  var held = controlled && window.caches
    ? Promise.all(files.map(function (f) { return caches.match(new URL("@BASE@" + f, location.href).href); }))
        .then(function (found) { return found.every(Boolean); })
    : Promise.resolve(false);
  if (controlled) {
    // The worker that controls the page when the app has started (a new build's may have taken
    // over since the load) is asked, if its cache lacks the module.
    addEventListener("TrunkApplicationStarted", function () {
      held.then(function (yes) {
        var worker = navigator.serviceWorker.controller;
        if (!yes && worker) files.forEach(function (f) { worker.postMessage({ type: "ocui-keep", file: f }); });
      }, function () {});
    }, { once: true });
  }
  held.then(function (yes) {
    if (!yes) return early.settle();
    return import("@BASE@@EARLY_GLUE@").then(function (glue) {
      return glue.default({ module_or_path: window.ocuiFetchWasm("@BASE@@EARLY_WASM@") });
    });
  }).catch(function (e) {
    console.warn("The early connect could not start; the app connects by itself:", e);
    early.settle();
  });
})();

// @part start-app
// Starts the app once the page is parsed (it mounts into <body>); its wasm's download started
// above. If it cannot start, the page says why instead of staying blank.
(function () {
  var fail = function (e) {
    console.error("The Control UI could not start:", e);
    var p = document.createElement("p");
    p.setAttribute("role", "alert");
    p.textContent = "The Control UI could not start (" + e + "). Check the connection to the gateway, then reload the page.";
    document.body.append(p);
  };
  var start = function () {
    try {
      wasm_bindgen({ module_or_path: window.ocuiWasm }).then(function (wasm) {
        window.wasmBindings = wasm_bindgen;
        dispatchEvent(new CustomEvent("TrunkApplicationStarted", { detail: { wasm: wasm } }));
      }, fail);
    } catch (e) {
      fail(e);
    }
  };
  if (document.readyState === "loading") addEventListener("DOMContentLoaded", start); else start();
})();
