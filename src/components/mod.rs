//! UI components, one folder each with its styles beside it.

pub mod composer;
pub mod connect_form;
pub mod option_group;
pub mod question_dock;
pub mod question_receipt;
pub mod status_bar;
