//! Files a person sends with a message: what is kept of each beside its outbox row (the bytes
//! themselves are a Blob in IndexedDB), the limits the gateway announces in `hello-ok`
//! (`policy.attachments`), and the refusal, in words, of a file over them. Nothing is queued
//! that the gateway would refuse for its size.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One attached file, as stored in its outbox row. Its bytes are stored apart, under
/// [`AttachmentMeta::blob_key`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentMeta {
    /// Unique within the browser; names the stored bytes.
    pub id: String,
    pub file_name: String,
    /// As the browser typed the file; empty when it could not tell.
    #[serde(default)]
    pub mime_type: String,
    /// Bytes (decoded, as on disk).
    pub size: u64,
}

impl AttachmentMeta {
    /// Images are sent as images (the agent sees them); everything else as a file.
    pub fn is_image(&self) -> bool {
        self.mime_type.to_ascii_lowercase().starts_with("image/")
    }

    /// Where the bytes are kept: one key per file, grouped by the row that owns them, so a
    /// row's files can be found and removed together.
    pub fn blob_key(&self, owner: &str) -> String {
        format!("{owner}/{}", self.id)
    }

    /// The MIME type sent to the gateway: the browser's, or the generic one when it had none.
    pub fn wire_mime(&self) -> &str {
        if self.mime_type.is_empty() { "application/octet-stream" } else { &self.mime_type }
    }

    /// The `chat.send` attachment for these bytes (`content` is plain base64, no `data:`
    /// prefix), the shape of `chat.send`'s `attachments[]` in OpenClaw 2026.9.6.
    pub fn to_wire(&self, base64_content: &str) -> Value {
        json!({
            "type": if self.is_image() { "image" } else { "file" },
            "mimeType": self.wire_mime(),
            "fileName": self.file_name,
            "content": base64_content,
        })
    }
}

/// The owner of the files attached in a conversation's composer and not sent yet. A `/` or
/// `%` in the session key is escaped, so one owner's keys never fall in another's range.
pub fn draft_owner(session: &str) -> String {
    format!("draft:{}", session.replace('%', "%25").replace('/', "%2F"))
}

/// The gateway's limits, from `hello-ok`'s `policy.attachments`: `max_bytes` for a message's
/// files, `max_image_bytes` for any one image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachmentLimits {
    pub max_bytes: u64,
    pub max_image_bytes: u64,
}

impl AttachmentLimits {
    /// OpenClaw 2026.9.6's defaults, used when `hello-ok` names none.
    pub const DEFAULT: AttachmentLimits =
        AttachmentLimits { max_bytes: protocol::ATTACHMENTS_MAX_BYTES, max_image_bytes: protocol::ATTACHMENTS_MAX_IMAGE_BYTES };

    /// The limits `hello-ok` announced (`policy.attachments.maxBytes`, `maxImageBytes`);
    /// any it left out, or gave as zero, keeps its default.
    pub fn announced(max_bytes: Option<u64>, max_image_bytes: Option<u64>) -> AttachmentLimits {
        AttachmentLimits {
            max_bytes: max_bytes.filter(|n| *n > 0).unwrap_or(Self::DEFAULT.max_bytes),
            max_image_bytes: max_image_bytes.filter(|n| *n > 0).unwrap_or(Self::DEFAULT.max_image_bytes),
        }
    }

    /// Whether `file` may join `already` (the files attached to the same message), and if
    /// not, why, with the limit in words.
    pub fn check(&self, file: &AttachmentMeta, already: &[AttachmentMeta]) -> Result<(), String> {
        if file.size == 0 {
            return Err(format!("{} is empty (0 bytes), so it was not attached.", file.file_name));
        }
        if file.is_image() && file.size > self.max_image_bytes {
            return Err(format!(
                "{} is {}; this gateway takes images of at most {}, so it was not attached.",
                file.file_name,
                bytes_in_words(file.size),
                bytes_in_words(self.max_image_bytes)
            ));
        }
        if file.size > self.max_bytes {
            return Err(format!(
                "{} is {}; this gateway takes at most {} of files per message, so it was not attached.",
                file.file_name,
                bytes_in_words(file.size),
                bytes_in_words(self.max_bytes)
            ));
        }
        let total: u64 = already.iter().map(|a| a.size).sum::<u64>() + file.size;
        if total > self.max_bytes {
            return Err(format!(
                "{} would make this message's files {}; this gateway takes at most {} per message, so it was not attached. Send it in another message.",
                file.file_name,
                bytes_in_words(total),
                bytes_in_words(self.max_bytes)
            ));
        }
        Ok(())
    }
}

