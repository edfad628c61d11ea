// Test technique for the real OpenClaw gateway 2026.9.6 (../shared/docs/real-gateway.md §7):
// `chat.inject` can only save plain assistant text, so the e2e tests inject one row per
// message they need and then rewrite that row's saved message in the agent's SQLite store.
// `chat.history` reads rows fresh, so the rewritten rows are served at once.
//
// usage: node patch-transcript.mjs <openclaw-agent.sqlite> <patches.json>
// patches.json: [{"marker": "<text of the injected row>", "message": {<fields to set>}}]
import { readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";

const [dbPath, patchesPath] = process.argv.slice(2);
const patches = JSON.parse(readFileSync(patchesPath, "utf8"));
const db = new DatabaseSync(dbPath);
const find = db.prepare("SELECT session_id, seq, event_json FROM transcript_events WHERE event_json LIKE ? ORDER BY created_at DESC LIMIT 1");
const update = db.prepare("UPDATE transcript_events SET event_json = ?, event_utf8_bytes = CASE WHEN event_utf8_bytes IS NULL THEN NULL ELSE ? END WHERE session_id = ? AND seq = ?");
for (const { marker, message } of patches) {
  const row = find.get(`%${marker}%`);
  if (!row) {
    console.error(`no saved row holds ${marker}`);
    process.exit(1);
  }
  const event = JSON.parse(row.event_json);
  if (!event.message || typeof event.message !== "object") {
    console.error(`the row with ${marker} is not a message event: ${row.event_json.slice(0, 200)}`);
    process.exit(1);
  }
  // The injected row's own bookkeeping stays (timestamp, ids); what the test needs replaces it.
  // `openclawDisplayContent` goes too: the gateway serves it in place of `content`.
  const { provider, model, api, usage, stopReason, openclawDisplayContent, ...rest } = event.message;
  event.message = { ...rest, ...message };
  const json = JSON.stringify(event);
  update.run(json, Buffer.byteLength(json), row.session_id, row.seq);
  console.log(`patched ${marker} (seq ${row.seq})`);
}
