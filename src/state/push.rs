//! Web Push on this device: the setting that turns it on (the permission is asked only on that
//! click), the categories the gateway keeps for it, a test, and turning it off. On every
//! connect the browser's subscription is reconciled with the gateway (`model::push::reconcile`).

use leptos::prelude::*;
use leptos::task::spawn_local;
use model::push::{Availability, BrowserSubscription, PushState, Reconcile};
use protocol::methods::method;
use protocol::push::{Categories, DevicePreferences};
use serde_json::{Value, json};

use crate::io::browser;
use crate::io::gateway_client::{GatewayClient, RequestError, Status};
use crate::io::push as browser_push;

/// The gateway this browser's subscription was made for (one per base path: one service worker).
fn owner_key() -> String {
    format!("ocui.push.owner.v1:{}", browser::base_path())
}

#[derive(Clone, Copy)]
pub struct PushController {
    pub state: RwSignal<PushState>,
    pub categories: RwSignal<Categories>,
    pub busy: RwSignal<bool>,
    /// A reconcile is on its way: the connect's and the setting's never run together (one
    /// could drop a subscription while the other, finding none, said Off).
    reconciling: StoredValue<bool>,
    /// What the last action came to, in words (a test sent, or why something failed).
    pub message: RwSignal<Option<String>>,
    client: GatewayClient,
}

fn gateway_error(e: RequestError) -> String {
    match e {
        RequestError::Gateway(e) => e.message,
        RequestError::Disconnected => "The connection to the gateway was lost; try again once it is back.".into(),
    }
}

impl PushController {
    pub fn new(client: GatewayClient) -> PushController {
        let c = PushController {
            state: RwSignal::new(PushState::Unknown),
            // What an agent waits on; the gateway keeps the device's choice once turned on.
            categories: RwSignal::new(Categories { agent_question: true, ..Categories::default() }),
            busy: RwSignal::new(false),
            reconciling: StoredValue::new(false),
            message: RwSignal::new(None),
            client,
        };
        Effect::new(move |_| {
            let _ = client.connected_epoch.get();
            if client.status.get_untracked() == Status::Connected {
                spawn_local(c.on_connect());
            }
        });
        c
    }

    /// On every connect, a subscription this browser holds is reconciled with the gateway. A
    /// browser that holds none has nothing to reconcile: whether this gateway can send is read
    /// when the setting is drawn ([`PushController::check`]), so the code that talks push with
    /// the gateway is fetched only by a page that shows the setting or holds a subscription.
    async fn on_connect(self) {
        if let Err(why) = self.availability() {
            return self.state.set(PushState::Unavailable(why));
        }
        match browser_push::held().await {
            Ok(None) => self.state.set(PushState::Unknown),
            Ok(Some(_)) => match reconciler(self).await {
                Ok(work) => work.await,
                Err(_) => self.state.set(PushState::Unavailable(
                    "The notification setting could not be loaded from the gateway. Reload the page to check it.".into(),
                )),
            },
            Err(e) => self.state.set(PushState::Unavailable(format!("The browser's push subscription could not be read: {e}"))),
        }
    }

    /// The setting, drawn: a state not read since the connect is read now.
    pub fn check(self) {
        if self.state.get_untracked() == PushState::Unknown && self.client.status.get_untracked() == Status::Connected {
            spawn_local(self.reconcile());
        }
    }

    fn availability(&self) -> Result<(), String> {
        match model::push::availability(browser_push::environment()) {
            Availability::Ready => Ok(()),
            a => Err(model::push::unavailable_reason(a).unwrap_or_default().to_string()),
        }
    }

    async fn server_key(&self) -> Result<String, String> {
        let v = self.client.request(method::PUSH_VAPID_PUBLIC_KEY, json!({})).await.map_err(gateway_error)?;
        v["vapidPublicKey"].as_str().filter(|k| !k.is_empty()).map(str::to_string).ok_or_else(|| "The gateway sent no VAPID key.".into())
    }

    async fn reconcile(self) {
        if self.reconciling.get_value() {
            return;
        }
        self.reconciling.set_value(true);
        self.reconcile_now().await;
        self.reconciling.set_value(false);
    }

    async fn reconcile_now(self) {
        if let Err(why) = self.availability() {
            self.state.set(PushState::Unavailable(why));
            return;
        }
        let held = match browser_push::held().await {
            Ok(h) => h,
            Err(e) => return self.state.set(PushState::Unavailable(format!("The browser's push subscription could not be read: {e}"))),
        };
        let key = self.server_key().await;
        let url = self.client.url.get_untracked();
        let owner = browser::local_get(&owner_key());
        match model::push::reconcile(held.as_ref(), owner.as_deref(), &url, key.as_deref().ok()) {
            Reconcile::Nothing => self.state.set(match key {
                Ok(_) => PushState::Off,
                Err(e) => PushState::GatewayCannot(e),
            }),
            Reconcile::OtherGateway => self.state.set(PushState::OtherGateway),
            Reconcile::Register => {
                let Some(sub) = held else { return };
                match self.register(&sub).await {
                    Ok(()) => {
                        browser::local_set(&owner_key(), &url);
                        self.read_categories(&sub.endpoint).await;
                        self.state.set(PushState::On { endpoint: sub.endpoint });
                    }
                    Err(e) => self.state.set(PushState::GatewayCannot(e)),
                }
            }
            Reconcile::Drop => {
                if let Some(sub) = held {
                    let _ = self.client.request(method::PUSH_UNSUBSCRIBE, json!({"endpoint": sub.endpoint})).await;
                }
                let _ = browser_push::unsubscribe().await;
                browser::local_remove(&owner_key());
                self.state.set(PushState::TurnOnAgain);
            }
        }
    }

