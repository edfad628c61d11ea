//! `model::transcript` fed with real runs of OpenClaw 2026.9.6 (captured on a Control UI
//! connection with `caps: ["tool-events"]`, `fixtures/live-runs/`), event by event.

use model::transcript::{Effect, OUTPUT_KEPT_BYTES, Output, RunEnd, RunPhase, ToolStatus, Transcript};
use serde_json::{Value, json};

const SESSION: &str = "agent:main:main";

/// The gateway's frames to the UI, in order: `(ms, event, payload)`.
fn frames(name: &str) -> Vec<(u64, String, Value)> {
    let path = format!("{}/tests/fixtures/live-runs/{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["dir"] == "gw->ui" && l["frame"]["type"] == "event")
        .map(|l| (l["ms"].as_u64().unwrap(), l["frame"]["event"].as_str().unwrap().to_string(), l["frame"]["payload"].clone()))
        .collect()
}

/// Feeds one event; returns its effects.
fn feed(t: &mut Transcript, event: &str, p: &Value) -> Vec<Effect> {
    if p.get("sessionKey").and_then(Value::as_str).is_some_and(|k| k != SESSION) {
        return Vec::new();
    }
    match event {
        "chat" => t.chat(p),
        "agent" => t.agent(p),
        "session.message" => t.saved_row(p),
        _ => Vec::new(),
    }
}

/// Replays a whole run; `at` is called after each event with its time.
fn replay(name: &str, mut at: impl FnMut(u64, &str, &Value, &Transcript)) -> (Transcript, Vec<Effect>) {
    let mut t = Transcript::new(SESSION);
    let mut effects = Vec::new();
    for (ms, event, p) in frames(name) {
        effects.extend(feed(&mut t, &event, &p));
        at(ms, &event, &p, &t);
    }
    (t, effects)
}

fn texts(t: &Transcript) -> Vec<(String, String)> {
    t.shown_rows().iter().map(|r| (r.role.clone(), r.text.clone())).collect()
}

#[test]
fn a_markdown_reply_streams_then_its_saved_row_takes_its_place_and_the_run_says_how_long_it_took() {
    let mut streamed = Vec::new();
    let (t, effects) = replay("markdown-reply", |_, event, _, t| {
        if event == "chat"
            && let Some(r) = t.runs.first()
            && r.is_active()
            && !r.text.is_empty()
        {
            streamed.push(r.text.clone());
        }
    });
    // The first delta shows; the second repeats what the saved row (already in) shows.
    assert_eq!(streamed, ["# Plan\n\n- **one**\n- two\n\n```sh\necho hi"], "the reply is shown while it streams");
    let rows = texts(&t);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].0, "user");
    assert_eq!(rows[1].0, "assistant");
    assert!(rows[1].1.starts_with(&streamed[0]));
    assert!(!t.run_active());
    let run = &t.runs[0];
    assert_eq!(run.end(), Some(&RunEnd::Done));
    assert!(run.text.is_empty() && run.unsaved_reply.is_none(), "nothing shown twice");
    let durations = t.run_durations();
    let (end, ms) = durations.get(&t.rows[1].key).expect("the reply row carries its run's duration");
    assert_eq!(*end, RunEnd::Done);
    assert!(*ms > 0.0);
    assert!(effects.contains(&Effect::SyncHistory), "a run's end fetches the history (tool results are never sent live)");
}

#[test]
fn thinking_streams_into_its_run_before_the_saved_row() {
    let mut seen = String::new();
    let (t, _) = replay("thinking", |_, event, p, t| {
        if event == "agent" && p["stream"] == "thinking" {
            seen = t.runs[0].thinking.clone();
        }
    });
    assert_eq!(seen, "The person wants a considered answer. I weigh two options and pick the safer one.");
    let reply = t.rows.iter().find(|r| r.role == "assistant").unwrap();
    assert!(matches!(model::parts::parts(&reply.raw)[0], model::parts::Part::Thinking { .. }));
}

