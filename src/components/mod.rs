//! UI components, one folder each with its styles beside it.

pub mod connect_form;
pub mod status_bar;
