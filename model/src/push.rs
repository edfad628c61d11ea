//! Web Push on this device (`push.web.*`): whether the browser can receive it, what to do with
//! a subscription found on connect, and what a notification's action chose.
//!
//! The gateway keeps one subscription per browser endpoint, bound to the device that made it
//! (`docs/conversation-tools-protocol-notes.md`). The browser keeps one per service worker:
//! it belongs to the gateway that made it (its VAPID key), and is never handed to another.

use protocol::question::QuestionRecord;

/// What a notification's action chose, carried to the page as `?choice=` by the service
/// worker (`public/sw.js`): the card opens with it chosen, and one click there sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationChoice {
    /// `?choice=deny` on `/approve/<id>`.
    Deny,
    /// `?choice=option-<n>` on `/ask/<id>`: the n-th option (from 0).
    Option(usize),
}

/// Reads `?choice=` from `location.search`.
pub fn parse_choice(search: &str) -> Option<NotificationChoice> {
    let (_, v) = crate::url::query_pairs(search).find(|(k, _)| k == "choice")?;
    match v.as_str() {
        "deny" => Some(NotificationChoice::Deny),
        other => other.strip_prefix("option-")?.parse().ok().filter(|n| *n < protocol::push::MAX_ACTIONS).map(NotificationChoice::Option),
    }
}

/// `search` without its `choice` (so a reload does not choose again), `?` included when
/// anything is left.
pub fn without_choice(search: &str) -> String {
    let body = search.strip_prefix('?').unwrap_or(search);
    let kept: Vec<&str> = body.split('&').filter(|p| !p.is_empty() && p.split('=').next() != Some("choice")).collect();
    if kept.is_empty() { String::new() } else { format!("?{}", kept.join("&")) }
}

/// The option label a notification's `Option(n)` picks on `record`: only where the gateway
/// could have offered it (`protocol::push::choices`), so a link cannot pick on a question
/// whose options a notification never shows (three options, several questions, a secret).
pub fn chosen_label(record: &QuestionRecord, n: usize) -> Option<String> {
    protocol::push::choices(&record.questions)?.into_iter().nth(n)
}

/// What the card says of a choice made in a notification.
pub fn choice_note(choice: NotificationChoice, label: Option<&str>) -> String {
    match (choice, label) {
        (NotificationChoice::Deny, _) => "You chose “Deny” in a notification. Review the request, then press Deny to send it.".into(),
        (NotificationChoice::Option(_), Some(l)) => format!("You chose “{l}” in a notification. Check it, then press Submit to send it."),
        (NotificationChoice::Option(_), None) => {
            "The choice made in the notification does not fit this question any more: choose here.".into()
        }
    }
}

/// The browser's notification permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Granted,
    Denied,
    Default,
}

/// What the page knows of its browser, for [`availability`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Environment {
    /// `isSecureContext`: HTTPS, or loopback.
    pub secure_context: bool,
    /// A service worker and `PushManager` exist.
    pub has_push: bool,
    pub permission: Permission,
    /// An iPhone or iPad, where Web Push works only from the installed app.
    pub ios: bool,
    /// Running as the installed app (`display-mode: standalone`).
    pub standalone: bool,
}

/// Whether this browser can be told of requests with no tab open, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    Ready,
    /// Not HTTPS (nor loopback): browsers refuse push to such a page.
    Insecure,
    /// The person blocked notifications for this site.
    Denied,
    /// iOS outside the installed app.
    IosNotInstalled,
    Unsupported,
}

pub fn availability(env: Environment) -> Availability {
    if !env.secure_context {
        Availability::Insecure
    } else if env.ios && !env.standalone {
        Availability::IosNotInstalled
    } else if !env.has_push {
        Availability::Unsupported
    } else if env.permission == Permission::Denied {
        Availability::Denied
    } else {
        Availability::Ready
    }
}

