//! Files sent with `chat.send`, as the real gateway (OpenClaw 2026.9.6) takes them: base64
//! `content`, per-file limits from `hello-ok`, the text saved as written with the files in
//! `__openclaw.media`, and the bytes served back by `/__openclaw__/assistant-media` to callers
//! with a token, for the conversation they belong to.

mod common;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use gateway::client::{Client, ClientOptions};
use protocol::methods::scope;
use serde_json::{Value, json};

const TOKEN: &str = "attachments-64e8fcef2a30d0b9107292c1dedda3dc";

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63,
    0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// A GET with the token as `Authorization: Bearer`, when given.
async fn get(addr: std::net::SocketAddr, path: &str, auth: Option<&str>) -> (String, Vec<(String, String)>, Vec<u8>) {
    common::http_get(addr, path, &auth.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default()).await
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    common::header(headers, name).unwrap_or("")
}

fn media_path(source: &str, session: &str) -> String {
    let enc = |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
    format!("/__openclaw__/assistant-media?source={}&sessionKey={}", enc(source), enc(session))
}

#[tokio::test]
async fn files_sent_with_a_message_are_saved_with_it_and_served_only_to_token_holders_of_that_conversation() {
    let (gw, _dir) = common::start_with(TOKEN, |_| {}).await;
    let mut c = Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::ADMIN])).await.unwrap();
    let policy = serde_json::to_value(&c.hello.policy).unwrap();
    assert_eq!(
        policy["attachments"],
        json!({"maxBytes": 19464192, "maxImageBytes": 6291456}),
        "the limits are announced as the real gateway does"
    );

    let note = "a note, with ümlauts\n";
    let ack = c
        .request(
            "chat.send",
            json!({"sessionKey": "main", "message": "picture and note", "idempotencyKey": "att-1", "attachments": [
                {"type": "image", "mimeType": "image/png", "fileName": "red dot.png", "content": STANDARD.encode(PNG)},
                {"type": "file", "mimeType": "text/plain", "fileName": "note.txt", "content": format!("data:text/plain;base64,{}", STANDARD.encode(note))},
            ]}),
        )
        .await
        .unwrap();
    assert_eq!(ack["status"], "started");
    let h = c.request("chat.history", json!({"sessionKey": "main"})).await.unwrap();
    let user = h["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap().clone();
    assert_eq!(user["content"], "picture and note", "the text is saved as written");
    let media = user["__openclaw"]["media"].as_array().unwrap();
    assert_eq!(media.len(), 2);
    assert_eq!(
        (media[0]["kind"].as_str(), media[0]["contentType"].as_str(), media[0]["fileName"].as_str(), media[0]["sizeBytes"].as_u64()),
        (Some("image"), Some("image/png"), Some("red dot.png"), Some(PNG.len() as u64))
    );
    assert_eq!((media[1]["kind"].as_str(), media[1]["contentType"].as_str()), (Some("document"), Some("text/plain")));
    let image_src = media[0]["url"].as_str().unwrap().to_string();
    assert!(image_src.starts_with("media://inbound/reddot---"), "{image_src}");

    // The bytes come back unchanged, to the gateway token and to a device token it issued.
    let (status, headers, body) = get(gw.addr, &media_path(&image_src, "agent:main:main"), Some(TOKEN)).await;
    assert!(status.contains("200"), "{status}");
    assert_eq!((header(&headers, "content-type"), body.as_slice()), ("image/png", PNG));
    assert!(header(&headers, "content-disposition").starts_with("inline"));
    assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
    assert_eq!(header(&headers, "cache-control"), "no-store", "private bytes are kept by no cache");
    // A token in the query is not taken (it would land in logs, history and Referers).
    let (status, _, _) = get(gw.addr, &format!("{}&token={TOKEN}", media_path(&image_src, "main")), None).await;
    assert!(status.contains("401"), "?token= is refused: {status}");
    let (status, headers, body) = get(gw.addr, &media_path(media[1]["url"].as_str().unwrap(), "main"), Some(TOKEN)).await;
    assert!(status.contains("200"), "{status}");
    assert_eq!(body, note.as_bytes());
    assert!(
        header(&headers, "content-disposition").starts_with("attachment; filename=\"note.txt\""),
        "anything but an image is a download"
    );
    let (status, _, meta) = get(gw.addr, &format!("{}&meta=1", media_path(&image_src, "main")), Some(TOKEN)).await;
    assert!(status.contains("200"));
    let meta: Value = serde_json::from_slice(&meta).unwrap();
    assert_eq!((meta["available"].as_bool(), meta["sizeBytes"].as_u64()), (Some(true), Some(PNG.len() as u64)));

    // No token, a wrong token, another conversation, or a made-up file: nothing.
    let (status, _, _) = get(gw.addr, &media_path(&image_src, "main"), None).await;
    assert!(status.contains("401"), "{status}");
    let (status, _, _) = get(gw.addr, &media_path(&image_src, "main"), Some("wrong")).await;
    assert!(status.contains("401"), "{status}");
    let (status, _, _) = get(gw.addr, &media_path(&image_src, "agent:main:other"), Some(TOKEN)).await;
    assert!(status.contains("404"), "{status}");
    let (status, _, _) = get(gw.addr, &media_path("media://inbound/../../gateway.sqlite", "main"), Some(TOKEN)).await;
    assert!(status.contains("404"), "{status}");
    let (status, _, body) = get(gw.addr, &media_path(&image_src, "").replace("&sessionKey=", ""), Some(TOKEN)).await;
    assert!(status.contains("400") && String::from_utf8_lossy(&body).contains("sessionKey"), "the conversation must be named: {status}");

    // Files alone are a message.
    let ack = c.request("chat.send", json!({"sessionKey": "main", "message": "", "idempotencyKey": "att-2", "attachments": [{"type": "file", "fileName": "x.bin", "content": STANDARD.encode([1u8, 2, 3])}]})).await.unwrap();
    assert_eq!(ack["status"], "started");
    // A resend with the same key is the same message: the files are not saved twice.
    let again = c.request("chat.send", json!({"sessionKey": "main", "message": "", "idempotencyKey": "att-2", "attachments": [{"type": "file", "fileName": "x.bin", "content": STANDARD.encode([1u8, 2, 3])}]})).await.unwrap();
    assert_ne!(again["status"], "started");
    assert_eq!(gw.gateway.store.count_messages_with_key("att-2:user").unwrap(), 1);
}

