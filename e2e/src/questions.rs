//! The questions the e2e tests ask, and how they ask and answer them.

use serde_json::{Value, json};

use crate::browser::Browser;

/// `question.request` params of one question: "Pick a color?" with Red, Blue and free text.
pub fn one_question(timeout_ms: u64) -> Value {
    json!({"questions":[{"questionId":"color","header":"Color","question":"Pick a color?","options":[{"label":"Red"},{"label":"Blue"}],"isOther":true}],"timeoutMs": timeout_ms})
}

/// `question.request` params of two steps: a deploy target, then channels to notify
/// (`multiSelect`), each with free text. The real `ask_user` call of `real::RealGateway`
/// asks the same two.
pub fn two_questions(timeout_ms: u64) -> Value {
    json!({"questions":[
        {"questionId":"deploy_target","header":"Deploy","question":"Where should this change be deployed?","options":[{"label":"Staging (Recommended)","description":"Safe default"},{"label":"Production"}],"isOther":true},
        {"questionId":"notify","header":"Notify","question":"Which channels should be notified?","multiSelect":true,"options":[{"label":"Email"},{"label":"Slack"},{"label":"Pager","description":"Only for incidents"}],"isOther":true}
    ],"timeoutMs": timeout_ms})
}

/// Asks `params` as the agent; returns the question's id.
pub async fn ask(agent: &mut gateway::client::Client, params: Value) -> String {
    agent.request("question.request", params).await.unwrap()["id"].as_str().unwrap().to_string()
}

/// The free-text field of the question shown in the dock.
pub async fn other_input(b: &Browser) -> fantoccini::elements::Element {
    b.find_xpath("//div[@data-testid='question-panel']//label[contains(@class,'dock__other')]//input", crate::T).await
}
