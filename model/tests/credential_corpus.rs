//! The credential guard measured on its corpus (`model/tests/credential_corpus/`): every
//! positive (real shapes, fake values) must be held, and at most 1% of the ordinary answers
//! may be. The README reports these figures; this test fails when either slips.

use model::credential::{CredentialKind, detect};
use serde_json::Value;

fn load(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/credential_corpus").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn kind_name(k: CredentialKind) -> String {
    format!("{k:?}")
}

#[test]
fn every_credential_in_the_corpus_is_held_and_at_most_one_percent_of_ordinary_answers_are() {
    let positives = load("positives.json");
    let positives = positives.as_array().unwrap();
    let negatives = load("negatives.json");
    let negatives = negatives.as_array().unwrap();
    assert!(positives.len() >= 40, "at least 40 positives: {}", positives.len());
    assert!(negatives.len() >= 200, "at least 200 ordinary answers: {}", negatives.len());

    let mut missed = Vec::new();
    let mut wrong_kind = Vec::new();
    for p in positives {
        let text = p["text"].as_str().unwrap();
        match detect(text) {
            None => missed.push(text.to_string()),
            Some(m) if kind_name(m.kind) != p["kind"].as_str().unwrap() => {
                wrong_kind.push(format!("{} as {:?}: {text}", p["kind"], m.kind))
            }
            Some(m) => assert!(!text.contains(&m.preview) || m.preview.contains('…'), "the preview masks the value: {}", m.preview),
        }
    }
    let held: Vec<(String, CredentialKind)> = negatives
        .iter()
        .filter_map(|n| {
            let t = n.as_str().unwrap();
            detect(t).map(|m| (t.to_string(), m.kind))
        })
        .collect();
    let recall = 100.0 * (positives.len() - missed.len()) as f64 / positives.len() as f64;
    let false_positive_rate = 100.0 * held.len() as f64 / negatives.len() as f64;
    println!(
        "credential guard: recall {recall:.1}% ({} of {}), false positives {false_positive_rate:.2}% ({} of {})",
        positives.len() - missed.len(),
        positives.len(),
        held.len(),
        negatives.len()
    );
    assert!(missed.is_empty(), "recall {recall:.1}%: missed {missed:#?}");
    assert!(wrong_kind.is_empty(), "recognised as the wrong kind: {wrong_kind:#?}");
    assert!(false_positive_rate <= 1.0, "false positives {false_positive_rate:.2}%: {held:#?}");
}
