//! Consent: a decision (an approval's Allow or Deny, the gateway switch) takes a press meant
//! for it, on what was fully shown.
//!
//! - Decision buttons are inert for [`INERT_MS`] each time they are drawn, replaced or
//!   expanded, and after the window gains focus: a press whose `pointerdown` came before that
//!   (a double-click's second half, a click on its way when the card appeared under the
//!   pointer, a page that uncovered ours mid-double-click) is ignored, and the person is told.
//! - A press that needs a second one ([`Needs::Second`]: **Always allow**, or any Allow from
//!   the keyboard) arms the button; the confirming press must itself come after the inert time
//!   since arming, and from the keyboard after the key was released (no auto-repeat).
//! - A held key's auto-repeat never decides.
//!
//! Times are milliseconds on one monotonic clock (`performance.now()` in the page).

/// How long decision controls stay inert after they are drawn, replaced, expanded or armed, and
/// after the window gains focus.
pub const INERT_MS: f64 = 700.0;

/// How a press arrived.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Press {
    /// A pointer click; `down_at` is when its `pointerdown` landed on this very control (`None`:
    /// it landed elsewhere, e.g. on what was drawn here before).
    Pointer { down_at: Option<f64> },
    /// Enter or Space on the focused control; `repeat` is the key's auto-repeat.
    Key { repeat: bool },
}

/// Whether a decision takes one press or two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// One press meant for it (Deny; Allow once by pointer).
    One,
    /// A second, deliberate press (Always allow, whatever the input).
    Second,
    /// A second press from the keyboard, one from a pointer (Allow once).
    SecondFromKeyboard,
}

/// What a press does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict<D> {
    /// Decide `D` now.
    Decide(D),
    /// `D` is armed: ask the person to press again.
    Confirm(D),
    /// The press came before the control could be meant: nothing happens, say why.
    TooEarly,
    /// Auto-repeat, or the confirming key was not released first: nothing happens, silently.
    Ignored,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Armed<D> {
    decision: D,
    at: f64,
    released: bool,
}

/// One set of decision controls as drawn (an approval card, the gateway switch).
#[derive(Debug, Clone, PartialEq)]
pub struct Consent<D> {
    shown_at: f64,
    /// When the window last gained focus; `f64::INFINITY` while it has none.
    focused_at: f64,
    armed: Option<Armed<D>>,
}

impl<D: Copy + PartialEq> Consent<D> {
    /// Controls drawn at `now`; `focused_at` as [`Consent::focus_gained`] takes it (`None`: the
    /// window has no focus now).
    pub fn new(now: f64, focused_at: Option<f64>) -> Self {
        Consent { shown_at: now, focused_at: focused_at.unwrap_or(f64::INFINITY), armed: None }
    }

    /// Drawn again (replaced, expanded): inert again, nothing armed.
    pub fn shown(&mut self, now: f64) {
        self.shown_at = now;
        self.armed = None;
    }

    pub fn focus_gained(&mut self, now: f64) {
        self.focused_at = now;
    }

    pub fn focus_lost(&mut self) {
        self.focused_at = f64::INFINITY;
        self.armed = None;
    }

    /// The key that armed a decision went up.
    pub fn key_released(&mut self) {
        if let Some(a) = &mut self.armed {
            a.released = true;
        }
    }

    /// When the controls may be meant: the later of drawing, arming and focus, plus the inert time.
    pub fn live_at(&self) -> f64 {
        let armed = self.armed.map_or(f64::NEG_INFINITY, |a| a.at);
        self.shown_at.max(self.focused_at).max(armed) + INERT_MS
    }

    /// Whether the controls are inert at `now` (drawn as such).
    pub fn inert(&self, now: f64) -> bool {
        now < self.live_at()
    }

    /// What is armed, to tell the person to press again.
    pub fn armed(&self) -> Option<D> {
        self.armed.map(|a| a.decision)
    }

