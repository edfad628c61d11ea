//! Adapters over the outside world. Nothing else in the app imports `gloo_net`,
//! `indexed_db_futures` or the browser's storage and URL APIs (a test greps for it).

pub mod browser;
pub mod connect_request;
pub mod crash;
pub mod early_connect;
pub mod early_socket;
pub mod focus;
pub mod gateway_client;
pub mod identity;
pub mod json;
pub mod key_store;
pub mod push;
pub mod service_worker;
pub mod storage;
pub mod tabs;
