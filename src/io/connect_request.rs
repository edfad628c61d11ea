//! The `connect` request, worked out in one place for both senders: the app's client
//! (`gateway_client`) and the page's early module (`src/bin/early.rs`, `early_connect`), which sends the first one while the app's wasm is still on its
//! way, so that the gateway's handshake overlaps the download.

use protocol::connect::{AuthParams, ClientInfo, ConnectChallenge, ConnectParams, DeviceAuth};
use protocol::frame::{NoParams, request_text};

use crate::io::browser;
use crate::io::identity::{self, DeviceIdentity};

/// The reads sent right behind the first `connect`, before `hello-ok`
/// (`GatewayClient::pipeline_after_connect`): the dock's first
/// listing. The early module sends these too, so the app finds their answers waiting.
pub const FIRST_READS: &[&str] = &[protocol::methods::method::QUESTION_LIST];

/// One `connect` to one gateway, before it is signed.
pub struct ConnectRequest {
    client: ClientInfo,
    scopes: Vec<String>,
    auth: AuthParams,
    identity: Option<DeviceIdentity>,
    /// This tab's tokens for the gateway, whichever of them the request carries.
    own_secrets: Vec<String>,
}

impl ConnectRequest {
    /// What to send to `url`: the shared token when this tab has one; the device token when it
    /// is all we have, or when `use_device_token` (once, after the gateway said the shared token
    /// is wrong but knows the device).
    pub fn new(url: &str, identity: Option<DeviceIdentity>, use_device_token: bool) -> ConnectRequest {
        let scopes: Vec<String> = protocol::methods::UI_SCOPES.iter().map(|s| s.to_string()).collect();
        let stored_device_token = identity.as_ref().and_then(|id| identity::device_token(&id.device_id(), url));
        let shared = identity::session_token(url);
        let own_secrets = shared.iter().chain(stored_device_token.iter()).cloned().collect();
        let auth = if use_device_token || shared.is_none() {
            AuthParams { device_token: stored_device_token, ..Default::default() }
        } else {
            AuthParams { token: shared, ..Default::default() }
        };
        let client = ClientInfo::new(protocol::connect::CONTROL_UI_CLIENT_ID, env!("CARGO_PKG_VERSION"), &browser::platform(), "webchat");
        ConnectRequest { client, scopes, auth, identity, own_secrets }
    }

    /// The tokens this tab holds for the gateway: the credential guard refuses any text
    /// holding them, whatever they look like.
    pub fn own_secrets(&self) -> Vec<&str> {
        self.own_secrets.iter().map(String::as_str).collect()
    }

    /// The `connect` frame with request id `id`, signed over `challenge` by the device identity
    /// (WebCrypto). Without an identity, or if WebCrypto cannot sign, it goes unsigned and the
    /// gateway decides.
    pub async fn frame(self, id: &str, challenge: &ConnectChallenge) -> String {
        let device = match &self.identity {
            Some(d) => {
                let payload = ConnectParams::operator_payload(&self.client, &self.scopes, &self.auth, &d.device_id(), challenge);
                match d.sign_b64(&payload).await {
                    Ok(signature) => Some(DeviceAuth::signed(d.device_id(), d.public_key_b64(), signature, challenge)),
                    Err(e) => {
                        browser::log_warn(&format!("connecting without a device signature: {e}"));
                        None
                    }
                }
            }
            None => None,
        };
        request_text(id, "connect", &ConnectParams::operator_signed(self.client, self.scopes, self.auth, device))
    }
}

/// A read's request frame, with empty params (one of [`FIRST_READS`]).
pub fn read_frame(id: &str, method: &str) -> String {
    request_text(id, method, &NoParams {})
}