    /// A press on the control for `decision`, arriving at `now`.
    pub fn press(&mut self, decision: D, needs: Needs, press: Press, now: f64) -> Verdict<D> {
        let (began, keyboard) = match press {
            Press::Key { repeat: true } => return Verdict::Ignored,
            Press::Key { repeat: false } => (now, true),
            // A click whose pointerdown this control never saw began before it was drawn.
            Press::Pointer { down_at: None } => return Verdict::TooEarly,
            Press::Pointer { down_at: Some(t) } => (t, false),
        };
        // A pointerdown before the window had focus is what uncovered or focused it.
        if began < self.focused_at {
            return Verdict::TooEarly;
        }
        let armed_here = self.armed.filter(|a| a.decision == decision);
        if keyboard && armed_here.is_some_and(|a| !a.released) {
            return Verdict::Ignored;
        }
        if began < self.live_at() {
            return Verdict::TooEarly;
        }
        let second = match needs {
            Needs::One => false,
            Needs::Second => true,
            Needs::SecondFromKeyboard => keyboard,
        };
        if second && armed_here.is_none() {
            self.armed = Some(Armed { decision, at: now, released: !keyboard });
            return Verdict::Confirm(decision);
        }
        self.armed = None;
        Verdict::Decide(decision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum D {
        Allow,
        Always,
        Deny,
    }

    fn click(at: f64) -> Press {
        Press::Pointer { down_at: Some(at) }
    }

    #[test]
    fn a_click_that_began_before_the_controls_were_live_is_too_early() {
        let mut c = Consent::new(1000.0, Some(0.0));
        assert!(c.inert(1500.0));
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, click(1200.0), 1250.0), Verdict::TooEarly);
        // Its pointerdown landed on what was drawn before.
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, Press::Pointer { down_at: None }, 2000.0), Verdict::TooEarly);
        assert!(!c.inert(1700.0));
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, click(1750.0), 1800.0), Verdict::Decide(D::Allow));
    }

    #[test]
    fn drawing_again_makes_the_controls_inert_again() {
        let mut c = Consent::new(0.0, Some(0.0));
        c.shown(5000.0);
        assert_eq!(c.press(D::Deny, Needs::One, click(5100.0), 5150.0), Verdict::TooEarly);
        assert_eq!(c.press(D::Deny, Needs::One, click(5700.0), 5750.0), Verdict::Decide(D::Deny));
    }

    #[test]
    fn a_pointerdown_before_the_window_gained_focus_never_decides() {
        let mut c = Consent::new(0.0, None);
        // The window has no focus: the press is what gives it focus.
        assert_eq!(c.press(D::Deny, Needs::One, click(3000.0), 3000.0), Verdict::TooEarly);
        c.focus_gained(3001.0);
        // The second half of a double-click that uncovered the page.
        assert_eq!(c.press(D::Deny, Needs::One, click(3100.0), 3120.0), Verdict::TooEarly);
        assert_eq!(c.press(D::Deny, Needs::One, click(3800.0), 3820.0), Verdict::Decide(D::Deny));
        c.focus_lost();
        assert_eq!(c.press(D::Deny, Needs::One, click(9000.0), 9000.0), Verdict::TooEarly);
    }

    #[test]
    fn always_allow_takes_a_second_press_that_a_double_click_cannot_give() {
        let mut c = Consent::new(0.0, Some(0.0));
        assert_eq!(c.press(D::Always, Needs::Second, click(1000.0), 1010.0), Verdict::Confirm(D::Always));
        assert_eq!(c.armed(), Some(D::Always));
        // A double-click's second click, 120 ms later.
        assert_eq!(c.press(D::Always, Needs::Second, click(1130.0), 1140.0), Verdict::TooEarly);
        assert_eq!(c.press(D::Always, Needs::Second, click(1800.0), 1810.0), Verdict::Decide(D::Always));
        assert_eq!(c.armed(), None);
    }

    #[test]
    fn another_decision_does_not_confirm_the_armed_one() {
        let mut c = Consent::new(0.0, Some(0.0));
        assert_eq!(c.press(D::Always, Needs::Second, click(1000.0), 1000.0), Verdict::Confirm(D::Always));
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, Press::Key { repeat: false }, 2000.0), Verdict::Confirm(D::Allow));
        assert_eq!(c.armed(), Some(D::Allow));
    }

    #[test]
    fn a_keyboard_allow_takes_two_presses_with_a_release_between_and_no_auto_repeat() {
        let mut c = Consent::new(0.0, Some(0.0));
        let key = Press::Key { repeat: false };
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, key, 1000.0), Verdict::Confirm(D::Allow));
        // A held Enter: auto-repeat, and no release.
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, Press::Key { repeat: true }, 1800.0), Verdict::Ignored);
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, key, 2500.0), Verdict::Ignored);
        c.key_released();
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, key, 2600.0), Verdict::Decide(D::Allow));
    }

    #[test]
    fn a_quick_release_and_press_again_is_still_too_early() {
        let mut c = Consent::new(0.0, Some(0.0));
        let key = Press::Key { repeat: false };
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, key, 1000.0), Verdict::Confirm(D::Allow));
        c.key_released();
        assert_eq!(c.press(D::Allow, Needs::SecondFromKeyboard, key, 1200.0), Verdict::TooEarly);
    }

    #[test]
    fn deny_from_the_keyboard_takes_one_press() {
        let mut c = Consent::new(0.0, Some(0.0));
        assert_eq!(c.press(D::Deny, Needs::One, Press::Key { repeat: false }, 1000.0), Verdict::Decide(D::Deny));
    }
}