#[test]
fn ask_user_through_tool_call_shows_as_ask_user_with_its_own_result_and_the_missed_result_row_is_fetched() {
    let mut waited = false;
    let (t, effects) = replay("ask-user-from-run", |_, event, _, t| {
        waited |= event == "question.requested" && t.runs[0].phase == RunPhase::WaitingAnswer;
    });
    assert!(waited, "while the question waits, the run says it waits for the person's answer");
    // The nested row (seq 7) is drawn by the `tool_call` card; seq 8 (the wrapper's result) was
    // never sent, so seq 9 asks for the history.
    assert!(effects.contains(&Effect::SyncHistory));
    let shown = t.shown_rows();
    assert!(shown.iter().all(|r| !r.is_nested_tool()), "the nested row is drawn by its call's card");
    let call = shown.iter().find(|r| !r.tool_calls.is_empty()).unwrap();
    let id = &call.tool_calls[0];
    let (name, args) = t.nested_call(id).expect("the real tool behind tool_call");
    assert_eq!(name, "ask_user");
    assert_eq!(model::parts::ask_questions(&args)[0].question, "Which target for mxarsf1kwm0?");
    assert_eq!(call.asks, vec!["Which target for mxarsf1kwm0?".to_string()], "the summary matches the question");
    let result = t.results().get(id).cloned().expect("its result, from the nested row");
    assert_eq!(result.name, "ask_user");
    assert!(result.text.starts_with("Target: Staging"), "{}", result.text);
    assert!(t.rows.iter().all(|r| model::parts::parts(&r.raw).iter().all(|p| !matches!(p, model::parts::Part::Unsupported { .. }))));
}

#[test]
fn an_exec_approval_shows_the_run_waiting_then_the_commands_output_and_exit_code() {
    let mut phases = Vec::new();
    let mut at_end = None;
    let (t, _) = replay("exec-approval-from-run", |_, event, p, t| {
        if event == "agent" && p["stream"] == "command_output" && p["data"]["phase"] == "end" {
            at_end = t.tool("call_5").map(|x| x.output.text.clone());
        }
        if event == "agent"
            && let Some(r) = t.runs.first()
            && phases.last() != Some(&r.phase)
        {
            phases.push(r.phase.clone());
        }
    });
    assert!(phases.contains(&RunPhase::WaitingApproval), "{phases:?}");
    assert!(phases.iter().any(|p| matches!(p, RunPhase::Tool(what) if what == "sh demo-ok.sh mxarsjxb5w4")), "{phases:?}");
    let tool = t.tool("call_5").unwrap();
    assert_eq!((tool.name.as_str(), tool.command.as_deref()), ("exec", Some("sh demo-ok.sh mxarsjxb5w4")));
    assert_eq!(at_end.as_deref(), Some("ok-42-mxarsjxb5w4"), "the output, as it ended");
    assert_eq!((tool.status, tool.exit_code), (ToolStatus::Done, Some(0)));
    assert!(tool.output.text.is_empty(), "once the run ended and its rows are saved, its output is let go (the saved result has it)");
    assert_eq!(tool.duration_ms, Some(35));
    assert!(t.call_is_saved("call_5"));
}

#[test]
fn a_commands_output_is_shown_while_it_runs() {
    let mut while_running = None;
    let mut at_end = None;
    let (t, _) = replay("command-output-while-running", |ms, event, p, t| {
        if event == "agent" && p["stream"] == "command_output" && p["data"]["phase"] == "end" {
            at_end = t.tool("call_7").map(|x| x.output.text.clone());
        }
        // The first output, 8 s before the command ends.
        if ms < 9000 && event == "agent" && p["stream"] == "command_output" {
            while_running = t.tool("call_7").map(|x| (x.status, x.output.text.clone()));
        }
    });
    assert_eq!(while_running, Some((ToolStatus::Running, "early-42-mxarsoz71rw".to_string())));
    let tool = t.tool("call_7").unwrap();
    assert_eq!((tool.status, tool.exit_code, tool.duration_ms), (ToolStatus::Done, Some(0), Some(8017)));
    assert_eq!(at_end.as_deref(), Some("early-42-mxarsoz71rw\nlate"));
}