#[tokio::test]
async fn a_bad_or_oversized_file_is_refused_by_name_and_nothing_is_saved() {
    let (gw, _dir) = common::start_with(TOKEN, |_| {}).await;
    let mut c = Client::connect(ClientOptions::backend(&format!("ws://{}", gw.addr), TOKEN, &[scope::ADMIN])).await.unwrap();
    let mut big_png = PNG.to_vec();
    big_png.resize(6_291_457, 0);
    let cases = [
        (
            json!({"fileName": "big.png", "mimeType": "image/png", "content": STANDARD.encode(&big_png)}),
            "attachment big.png: image exceeds size limit (6291457 > 6291456 bytes)",
        ),
        (json!({"fileName": "x.png", "content": "not base64!"}), "attachment x.png: invalid base64 content"),
        (json!({"fileName": "x.png", "content": "AAE"}), "attachment x.png: invalid base64 content"),
        (json!({"fileName": "empty.txt", "content": ""}), "attachment empty.txt: empty payload"),
        (json!({"fileName": "n.txt", "content": 5}), "attachment n.txt: `content` must be base64 text"),
    ];
    for (i, (item, want)) in cases.into_iter().enumerate() {
        let e = c
            .request(
                "chat.send",
                json!({"sessionKey": "main", "message": "hi", "idempotencyKey": format!("bad-{i}"), "attachments": [item]}),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code, "INVALID_REQUEST");
        assert!(e.message.contains(want), "{} does not say {want}", e.message);
        assert_eq!(gw.gateway.store.count_messages_with_key(&format!("bad-{i}:user")).unwrap(), 0);
    }
    // A big file that is not an image is within the file limit.
    let ok = c.request("chat.send", json!({"sessionKey": "main", "message": "log", "idempotencyKey": "big-log", "attachments": [{"fileName": "log.txt", "mimeType": "image/png", "content": STANDARD.encode(vec![b'a'; 7_000_000])}]})).await.unwrap();
    assert_eq!(ok["status"], "started", "the type a client names is a hint: these bytes are text");
    let h = c.request("chat.history", json!({"sessionKey": "main"})).await.unwrap();
    let saved = h["messages"].as_array().unwrap().iter().find(|m| m["content"] == "log").unwrap().clone();
    assert_eq!(
        saved["__openclaw"]["media"][0]["contentType"], "application/octet-stream",
        "bytes that are no image are never called one: {saved}"
    );
    assert_eq!(saved["__openclaw"]["media"][0]["kind"], "document");
}
