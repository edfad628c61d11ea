//! Someone who used the build before the move to Trunk, gloo-net and `indexed_db_futures`
//! opens the new build: the rows the old build left in IndexedDB (captured from the real UI of
//! commit 00d90b7, `tests/fixtures/ocui-v2/`) are all there; they wait until the person says
//! this gateway is theirs (nothing shows which gateway they were queued for), then each unsent
//! message reaches the gateway exactly once; the failed one waits for Retry, the discarded one
//! never goes.

use std::time::Duration;

use e2e::T;
use e2e::browser::Browser;
use e2e::{LocalGateway, db_user_texts};
use serde_json::{Value, json};

const MAIN: &str = "agent:main:main";
const SIDE: &str = "agent:main:side";

fn fixture() -> Value {
    let text = std::fs::read_to_string(e2e::repo_root().join("tests/fixtures/ocui-v2/rows.json")).expect("the fixture");
    serde_json::from_str(&text).unwrap()
}

/// The old build's outbox rows: (text, state, session, discarded).
fn outbox_rows(f: &Value) -> Vec<(String, String, String, bool)> {
    f["stores"]["outbox"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let row: Value = serde_json::from_str(r[1].as_str().unwrap()).unwrap();
            (
                row["text"].as_str().unwrap().to_string(),
                row["state"].as_str().unwrap().to_string(),
                row["sessionKey"].as_str().unwrap().to_string(),
                row["discarded"] == json!(true),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_left_by_the_previous_build_are_kept_and_each_unsent_message_is_sent_exactly_once() {
    let f = fixture();
    let rows = outbox_rows(&f);
    let gw = LocalGateway::start().await;
    let b = Browser::start().await;
    // A page of the gateway's origin that does not run the app, to write storage as the old
    // build left it: JSON strings under string keys, in stores created without options.
    b.goto(&format!("{}/seed.txt", gw.base())).await;
    let seeded = b
        .js_async(&format!(
            "const f = {f};
             for (const [k, v] of Object.entries(f.localStorage)) localStorage.setItem(k, v);
             // The rows are from the capture day; people who upgrade later would see queued
             // rows held as stale (a documented rule of the outbox). This test is about the
             // upgrade, so it waives that hold.
             localStorage.setItem('ocui.outbox.staleMs', String(10 * 365 * 86400000));
             return await new Promise((resolve) => {{
               const open = indexedDB.open(f.database, f.version);
               open.onupgradeneeded = () => {{ for (const s of Object.keys(f.stores)) open.result.createObjectStore(s); }};
               open.onerror = () => resolve('open failed: ' + open.error);
               open.onsuccess = () => {{
                 const db = open.result;
                 const tx = db.transaction(Object.keys(f.stores), 'readwrite');
                 for (const [s, rows] of Object.entries(f.stores)) for (const [k, v] of rows) tx.objectStore(s).put(v, k);
                 tx.oncomplete = () => {{ db.close(); resolve('ok'); }};
                 tx.onerror = () => resolve('write failed: ' + tx.error);
               }};
             }});",
            f = f
        ))
        .await;
    assert_eq!(seeded, json!("ok"));

    let url = format!("{}/?session=agent%3Amain%3Amain#token={}", gw.base(), gw.token);
    b.goto(&url).await;
    b.wait_connected().await;

    // That build kept one database for every gateway and recorded none of them by the scopes it
    // was granted (its device token names another address): nothing shows these rows were
    // queued for this gateway, so they wait for the person, who says they were.
    let held = b.wait_text("[data-testid=outbox-identity-held]", T, |t| !t.is_empty()).await;
    assert!(held.contains("earlier version of this UI"), "{held}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(gw.gateway().store.user_texts(MAIN).unwrap().is_empty(), "nothing went before the person chose");
    b.click_button("Send here").await;

    // Every unsent row of the main conversation is sent once; the discarded one never.
    let main_unsent: Vec<&str> = rows
        .iter()
        .filter(|(_, state, s, discarded)| s == MAIN && !discarded && (state == "queued" || state == "waitingReconnect"))
        .map(|(t, ..)| t.as_str())
        .collect();
    assert_eq!(main_unsent.len(), 3, "the fixture has a queued message, a lost acknowledgement and an async answer: {rows:?}");
    let want = main_unsent.clone();
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let mut got = gw.gateway().store.user_texts(MAIN).unwrap();
        got.sort();
        let mut w: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        w.sort();
        if got == w {
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            // What the page shows beside what its storage holds: a tray whose states differ
            // from storage's is a page that kept older rows than it stored.
            let tray = b.js("return (document.querySelector('[data-testid=outbox-tray]')||{}).innerText||'none'").await;
            let log = b.browser_log().await;
            let idb = b.js_async("return await new Promise(r=>{const o=indexedDB.open('ocui');o.onsuccess=()=>{const t=o.result.transaction('outbox').objectStore('outbox').getAll();t.onsuccess=()=>r(t.result)}})").await;
            panic!(
                "database holds {got:?}, expected each of {w:?} once\nthe tray shows: {tray}\nbrowser log: {log:#?}\nthe outbox store holds: {idb:#}"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let composer: String =
        serde_json::from_str(f["stores"]["composer"].as_array().unwrap().iter().find(|r| r[0] == MAIN).unwrap()[1].as_str().unwrap())
            .unwrap();
    let area = b.find_xpath("//textarea[@name='message']", T).await;
    assert_eq!(area.prop("value").await.unwrap().as_deref(), Some(composer.as_str()), "the composer draft is back");

    // The refused row waits, listed by name with Retry, and goes once when asked.
    let failed = rows.iter().find(|(_, state, ..)| state == "failed").map(|(t, ..)| t.clone()).unwrap();
    let tray = b.wait_text("[data-testid=outbox-tray]", T, |t| t.contains(&failed)).await;
    assert!(tray.contains("1 unsent message"), "only the refused row is left: {tray}");
    assert!(gw.gateway().store.user_texts(SIDE).unwrap().is_empty(), "a refused row is not sent again by itself");
    b.click_button("Retry").await;
    db_user_texts(&gw, SIDE, &[failed.as_str()]).await;
    b.wait_gone("[data-testid=tray-row]", T).await;

    // After a reload nothing goes a second time.
    b.goto(&url).await;
    b.wait_connected().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut got = gw.gateway().store.user_texts(MAIN).unwrap();
    got.sort();
    let mut w: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    w.sort();
    assert_eq!(got, w, "each message exactly once after a reload");
    assert_eq!(gw.gateway().store.user_texts(SIDE).unwrap(), vec![failed.clone()]);
    assert!(!got.iter().any(|t| t == "discard me"), "the discarded row never went");
    b.close().await;
}
