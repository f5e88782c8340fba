//! `operation.cancel` against a gateway that accepts, refuses, misbehaves or is absent.

use serde_json::{Value, json};

use crate::common::{Fixture, assert_refused};
use crate::operation_peer::{Peer, Reply};
use crate::operation_status::ID;

fn cancel_via(fx: &Fixture, reply: Reply) -> (Value, Vec<crate::operation_peer::Request>) {
    let peer = Peer::start(vec![reply]);
    let result = fx
        .server(&[], &peer.env())
        .call("operation.cancel", json!({ "previewId": ID }));
    (result, peer.requests())
}

#[test]
fn operation_cancel_posts_the_sanitized_agent_id_and_passes_the_answer_on() {
    let fx = Fixture::new();
    let answer = json!({"previewId": ID, "status": "cancelled"});
    let (result, requests) = cancel_via(&fx, Reply::Json(200, answer.clone()));
    assert_eq!(
        result,
        json!({"tool": "operation.cancel", "readOnly": false, "source": "fluxgit-gateway",
               "previewId": ID, "status": "cancelled", "data": answer})
    );
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, format!("/v1/mcp/operation/cancel/{ID}"));
    // The test client declares itself `gitward-tests`.
    assert_eq!(request.body, json!({"agentId": "gitward-tests"}));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("origin"), None);
    let lean = cancel_via(&fx, Reply::Json(200, json!({"status": "cancelled"}))).0;
    assert_eq!(lean["status"], "cancelled", "{lean}");
}

#[test]
fn operation_cancel_refusals_are_10006_with_advice_and_unknown_ids_10005() {
    let fx = Fixture::new();
    for (status, gateway_code) in [(403, "notOwner"), (409, "conflict")] {
        let body = json!({"error": {"code": gateway_code, "message": "no", "details": {}}});
        let (result, _) = cancel_via(&fx, Reply::Json(status, body.clone()));
        let error = &result["error"];
        assert_eq!(error["code"], 10006, "{result}");
        assert_eq!(error["data"]["httpStatus"], status);
        assert_eq!(error["data"]["gateway"], body);
        assert!(error["data"]["agentRecommendation"].is_string(), "{result}");
    }
    let missing = json!({"error": {"code": "notFound", "message": "no such proposal"}});
    let (result, _) = cancel_via(&fx, Reply::Json(404, missing));
    assert_eq!(result["error"]["code"], 10005, "{result}");
    assert_eq!(result["error"]["data"]["previewId"], ID);
    let (result, _) = cancel_via(&fx, Reply::Json(500, json!({})));
    assert_eq!(result["error"]["code"], 10003, "{result}");
    let other = json!({"previewId": "0f3c5b9a-0c1d-4e2f-8a9b-0123456789ab", "status": "cancelled"});
    let (result, _) = cancel_via(&fx, Reply::Json(200, other));
    assert_eq!(result["error"]["code"], 10003, "{result}");
}

#[test]
fn operation_cancel_bad_input_and_no_gateway() {
    let fx = Fixture::new();
    let peer = Peer::start(vec![Reply::Json(200, json!({"status": "cancelled"}))]);
    let mut server = fx.server(&[], &peer.env());
    assert_refused(
        &mut server,
        "operation.cancel",
        &json!({}),
        "previewId",
        &[json!("x"), json!(ID.to_uppercase()), json!(null)],
    );
    assert!(peer.requests().is_empty());
    let none = fx.call("operation.cancel", json!({ "previewId": ID }));
    assert_eq!(none["error"]["code"], 10003, "{none}");
    assert_eq!(none["error"]["data"]["gatewayConfigured"], false);
    assert_eq!(none["readOnly"], false);
}