    async fn register(&self, sub: &BrowserSubscription) -> Result<(), String> {
        let keys = json!({"p256dh": sub.p256dh, "auth": sub.auth});
        self.client
            .request(method::PUSH_SUBSCRIBE, json!({"endpoint": sub.endpoint, "keys": keys}))
            .await
            .map(|_| ())
            .map_err(gateway_error)
    }

    async fn read_categories(&self, endpoint: &str) {
        if let Ok(v) = self.client.request(method::PUSH_PREFERENCES_GET, json!({"endpoint": endpoint})).await {
            if let Ok(c) = serde_json::from_value::<Categories>(effective_categories(&v)) {
                self.categories.set(c);
            }
        }
    }

    async fn save_categories(&self, endpoint: &str) -> Result<(), String> {
        let prefs = DevicePreferences { enabled: true, label: String::new(), categories: Some(self.categories.get_untracked()) };
        let params = json!({"endpoint": endpoint, "scope": "device", "preferences": prefs});
        self.client.request(method::PUSH_PREFERENCES_SET, params).await.map(|_| ()).map_err(gateway_error)
    }

    fn endpoint(&self) -> Option<String> {
        self.state.with_untracked(|s| match s {
            PushState::On { endpoint } => Some(endpoint.clone()),
            _ => None,
        })
    }

    /// Runs one action at a time, its failure in `message` (boxed: one copy of this for all
    /// four actions).
    fn act(&self, work: std::pin::Pin<Box<dyn std::future::Future<Output = Result<Option<String>, String>>>>) {
        if self.busy.get_untracked() {
            return;
        }
        self.busy.set(true);
        self.message.set(None);
        let c = *self;
        spawn_local(async move {
            let result = work.await;
            c.busy.set(false);
            c.message.set(match result {
                Ok(done) => done,
                Err(e) => Some(e),
            });
        });
    }

    /// *Turn on notifications*: the browser's permission (asked now, on this click), a
    /// subscription with the gateway's key, registered there with the chosen categories.
    pub fn turn_on(&self) {
        let c = *self;
        self.act(Box::pin(async move {
            if browser_push::request_permission().await != model::push::Permission::Granted {
                c.availability()?;
                return Err("The browser did not allow notifications for this page.".into());
            }
            c.availability()?;
            let key = c.server_key().await?;
            // A subscription made with another key cannot be subscribed over.
            if browser_push::held().await?.is_some_and(|s| s.server_key != key) {
                browser_push::unsubscribe().await?;
            }
            let sub = browser_push::subscribe(&key).await.map_err(|e| format!("The browser could not subscribe: {e}"))?;
            c.register(&sub).await?;
            browser::local_set(&owner_key(), &c.client.url.get_untracked());
            c.save_categories(&sub.endpoint).await?;
            c.state.set(PushState::On { endpoint: sub.endpoint });
            Ok(None)
        }));
    }

    pub fn turn_off(&self) {
        let c = *self;
        let endpoint = self.endpoint();
        self.act(Box::pin(async move {
            // The browser's subscription first: once it is gone nothing can reach this device,
            // whatever the gateway answers (it may have dropped the row itself on a 410).
            browser_push::unsubscribe().await?;
            browser::local_remove(&owner_key());
            c.state.set(PushState::Off);
            match endpoint {
                Some(endpoint) => match c.client.request(method::PUSH_UNSUBSCRIBE, json!({"endpoint": endpoint})).await {
                    Ok(_) => Ok(None),
                    Err(e) => Ok(Some(format!("Turned off in this browser; the gateway could not drop its copy: {}", gateway_error(e)))),
                },
                None => Ok(None),
            }
        }));
    }

    pub fn set_categories(&self, change: impl FnOnce(&mut Categories) + 'static) {
        let Some(endpoint) = self.endpoint() else { return };
        let before = self.categories.get_untracked();
        self.categories.update(change);
        let c = *self;
        self.act(Box::pin(async move {
            c.save_categories(&endpoint).await.inspect_err(|_| c.categories.set(before))?;
            Ok(None)
        }));
    }

    /// `push.web.test`: a notification through the push service, to check it arrives.
    pub fn send_test(&self) {
        let c = *self;
        self.act(Box::pin(async move {
            let v = c.client.request(method::PUSH_TEST, json!({})).await.map_err(gateway_error)?;
            let failed = v["results"].as_array().map_or(0, |r| r.iter().filter(|r| r["ok"] != Value::Bool(true)).count());
            Ok(Some(if failed == 0 {
                "Test notification sent.".into()
            } else {
                format!("The gateway could not deliver {failed} of its test notifications.")
            }))
        }));
    }
}

/// The reconcile of a held subscription, its code in the `reach` module with the setting's
/// (`components::on_use`); a module that cannot be fetched is an error.
#[cfg(feature = "split")]
#[leptos::wasm_split::wasm_split(reach, wasm_split_path = ::leptos::wasm_split, fallible)]
fn reconciler(push: PushController) -> Result<Reconciling, leptos::wasm_split::SplitLoaderError> {
    Ok(Box::pin(push.reconcile()))
}

#[cfg(not(feature = "split"))]
async fn reconciler(push: PushController) -> Result<Reconciling, leptos::wasm_split::SplitLoaderError> {
    Ok(Box::pin(push.reconcile()))
}

type Reconciling = std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>;

/// `push.web.preferences.get`'s `effective.categories`, the real gateway's full set.
fn effective_categories(v: &Value) -> Value {
    v["effective"]["categories"].clone()
}
