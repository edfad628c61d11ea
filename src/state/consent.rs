//! The controller of `model::consent`: one set of decision controls as drawn (an approval
//! card, the gateway switch). It feeds the rules with the events' own times (`timeStamp`)
//! and the window's focus, and draws the controls inert until they may be meant.

use leptos::ev::{KeyboardEvent, MouseEvent, PointerEvent};
use leptos::prelude::*;
use model::consent::{Consent, Needs, Press, Verdict};

use crate::io::focus;

/// Why a press did nothing, in words.
pub const TOO_EARLY: &str =
    "Nothing was decided: that click came too soon after this appeared (or after the window got focus). Read it, then click again.";

/// One set of decision controls. Created when they are drawn: drawing them again creates
/// another, inert again.
pub struct ConsentGate<D: Send + Sync + 'static> {
    model: StoredValue<Consent<D>>,
    /// The controls are drawn inert (`aria-disabled`) until they may be meant.
    pub inert: RwSignal<bool>,
    /// The decision waiting for its second press.
    pub armed: RwSignal<Option<D>>,
    /// Why the last press did nothing.
    pub notice: RwSignal<Option<&'static str>>,
    /// Where and when the last `pointerdown` landed.
    down: StoredValue<Option<(D, f64)>>,
}

impl<D: Send + Sync + 'static> Clone for ConsentGate<D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D: Send + Sync + 'static> Copy for ConsentGate<D> {}

impl<D: Copy + PartialEq + Send + Sync + 'static> ConsentGate<D> {
    pub fn new() -> Self {
        let focused = focus::focused_at();
        let gate = ConsentGate {
            model: StoredValue::new(Consent::new(focus::now(), focused.get_untracked())),
            inert: RwSignal::new(true),
            armed: RwSignal::new(None),
            notice: RwSignal::new(None),
            down: StoredValue::new(None),
        };
        Effect::new(move |_| {
            let focus = focused.get();
            gate.model.try_update_value(|m| match focus {
                Some(at) => m.focus_gained(at),
                None => m.focus_lost(),
            });
            gate.armed.try_set(gate.model.try_with_value(Consent::armed).flatten());
            gate.refresh();
        });
        gate.refresh();
        gate
    }

    /// Draws the controls inert until they may be meant, and wakes up then.
    fn refresh(self) {
        // A timer may wake up after the controls were taken down: then there is nothing to do.
        let Some(live_at) = self.model.try_with_value(Consent::live_at) else { return };
        let now = focus::now();
        let inert = now < live_at;
        if self.inert.try_get_untracked().is_some_and(|was| was != inert) {
            self.inert.try_set(inert);
        }
        if inert && live_at.is_finite() {
            let wait = (live_at - now).ceil().max(1.0) as u64;
            set_timeout(move || self.refresh(), std::time::Duration::from_millis(wait));
        }
    }

    /// Drawn again in another form (a command shown whole): inert again, nothing armed.
    pub fn shown(self) {
        self.model.try_update_value(|m| m.shown(focus::now()));
        self.armed.try_set(None);
        self.refresh();
    }

    pub fn pointer_down(self, d: D, ev: &PointerEvent) {
        self.down.set_value(Some((d, ev.time_stamp())));
    }

    /// A held key's auto-repeat never presses a decision.
    pub fn key_down(self, ev: &KeyboardEvent) {
        if ev.repeat() && matches!(ev.key().as_str(), "Enter" | " ") {
            ev.prevent_default();
        }
    }

    pub fn key_up(self) {
        self.model.try_update_value(Consent::key_released);
    }

    /// A click on the control for `d`: `Some(d)` when it decides.
    pub fn click(self, d: D, needs: Needs, ev: &MouseEvent) -> Option<D> {
        let down = self.down.try_update_value(Option::take).flatten();
        // Enter or Space on a focused button makes a click with no pointer (detail 0).
        let press = if ev.detail() == 0 {
            Press::Key { repeat: false }
        } else {
            Press::Pointer { down_at: down.filter(|(at, _)| *at == d).map(|(_, t)| t) }
        };
        let verdict = self.model.try_update_value(|m| m.press(d, needs, press, ev.time_stamp())).unwrap_or(Verdict::Ignored);
        let decided = match verdict {
            Verdict::Decide(d) => {
                self.notice.set(None);
                Some(d)
            }
            Verdict::Confirm(_) => {
                self.notice.set(None);
                None
            }
            Verdict::TooEarly => {
                self.notice.set(Some(TOO_EARLY));
                None
            }
            Verdict::Ignored => None,
        };
        self.armed.try_set(self.model.try_with_value(Consent::armed).flatten());
        self.refresh();
        decided
    }
}
