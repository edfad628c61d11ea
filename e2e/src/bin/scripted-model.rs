//! The scripted model (`e2e::scripted_model`) as a program, for `make bench`: listens on
//! 127.0.0.1:<port> (the first argument; 0 or none: a free one), prints
//! `SCRIPTED_MODEL_URL=http://127.0.0.1:<port>/v1` and serves until it is killed.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let port = std::env::args().nth(1).map(|p| p.parse::<u16>().unwrap_or_else(|_| panic!("not a port: {p}"))).unwrap_or(0);
    let model = e2e::scripted_model::ScriptedModel::start_on(port).await;
    println!("SCRIPTED_MODEL_URL={}", model.base_url());
    std::future::pending::<()>().await;
}
