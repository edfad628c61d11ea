fn main() {
    // Panics are logged with their message and location, then show the reload banner.
    control_ui::io::crash::install();
    control_ui::run();
}