#[test]
fn stop_ends_the_run_stopped_and_keeps_what_it_wrote() {
    let mut after_abort = None;
    let (t, _) = replay("stop-while-streaming", |_, event, p, t| {
        if event == "chat" && p["state"] == "aborted" {
            after_abort = t.runs[0].unsaved_reply.clone();
        }
    });
    assert_eq!(
        after_abort.map(|m| model::message_text(&m)),
        Some("c1-mxart54wqz8 c2-mxart54wqz8 c3-mxart54wqz8 c4-mxart54wqz8".to_string()),
        "the text so far stays in view until its row is saved"
    );
    assert_eq!(t.runs[0].end(), Some(&RunEnd::Stopped), "the later lifecycle error does not turn a Stop into a failure");
    assert!(!t.run_active());
    assert!(t.runs[0].unsaved_reply.is_none(), "the saved row replaced it");
    let (end, _) = t.run_durations().get(&t.rows.last().unwrap().key).cloned().unwrap();
    assert_eq!(end, RunEnd::Stopped);
}

#[test]
fn a_follow_up_sent_while_a_reply_streams_is_shown_once_and_answered_and_nothing_is_lost() {
    let mut streaming_after_follow_up = false;
    let mut active_during_first = true;
    let (t, _) = replay("follow-up-during-run", |ms, event, p, t| {
        if (1400..8000).contains(&ms) && event == "chat" && !t.runs[0].text.is_empty() {
            streaming_after_follow_up = true;
        }
        // The follow-up's empty final (9448 ms) does not end the first run.
        if event == "chat" && p["state"] == "final" && p["message"].is_null() {
            active_during_first = t.run_active();
        }
    });
    assert!(streaming_after_follow_up, "the first reply keeps streaming after the follow-up is sent");
    assert!(active_during_first, "the follow-up's empty final leaves the first run going");
    let rows = texts(&t);
    let roles: Vec<&str> = rows.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"], "{rows:?}");
    assert_eq!(rows[2].1, "then echo follow-mxaru9lcae0", "the follow-up once");
    assert_eq!(rows[3].1, "Echo: then echo follow-mxaru9lcae0", "and its answer");
    assert_eq!(t.runs.len(), 1, "the follow-up's own run shows nothing");
    assert!(!t.run_active());
    assert!(t.runs[0].text.is_empty() && t.runs[0].unsaved_reply.is_none(), "no reply shown twice");
}

#[test]
fn a_secrets_request_through_tool_call_shows_as_secrets_with_its_stored_result() {
    let (t, _) = replay("secrets-request-from-run", |_, _, _, _| {});
    let call = t.shown_rows().into_iter().find(|r| !r.tool_calls.is_empty()).unwrap();
    let (name, args) = t.nested_call(&call.tool_calls[0]).unwrap();
    assert_eq!(name, "secrets");
    assert_eq!(args["allowedHosts"], json!(["api.demo.invalid"]));
    let result = &t.results()[&call.tool_calls[0]];
    assert!(result.text.starts_with("Stored; value hidden."));
    let all = serde_json::to_string(&t.rows.iter().map(|r| r.raw.clone()).collect::<Vec<_>>()).unwrap();
    assert!(!all.contains("v-mxarszwi5zm-Zq9"), "the value is in no row");
}

fn row(seq: u64, role: &str, text: &str) -> Value {
    json!({"role": role, "content": text, "timestamp": seq as f64 * 1000.0, "__openclaw": {"id": format!("id-{seq}"), "seq": seq}})
}

#[test]
fn a_history_page_keeps_live_rows_newer_than_it_and_older_rows_loaded_before() {
    let mut t = Transcript::new(SESSION);
    t.history(&json!({"messages": (101..=200).map(|s| row(s, "user", &format!("m{s}"))).collect::<Vec<_>>(), "hasMore": true}));
    t.older(&json!({"messages": (1..=100).map(|s| row(s, "user", &format!("m{s}"))).collect::<Vec<_>>(), "hasMore": false}));
    assert_eq!(t.rows.len(), 200);
    let fx = t.saved_row(&json!({"message": row(201, "assistant", "live")}));
    assert!(!fx.contains(&Effect::SyncHistory), "no gap");
    // A reconnect's newest page (up to 200) must not drop the live row nor the older page.
    t.history(&json!({"messages": (101..=200).map(|s| row(s, "user", &format!("m{s}"))).collect::<Vec<_>>(), "hasMore": true}));
    let seqs: Vec<u64> = t.rows.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (1..=201).collect::<Vec<_>>());
}

