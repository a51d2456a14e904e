//! kwire::rules_check (ABI 1.5): a request frame that follows the rules is allowed; one
//! that breaks a rule names it and carries the response frame to send, which decodes
//! with the error on the topic; a misspelt field is a Json error naming its path.

use serde_json::json;

const RULES: &str = r#"[{"api":"CreateTopics","field":"topics[].replicationFactor","min":3}]"#;

fn create_topics(rf: i16) -> Vec<u8> {
    kwire::encode_request(
        &json!({"requestApiKey": 19, "requestApiVersion": 7, "correlationId": 5, "clientId": "app"}),
        &json!({"topics": [{"name": "orders", "numPartitions": 3, "replicationFactor": rf, "assignments": [], "configs": []}],
                "timeoutMs": 1000, "validateOnly": false}),
    )
    .unwrap()
}

#[test]
fn a_frame_that_follows_the_rules_is_allowed() {
    let v = kwire::rules_check(RULES, &create_topics(3), 44).unwrap();
    assert!(v.allowed, "{:?}", v);
    assert_eq!(v.response, None);
}

#[test]
fn a_refused_frame_gets_the_brokers_answer() {
    let v = kwire::rules_check(RULES, &create_topics(1), 44).unwrap();
    assert!(!v.allowed);
    assert_eq!(
        (v.rule, v.path.as_str(), v.value.as_str(), v.place.as_str()),
        (0, "topics[0].replicationFactor", "1", "perEntity")
    );
    let resp = kwire::decode_response_frame(v.response.as_deref().unwrap(), 19, 7).unwrap();
    assert_eq!(resp.header["correlationId"], 5);
    let topic = &resp.body["topics"][0];
    assert_eq!(topic["name"], "orders");
    assert_eq!(topic["errorCode"], 44);
    assert_eq!(topic["errorMessage"], v.message.as_str());
}

#[test]
fn a_misspelt_field_names_its_path() {
    let bad = r#"[{"api":"CreateTopics","field":"topics[].replicationFactr","min":3}]"#;
    let err = kwire::rules_check(bad, &create_topics(1), 44).unwrap_err();
    assert_eq!(err.kind(), kwire::ErrorKind::Json, "{}", err);
    assert!(err.to_string().contains("did you mean"), "{}", err);
}