/// Why notifications cannot be turned on, in the person's words; `None` when they can.
pub fn unavailable_reason(a: Availability) -> Option<&'static str> {
    match a {
        Availability::Ready => None,
        Availability::Insecure => Some(
            "This page is not served over HTTPS, so the browser cannot receive notifications for it. Open the Control UI over HTTPS (or on this machine's loopback address).",
        ),
        Availability::Denied => {
            Some("Notifications are blocked in this browser's site settings. Allow them there, then turn them on here.")
        }
        Availability::IosNotInstalled => Some(
            "On iPhone and iPad, notifications work only from the installed app: Share, then Add to Home Screen, and open it from there.",
        ),
        Availability::Unsupported => Some("This browser cannot receive push notifications."),
    }
}

/// A subscription the browser holds (`PushSubscription`), as the page reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserSubscription {
    pub endpoint: String,
    /// The VAPID key it was made with (`options.applicationServerKey`), base64url.
    pub server_key: String,
    pub p256dh: String,
    pub auth: String,
}

/// What to do on connect with the browser's subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconcile {
    /// Nothing held, or nothing to check it against.
    Nothing,
    /// The subscription is another gateway's: left alone, never sent here.
    OtherGateway,
    /// Still this gateway's key: registered again (`push.web.subscribe` of the same endpoint
    /// updates its row), so a gateway that lost it has it back.
    Register,
    /// This gateway's key changed (or the subscription holds none): the old one can no longer
    /// be delivered to. Unsubscribed in the browser and at the gateway; the person is asked to
    /// turn notifications on again.
    Drop,
}

/// `owner` is the gateway the page made the subscription for; `gateway_key` is this gateway's
/// `push.web.vapidPublicKey` (`None`: it has no Web Push).
pub fn reconcile(held: Option<&BrowserSubscription>, owner: Option<&str>, this_gateway: &str, gateway_key: Option<&str>) -> Reconcile {
    let Some(sub) = held else { return Reconcile::Nothing };
    if owner.is_some_and(|o| o != this_gateway) {
        return Reconcile::OtherGateway;
    }
    let Some(key) = gateway_key else { return Reconcile::Nothing };
    if owner.is_none() {
        // Made by another page of this origin (the bundled UI, say): not ours to drop.
        return if sub.server_key == key { Reconcile::Register } else { Reconcile::OtherGateway };
    }
    if sub.server_key == key { Reconcile::Register } else { Reconcile::Drop }
}

