fn main() {
    // No panic hook: the release build aborts on panic without formatting a message
    // (`-Cpanic=immediate-abort`, see the Makefile), so a hook would never run.
    leptos::mount::mount_to_body(control_ui::App);
}
