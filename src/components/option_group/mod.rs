//! A labelled group of radios (single choice) or checkboxes (several), in the manner of a
//! component library: the group owns the state and talks to its items through a context.

use leptos::prelude::*;

/// What an [`OptionItem`] needs from its [`OptionGroup`].
#[derive(Clone, Copy)]
pub struct OptionGroupContext {
    /// The form name shared by the group's inputs.
    pub name: StoredValue<String>,
    /// Checkboxes when true, radios otherwise.
    pub multi: bool,
    /// The labels currently picked.
    pub selected: Signal<Vec<String>>,
    /// Called with a label when a person picks (or unpicks) it.
    pub on_pick: Callback<String>,
    /// No changes while true (for example while an answer is being sent).
    pub disabled: Signal<bool>,
}

/// A `radiogroup` or `group` labelled by the element with id `labelled_by`.
#[component]
pub fn OptionGroup(
    /// Unique within the page: the inputs' `name`.
    #[prop(into)]
    name: String,
    /// Several choices (checkboxes) instead of one (radios).
    multi: bool,
    /// Id of the element whose text labels the group (the question text).
    #[prop(into)]
    labelled_by: String,
    /// The picked labels.
    #[prop(into)]
    selected: Signal<Vec<String>>,
    /// Called with the label a person picked or toggled.
    #[prop(into)]
    on_pick: Callback<String>,
    /// Disables every option.
    #[prop(into, default = Signal::from(false))]
    disabled: Signal<bool>,
    children: Children,
) -> impl IntoView {
    provide_context(OptionGroupContext { name: StoredValue::new(name), multi, selected, on_pick, disabled });
    view! {
        <div class="option-group" role=if multi { "group" } else { "radiogroup" } aria-labelledby=labelled_by>
            {children()}
        </div>
    }
}

/// One option: an input labelled by its visible text, with an optional description.
#[component]
pub fn OptionItem(
    /// The label, exactly as the agent wrote it (rendered as text).
    #[prop(into)]
    label: String,
    /// A longer explanation under the label.
    #[prop(optional, into)]
    description: Option<String>,
    /// 1-based position, shown as the keyboard shortcut.
    index: usize,
) -> impl IntoView {
    let ctx = expect_context::<OptionGroupContext>();
    let label = StoredValue::new(label);
    let checked = move || ctx.selected.with(|s| s.iter().any(|x| *x == label.get_value()));
    view! {
        <label class="option-item" data-checked=move || checked().to_string()>
            <input
                type=if ctx.multi { "checkbox" } else { "radio" }
                name=ctx.name.get_value()
                data-option-index=index
                prop:checked=checked
                disabled=move || ctx.disabled.get()
                on:click=move |ev| {
                    // A radio that is already checked fires no change; a click still means "this one".
                    ev.stop_propagation();
                    ctx.on_pick.run(label.get_value());
                }
            />
            <span class="option-item__text">
                <span class="option-item__label">{label.get_value()}</span>
                {description.filter(|d| !d.trim().is_empty()).map(|d| view! { <span class="option-item__description">{d}</span> })}
            </span>
            {(index <= 4).then(|| view! { <kbd class="option-item__key" aria-hidden="true">{index}</kbd> })}
        </label>
    }
}