/// The request a notification opens, from its target (`<scope>ask/<id>` or
/// `<scope>approve/<id>`, with or without a `?choice=`): the id, or `None` for anything else (a
/// conversation, a test, another scope).
pub fn notification_request<'a>(target: &'a str, scope: &str) -> Option<&'a str> {
    let path = target.strip_prefix(scope)?.split(['?', '#']).next()?;
    let id = path.strip_prefix("ask/").or_else(|| path.strip_prefix("approve/"))?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(key: &str) -> BrowserSubscription {
        BrowserSubscription { endpoint: "https://push.example/1".into(), server_key: key.into(), p256dh: "p".into(), auth: "a".into() }
    }

    #[test]
    fn a_notifications_choice_is_read_from_the_address_and_only_deny_or_one_of_two_options() {
        assert_eq!(parse_choice("?choice=deny"), Some(NotificationChoice::Deny));
        assert_eq!(parse_choice("?session=a&choice=option-1"), Some(NotificationChoice::Option(1)));
        assert_eq!(parse_choice("?choice=option-2"), None, "a notification offers at most two");
        assert_eq!(parse_choice("?choice=allow"), None, "Allow never comes from a notification");
        assert_eq!(parse_choice("?choice=option-x"), None);
        assert_eq!(parse_choice(""), None);
        assert_eq!(without_choice("?choice=deny"), "");
        assert_eq!(without_choice("?session=a&choice=option-0&pane=b"), "?session=a&pane=b");
    }

    #[test]
    fn a_choice_picks_only_an_option_a_notification_could_have_offered() {
        let record: QuestionRecord = serde_json::from_value(serde_json::json!({
            "id": "r", "createdAtMs": 1, "expiresAtMs": 2, "status": "pending", "questions": [{"questionId": "q", "question": "Ship?", "options": [{"label": "Yes"}, {"label": "No"}]}]
        }))
        .unwrap();
        assert_eq!(chosen_label(&record, 1).as_deref(), Some("No"));
        assert_eq!(chosen_label(&record, 2), None);
        let three: QuestionRecord = serde_json::from_value(serde_json::json!({
            "id": "r", "createdAtMs": 1, "expiresAtMs": 2, "status": "pending", "questions": [{"questionId": "q", "question": "Which?", "options": [{"label": "A"}, {"label": "B"}, {"label": "C"}]}]
        }))
        .unwrap();
        assert_eq!(chosen_label(&three, 0), None);
    }

    #[test]
    fn availability_says_why_in_the_order_a_person_can_act_on() {
        let ok = Environment { secure_context: true, has_push: true, permission: Permission::Default, ios: false, standalone: false };
        assert_eq!(availability(ok), Availability::Ready);
        assert_eq!(availability(Environment { secure_context: false, ..ok }), Availability::Insecure);
        assert_eq!(availability(Environment { ios: true, has_push: false, ..ok }), Availability::IosNotInstalled);
        assert_eq!(availability(Environment { ios: true, standalone: true, ..ok }), Availability::Ready);
        assert_eq!(availability(Environment { permission: Permission::Denied, ..ok }), Availability::Denied);
        assert_eq!(availability(Environment { has_push: false, ..ok }), Availability::Unsupported);
        assert!(unavailable_reason(Availability::Ready).is_none());
    }

    #[test]
    fn on_connect_a_subscription_is_registered_again_dropped_for_a_new_key_and_never_given_to_another_gateway() {
        let gw = "ws://127.0.0.1:1";
        assert_eq!(reconcile(None, Some(gw), gw, Some("K")), Reconcile::Nothing);
        assert_eq!(reconcile(Some(&sub("K")), Some(gw), gw, Some("K")), Reconcile::Register);
        assert_eq!(reconcile(Some(&sub("OLD")), Some(gw), gw, Some("K")), Reconcile::Drop);
        assert_eq!(reconcile(Some(&sub("K")), Some("ws://other:2"), gw, Some("K")), Reconcile::OtherGateway);
        assert_eq!(reconcile(Some(&sub("K")), Some(gw), gw, None), Reconcile::Nothing, "a gateway without Web Push changes nothing");
        assert_eq!(
            reconcile(Some(&sub("X")), None, gw, Some("K")),
            Reconcile::OtherGateway,
            "another page's subscription is not ours to drop"
        );
    }

    #[test]
    fn a_notifications_request_is_read_from_its_target_in_the_scope_only() {
        let scope = "https://gw.example/ui/";
        assert_eq!(notification_request("https://gw.example/ui/ask/q-1", scope), Some("q-1"));
        assert_eq!(notification_request("https://gw.example/ui/approve/exec:7?choice=deny", scope), Some("exec:7"));
        assert_eq!(notification_request("https://gw.example/ui/chat/agent%3Amain%3Amain", scope), None);
        assert_eq!(notification_request("https://gw.example/ui/", scope), None);
        assert_eq!(notification_request("https://gw.example/ui/ask/", scope), None);
        assert_eq!(notification_request("https://gw.example/ui/ask/q-1/more", scope), None);
        assert_eq!(notification_request("https://other.example/ui/ask/q-1", scope), None, "another scope's");
    }
}

/// Where Web Push stands on this device, for the setting that turns it on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PushState {
    /// Not checked yet (not connected since the page opened).
    #[default]
    Unknown,
    /// The browser cannot (why, in words: [`unavailable_reason`], or what failed).
    Unavailable(String),
    /// The gateway has no Web Push (`push.web.*`), or refused it (why, in words).
    GatewayCannot(String),
    /// This browser's subscription belongs to another gateway: left alone here.
    OtherGateway,
    Off,
    /// The gateway's key changed: the old subscription was dropped; turn on again.
    TurnOnAgain,
    On {
        endpoint: String,
    },
}
