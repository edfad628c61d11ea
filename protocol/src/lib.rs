//! OpenClaw gateway protocol v4.
//!
//! One truth for the UI and the local gateway: the wire types (as serde types) and the pure
//! rules of the protocol (closed-schema checks, device-signature payloads, question
//! validation with the gateway's `details.reason` codes, method scopes).
//!
//! Types are lenient when deserialising (a newer gateway may add fields the UI must not
//! choke on); the gateway gets closed-schema behaviour from [`closed::from_value_closed`],
//! which names the first unknown field.

pub mod approval;
pub mod chat;
pub mod closed;
pub mod connect;
pub mod device;
pub mod error;
pub mod frame;
pub mod methods;
pub mod push;
pub mod question;
pub mod text;
pub mod time;

/// The only protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 4;

/// Pre-connect frames are limited to 64 KiB.
pub const MAX_PRECONNECT_FRAME_BYTES: usize = 64 * 1024;
/// After connect, `policy.maxPayload`.
pub const MAX_PAYLOAD_BYTES: usize = 25 * 1024 * 1024;
/// `policy.maxBufferedBytes`: a client whose unsent backlog exceeds this is dropped.
pub const MAX_BUFFERED_BYTES: usize = 50 * 1024 * 1024;
/// `policy.attachments.maxBytes`: files of one `chat.send`, decoded (OpenClaw 2026.9.6's
/// value: their base64 still fits in one `maxPayload` frame).
pub const ATTACHMENTS_MAX_BYTES: u64 = 19_464_192;
/// `policy.attachments.maxImageBytes`: any one image, decoded.
pub const ATTACHMENTS_MAX_IMAGE_BYTES: u64 = 6_291_456;
/// `policy.tickIntervalMs` default.
pub const TICK_INTERVAL_MS: u64 = 30_000;
/// Device signatures must be within this many ms of the server clock.
pub const SIGNATURE_SKEW_MS: i64 = 120_000;
/// Resolved questions stay readable through `question.get` this long.
pub const QUESTION_TERMINAL_GRACE_MS: i64 = 15_000;