/// Whether a message and its encoded files fit one frame of the gateway's `maxPayload`: a
/// larger one would close the connection, and its resend after reconnecting would close it
/// again. The allowance covers the frame's own fields. The refusal is in words.
pub fn check_frame(text: &str, encoded: &[usize], max_payload: u64) -> Result<(), String> {
    let size = (text.len() + encoded.iter().map(|n| n + 256).sum::<usize>() + 4096) as u64;
    if size <= max_payload {
        return Ok(());
    }
    Err(format!(
        "with its files this message is {} to send, over the {} this gateway takes in one message. Discard puts it back in the composer: send its files in more than one message",
        bytes_in_words(size),
        bytes_in_words(max_payload)
    ))
}

/// A size as a person reads it: `512 bytes`, `3.4 KB`, `18.6 MB` (units of 1024, one decimal,
/// rounded; integer arithmetic only).
pub fn bytes_in_words(n: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * 1024;
    const GB: u64 = 1024 * 1024 * 1024;
    let (unit, name) = match n {
        n if n >= GB => (GB, "GB"),
        n if n >= MB => (MB, "MB"),
        n if n >= KB => (KB, "KB"),
        1 => return "1 byte".into(),
        n => return format!("{n} bytes"),
    };
    let tenths = (n * 10 + unit / 2) / unit;
    if tenths % 10 == 0 { format!("{} {name}", tenths / 10) } else { format!("{}.{} {name}", tenths / 10, tenths % 10) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, mime: &str, size: u64) -> AttachmentMeta {
        AttachmentMeta { id: name.into(), file_name: name.into(), mime_type: mime.into(), size }
    }

    #[test]
    fn sizes_read_as_a_person_says_them() {
        assert_eq!(bytes_in_words(0), "0 bytes");
        assert_eq!(bytes_in_words(1), "1 byte");
        assert_eq!(bytes_in_words(1023), "1023 bytes");
        assert_eq!(bytes_in_words(1024), "1 KB");
        assert_eq!(bytes_in_words(3_500), "3.4 KB");
        assert_eq!(bytes_in_words(6_291_456), "6 MB");
        assert_eq!(bytes_in_words(19_464_192), "18.6 MB");
        assert_eq!(bytes_in_words(5 * 1024 * 1024 * 1024), "5 GB");
    }

    #[test]
    fn limits_come_from_hello_ok_and_fall_back_to_the_defaults() {
        assert_eq!(AttachmentLimits::announced(Some(1000), Some(500)), AttachmentLimits { max_bytes: 1000, max_image_bytes: 500 });
        assert_eq!(AttachmentLimits::announced(None, None), AttachmentLimits::DEFAULT);
        assert_eq!(AttachmentLimits::announced(Some(0), None), AttachmentLimits::DEFAULT);
        assert_eq!(AttachmentLimits::announced(None, Some(7)).max_image_bytes, 7);
    }

    #[test]
    fn a_file_over_a_limit_is_refused_with_the_limit_in_words() {
        let limits = AttachmentLimits::DEFAULT;
        assert_eq!(limits.check(&file("cat.png", "image/png", 6_291_456), &[]), Ok(()));
        let big_image = limits.check(&file("cat.png", "image/png", 6_291_457), &[]).unwrap_err();
        assert_eq!(big_image, "cat.png is 6 MB; this gateway takes images of at most 6 MB, so it was not attached.");
        // The image limit does not apply to other files.
        assert_eq!(limits.check(&file("log.txt", "text/plain", 10_000_000), &[]), Ok(()));
        let big_file = limits.check(&file("dump.bin", "", 20_000_000), &[]).unwrap_err();
        assert!(big_file.contains("dump.bin is 19.1 MB") && big_file.contains("at most 18.6 MB"), "{big_file}");
        let together = limits.check(&file("b.txt", "text/plain", 10_000_000), &[file("a.txt", "text/plain", 10_000_000)]).unwrap_err();
        assert!(together.contains("would make this message's files 19.1 MB") && together.contains("another message"), "{together}");
        assert!(limits.check(&file("empty.txt", "text/plain", 0), &[]).unwrap_err().contains("empty"));
    }

    #[test]
    fn a_message_too_big_for_one_frame_is_refused_before_it_is_sent() {
        let max = 26_214_400;
        // Files within the per-message limit fit, base64 and all.
        let b64 = |n: u64| (n.div_ceil(3) * 4) as usize;
        assert_eq!(check_frame("hi", &[b64(AttachmentLimits::DEFAULT.max_bytes)], max), Ok(()));
        let over = check_frame("hi", &[b64(15_000_000), b64(15_000_000)], max).unwrap_err();
        assert!(over.starts_with("with its files this message is 38.2 MB to send, over the 25 MB"), "{over}");
        assert!(check_frame(&"x".repeat(1000), &[], 2000).is_err(), "the frame's own fields count too");
    }

    #[test]
    fn the_wire_shape_is_chat_send_attachments() {
        let img = file("cat.png", "image/png", 3);
        assert_eq!(img.to_wire("AAEC"), json!({"type": "image", "mimeType": "image/png", "fileName": "cat.png", "content": "AAEC"}));
        let blob = file("x", "", 3);
        assert_eq!(blob.to_wire("AAEC")["type"], "file");
        assert_eq!(blob.to_wire("AAEC")["mimeType"], "application/octet-stream");
        assert_eq!(img.blob_key("row-1"), "row-1/cat.png");
        assert_eq!(draft_owner("agent:main:a/b%"), "draft:agent:main:a%2Fb%25");
        // Stored form: camelCase, and a missing MIME type reads as empty.
        let back: AttachmentMeta = serde_json::from_str(r#"{"id":"a","fileName":"n","size":3}"#).unwrap();
        assert_eq!(back.mime_type, "");
        assert_eq!(serde_json::to_value(&img).unwrap(), json!({"id":"cat.png","fileName":"cat.png","mimeType":"image/png","size":3}));
    }
}

/// The raster image types saved media is shown as, by the gateway's content type. Anything else
/// (SVG, HTML, scripts, unknown) is never shown inline, whatever the gateway says.
const RASTER: [&str; 7] = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp", "image/x-icon"];

/// The type saved media gets on this page's origin: an image keeps its type only if it is a
/// raster one (`Err` says why it is not shown); a download is always
/// `application/octet-stream`, so a browser never opens it as a page of this origin.
pub fn media_type_here(gateway_type: &str, as_image: bool) -> Result<&'static str, String> {
    if !as_image {
        return Ok("application/octet-stream");
    }
    let essence = gateway_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    RASTER.iter().find(|t| **t == essence).copied().ok_or_else(|| {
        let shown = if essence.is_empty() { "no type".to_string() } else { essence };
        format!("it is not a raster image ({shown}); download it instead")
    })
}

#[cfg(test)]
mod media_type_tests {
    use super::media_type_here;

    #[test]
    fn saved_media_is_rewrapped_raster_images_only_and_downloads_as_bytes() {
        assert_eq!(media_type_here("image/PNG; charset=binary", true), Ok("image/png"));
        assert!(media_type_here("image/svg+xml", true).unwrap_err().contains("image/svg+xml"));
        assert!(media_type_here("text/html", true).is_err());
        assert_eq!(media_type_here("text/html", false), Ok("application/octet-stream"));
        assert_eq!(media_type_here("image/png", false), Ok("application/octet-stream"));
    }
}