#[test]
fn a_live_row_that_skips_a_seq_fetches_the_history_once_and_lands_in_order() {
    let mut t = Transcript::new(SESSION);
    t.history(&json!({"messages": [row(1, "user", "a"), row(2, "assistant", "b")]}));
    assert_eq!(t.saved_row(&json!({"message": row(4, "assistant", "d")})), vec![Effect::SyncHistory, Effect::SaveCopy]);
    assert_eq!(t.saved_row(&json!({"message": row(6, "assistant", "f")})), vec![Effect::SaveCopy], "one fetch at a time");
    // A late row lands before newer ones.
    t.saved_row(&json!({"message": row(3, "toolResult", "c")}));
    t.history(&json!({"messages": [row(1, "user", "a"), row(2, "assistant", "b"), row(3, "toolResult", "c"), row(4, "assistant", "d"), row(5, "user", "e")]}));
    let seqs: Vec<u64> = t.rows.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        t.saved_row(&json!({"message": row(8, "assistant", "h")})),
        vec![Effect::SyncHistory, Effect::SaveCopy],
        "a new gap fetches again"
    );
}

#[test]
fn a_runs_events_older_than_the_newest_seen_are_stale() {
    let mut t = Transcript::new(SESSION);
    let delta = |seq: u64, text: &str| json!({"runId": "r", "sessionKey": SESSION, "seq": seq, "state": "delta", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}});
    t.chat(&delta(3, "abc"));
    t.chat(&delta(2, "ab"));
    assert_eq!(t.runs[0].text, "abc");
    t.chat(&delta(5, "abcde"));
    assert_eq!(t.runs[0].text, "abcde");
}

#[test]
fn a_commands_output_is_bounded_to_its_newest_part_from_a_whole_line() {
    let mut out = Output::default();
    let whole: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    out.set(&whole);
    assert!(out.text.len() <= OUTPUT_KEPT_BYTES);
    assert!(out.text.starts_with("line "), "starts at a line");
    assert!(out.text.ends_with("line 19999\n"));
    assert_eq!(out.cut_bytes + out.text.len(), whole.len());
    assert_eq!(out.tail(2), "line 19998\nline 19999");
}

#[test]
fn a_history_that_no_longer_names_a_run_active_ends_it_and_adopts_one_in_flight() {
    let mut t = Transcript::new(SESSION);
    t.chat(&json!({"runId": "old", "sessionKey": SESSION, "seq": 1, "state": "status", "phase": "preparing_context"}));
    assert!(t.run_active());
    t.history(&json!({"messages": [], "sessionInfo": {"hasActiveRun": true, "activeRunIds": ["new"]}}));
    assert_eq!(t.active_run_ids(), vec!["new".to_string()]);
}

#[test]
fn a_row_seen_live_and_again_in_a_sync_page_is_shown_once() {
    let mut t = Transcript::new(SESSION);
    t.history(&json!({"messages": []}));
    t.saved_row(&json!({"message": row(1, "user", "u")}));
    t.saved_row(&json!({"message": row(2, "assistant", "call")}));
    assert_eq!(t.saved_row(&json!({"message": row(4, "assistant", "reply")})), vec![Effect::SyncHistory, Effect::SaveCopy]);
    t.history(
        &json!({"messages": [row(1, "user", "u"), row(2, "assistant", "call"), row(3, "toolResult", "r"), row(4, "assistant", "reply")]}),
    );
    // The real gateway's page can hold a row twice.
    t.history(&json!({"messages": [row(1, "user", "u"), row(2, "assistant", "call"), row(2, "assistant", "call"), row(3, "toolResult", "r"), row(4, "assistant", "reply")]}));
    t.saved_row(&json!({"message": row(4, "assistant", "reply")}));
    let keys: Vec<&str> = t.rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["id-1", "id-2", "id-3", "id-4"]);
}

