//! The command palette above the composer: what can follow the `/` being typed
//! (`model::commands`), each line with its arguments and what it does. Keyboard first: the
//! composer's arrows move the active line, Enter or Tab puts it in, Esc closes; a click does too.

use leptos::prelude::*;
use model::commands::Suggestion;

/// The palette's element id in pane `pane` (the composer points at it), and its lines'.
pub fn list_id(pane: usize) -> String {
    format!("command-palette-{pane}")
}

pub fn line_id(pane: usize, i: usize) -> String {
    format!("command-palette-{pane}-{i}")
}

crate::components::on_use::split! { conversation_tools,
    /// The palette, its code fetched the first time `/` opens it (`components::on_use`).
    pub fn palette(pane: usize, lines: Memo<Vec<Suggestion>>, active: Signal<usize>, note: Signal<Option<String>>, on_pick: Callback<String>) -> AnyView {
        view! { <CommandPalette pane=pane lines=lines active=active note=note on_pick=on_pick/> }.into_any()
    }
}

#[component]
pub fn CommandPalette(
    pane: usize,
    lines: Memo<Vec<Suggestion>>,
    /// The active line.
    active: Signal<usize>,
    /// What the gateway's list is doing, while it is not there.
    note: Signal<Option<String>>,
    /// A line was clicked: the composer's text becomes this.
    on_pick: Callback<String>,
) -> impl IntoView {
    // The active line stays in sight as the arrows move it through a long list.
    Effect::new(move |_| {
        let line = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(&line_id(pane, active.get())));
        if let Some(line) = line {
            let options = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&options, &"block".into(), &"nearest".into());
            if let Ok(f) = js_sys::Reflect::get(&line, &"scrollIntoView".into()) {
                let _ = js_sys::Function::from(f).call1(&line, &options);
            }
        }
    });
    // Drawn whole when the lines change (a keystroke); the active line is an attribute.
    let drawn = move || {
        lines
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let insert = s.insert;
                view! {
                    <li
                        id=line_id(pane, i)
                        role="option"
                        aria-selected=move || (active.get() == i).to_string()
                        class="command-palette__line"
                        // Before the textarea loses focus: the click keeps the person typing.
                        on:mousedown=move |ev| ev.prevent_default()
                        on:click=move |_| on_pick.run(insert.clone())
                    >
                        <span class="command-palette__usage">{s.label}</span>
                        <span class="command-palette__detail">{s.detail}</span>
                        <span class="command-palette__from">{s.from}</span>
                    </li>
                }
            })
            .collect_view()
    };
    view! {
        <div class="command-palette" data-testid="command-palette">
            <ul id=list_id(pane) role="listbox" aria-label="Commands">{drawn}</ul>
            <p class="command-palette__note" role="status">{note}</p>
        </div>
    }
}
