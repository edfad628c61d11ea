//! UI components, one folder each with its styles beside it.

pub mod approval_card;
pub mod attachment_list;
pub mod attention_control;
pub mod away_card;
pub mod command_palette;
pub mod composer;
pub mod connect_form;
pub mod conversation_header;
pub mod conversation_list;
pub mod credential_notice;
pub mod gateway_switch;
pub mod markdown;
pub mod message_actions;
pub mod on_use;
pub mod option_group;
pub mod outbox_tray;
pub mod pane;
pub mod push_settings;
pub mod question_dock;
pub mod question_receipt;
pub mod run_bar;
pub mod run_settings;
pub mod secret_request;
pub mod status_bar;
pub mod tasks_panel;
pub mod transcript;