#[test]
fn a_reload_mid_run_adopts_the_in_flight_run_and_replays_its_stored_events() {
    // The command-output run's agent events up to its first output, as `inFlightRun.events`.
    let events: Vec<Value> = frames("command-output-while-running")
        .into_iter()
        .filter(|(ms, event, _)| event == "agent" && *ms < 2000)
        .map(|(_, _, p)| p)
        .collect();
    let run = events[0]["runId"].as_str().unwrap().to_string();
    let mut t = Transcript::new(SESSION);
    t.history(&json!({"messages": [], "sessionInfo": {"hasActiveRun": true, "activeRunIds": [run]},
        "inFlightRun": {"runId": run, "text": "Running it.", "startedAt": 1796496777800.0, "events": events},
        "pendingInputs": {"items": [{"id": "in-1", "message": {"role": "user", "content": "and then this"}, "acceptedAt": 1.0, "state": "queued"}], "total": 1}}));
    assert!(t.run_active());
    let r = t.run(&run).unwrap();
    assert_eq!(r.text, "Running it.");
    assert!(r.started_ms.is_some_and(|s| s >= 1796496777800.0), "{:?}", r.started_ms);
    let tool = t.tool("call_7").expect("the running tool, from the replayed events");
    assert_eq!((tool.status, tool.output.text.as_str()), (ToolStatus::Running, "early-42-mxarsoz71rw"));
    assert_eq!(r.phase, RunPhase::Tool("sh demo-live.sh mxarsoz71rw".into()));
    assert_eq!(t.pending_inputs.len(), 1);
    assert_eq!((t.pending_inputs[0].text.as_str(), t.pending_inputs[0].status.as_str()), ("and then this", "queued"));
    // The live events that follow carry on from there.
    assert_eq!(t.agent(&json!({"runId": run, "sessionKey": SESSION, "seq": 99, "stream": "error", "data": {"reason": "seq gap", "expected": 30, "received": 99}})), vec![Effect::SyncHistory], "a lost event fetches the saved rows");
}

#[test]
fn durations_read_as_a_person_says_them() {
    use model::transcript::duration_words;
    assert_eq!(duration_words(0.0), "0.0 s");
    assert_eq!(duration_words(1234.0), "1.2 s");
    assert_eq!(duration_words(9_960.0), "10 s");
    assert_eq!(duration_words(42_400.0), "42 s");
    assert_eq!(duration_words(185_000.0), "3 min 5 s");
}

#[test]
fn a_runs_footer_goes_under_its_last_row_a_person_sees_not_under_a_tool_result() {
    let mut t = Transcript::new(SESSION);
    let mut call = row(2, "assistant", "");
    call["content"] = json!([{"type": "text", "text": "Asking."}, {"type": "toolCall", "id": "c1", "name": "ask_user", "arguments": {}}]);
    call["__openclaw"]["runId"] = json!("r1");
    let mut result = json!({"role": "toolResult", "toolCallId": "c1", "toolName": "ask_user", "content": "skipped", "timestamp": 3000.0, "__openclaw": {"id": "id-3", "seq": 3, "runId": "r1"}});
    result["isError"] = json!(false);
    let mut user = row(1, "user", "go");
    user["idempotencyKey"] = json!("r1:user");
    t.history(&json!({"messages": [user, call, result]}));
    t.chat(&json!({"runId": "r1", "sessionKey": SESSION, "seq": 5, "state": "aborted"}));
    let d = t.run_durations();
    assert_eq!(d.keys().collect::<Vec<_>>(), vec!["id-2"], "under the call's row: {d:?}");
    assert_eq!(d["id-2"].0, RunEnd::Stopped);
}

#[test]
fn a_history_page_ends_only_runs_it_knows_and_a_null_run_list_ends_none() {
    let status = |run: &str| json!({"runId": run, "sessionKey": SESSION, "seq": 1, "state": "status", "phase": "preparing_context"});
    let mut t = Transcript::new(SESSION);
    t.chat(&status("a"));
    // The real gateway often sends `activeRunIds: null` while a run goes on.
    t.history(&json!({"messages": [], "sessionInfo": {"hasActiveRun": true, "activeRunIds": null}}));
    assert_eq!(t.active_run_ids(), vec!["a".to_string()]);
    // A page asked for before run b started, answered after its first event, says nothing runs:
    // it ends a (which it knew) but not b.
    let mark = t.event_mark;
    t.chat(&status("b"));
    t.history_since(&json!({"messages": [], "sessionInfo": {"hasActiveRun": false, "activeRunIds": []}}), mark);
    assert_eq!(t.active_run_ids(), vec!["b".to_string()]);
}
