//! A choice made in a notification (`public/sw.js` opens `/approve/<id>?choice=deny` or
//! `/ask/<id>?choice=option-<n>`): the card opens with it chosen, says so, and one click there
//! sends it. Nothing is sent from here. Applied once, when the request is shown and its saved
//! draft has loaded; the address loses its `?choice=` at once, so a reload chooses nothing.

use leptos::prelude::*;
use model::dock::Entry;
use model::push::NotificationChoice;

use super::DockController;
use crate::io::browser;

#[derive(Clone, Copy)]
pub struct ChoiceFromNotification {
    /// The choice still to apply, with the request it is for.
    pending: StoredValue<Option<(String, NotificationChoice)>>,
    /// The request it was applied to and what its card says of it.
    pub note: RwSignal<Option<(String, String)>>,
}

impl ChoiceFromNotification {
    pub fn from_address() -> Self {
        let search = browser::location().and_then(|l| l.search().ok()).unwrap_or_default();
        let choice = model::push::parse_choice(&search);
        let link = super::deep_link_from_path();
        if choice.is_some() {
            if let Some(loc) = browser::location() {
                let rest = model::push::without_choice(&search);
                browser::replace_url(&format!("{}{rest}{}", loc.pathname().unwrap_or_default(), loc.hash().unwrap_or_default()));
            }
        }
        let pending = link.zip(choice).map(|(l, c)| (l.id, c));
        ChoiceFromNotification { pending: StoredValue::new(pending), note: RwSignal::new(None) }
    }

    /// What the card of `id` says of a notification's choice, if it came with one.
    pub fn note_for(&self, id: &str) -> Option<String> {
        self.note.with(|n| n.as_ref().filter(|(for_id, _)| for_id == id).map(|(_, note)| note.clone()))
    }
}

impl DockController {
    pub(super) fn apply_choice_when_shown(&self) {
        let c = *self;
        Effect::new(move |_| {
            let Some((id, choice)) = c.choice.pending.get_value() else { return };
            if !c.drafts_loaded.get() {
                return;
            }
            let entry = c.dock.with(|d| d.entry(&id).cloned());
            let Some(entry) = entry else { return };
            c.choice.pending.set_value(None);
            let label = match (&entry, choice) {
                (Entry::Valid { record, .. }, NotificationChoice::Option(n)) => {
                    let label = model::push::chosen_label(record, n);
                    if let (Some(label), Some(q)) = (&label, record.questions.first()) {
                        c.draft(&id).update(|d| d.pick(q, label));
                    }
                    label
                }
                _ => None,
            };
            let fits = matches!(
                (&entry, choice),
                (Entry::Approval { .. }, NotificationChoice::Deny) | (Entry::Valid { .. }, NotificationChoice::Option(_))
            );
            let note = if fits {
                model::push::choice_note(choice, label.as_deref())
            } else {
                model::push::choice_note(NotificationChoice::Option(0), None)
            };
            c.choice.note.set(Some((id, note)));
        });
    }
}
