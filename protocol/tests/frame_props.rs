//! No byte string or JSON value fed to the frame parsers panics.

use proptest::prelude::*;
use protocol::frame::Frame;
use serde_json::Value;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::from(n)),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![Just("req"), Just("res"), Just("event"), Just("connect"), Just("id"), Just("method")]
            .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("type".to_string()),
                    Just("id".to_string()),
                    Just("method".to_string()),
                    Just("params".to_string()),
                    Just("ok".to_string()),
                    Just("payload".to_string()),
                    Just("error".to_string()),
                    Just("event".to_string()),
                    Just("seq".to_string()),
                    ".{0,6}"
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = Frame::parse(&text);
        let _ = Frame::parse_closed(&text);
    }

    #[test]
    fn arbitrary_json_never_panics_and_accepted_frames_round_trip(v in json_value()) {
        let text = v.to_string();
        if let Ok(f) = Frame::parse_closed(&text) {
            let again = Frame::parse_closed(&f.to_json()).expect("our own output parses");
            prop_assert_eq!(again, f);
        }
        let _ = Frame::parse(&text);
    }

    #[test]
    fn arbitrary_params_never_panic_the_typed_parsers(v in json_value()) {
        let _ = protocol::closed::from_value_closed::<protocol::connect::ConnectParams>(v.clone()).map(|p| p.check());
        if let Ok(p) = protocol::closed::from_value_closed::<protocol::question::QuestionRequestParams>(v.clone()) {
            let _ = protocol::question::validate_questions(&p.questions);
        }
        let _ = protocol::closed::from_value_closed::<protocol::question::QuestionResolveParams>(v);
    }
}
