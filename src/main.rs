fn main() {
    // Panics are logged with their message and location, then show the reload banner.
    control_ui::io::crash::install();
    leptos::mount::mount_to_body(control_ui::App);
}
