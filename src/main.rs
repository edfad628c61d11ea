fn main() {
    // No panic hook: the release build aborts on panic without formatting a message
    // (`-Cpanic=immediate-abort`, see the Makefile). A trap shows a banner instead.
    control_ui::crash::install();
    leptos::mount::mount_to_body(control_ui::App);
}
