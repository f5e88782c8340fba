//! One JSON POST to the gateway: loopback only, no proxy, no redirect, a deadline and a
//! cap on the answer. Any failure is reported as a reason string; callers fall back.

use std::time::Duration;

use serde_json::Value;

use super::addr::GatewayAddr;

/// The largest answer read from the gateway.
pub const MAX_RESPONSE: u64 = 1024 * 1024;

/// POSTs `body` to `path` and returns the JSON object of a 2xx answer.
pub async fn post_json(
    addr: &GatewayAddr,
    path: &str,
    body: &Value,
    timeout: Duration,
) -> Result<Value, String> {
    let url = addr.url(path);
    let body = body.to_string();
    let call = tokio::task::spawn_blocking(move || blocking_post(&url, &body, timeout));
    match tokio::time::timeout(timeout + Duration::from_secs(1), call).await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => Err(format!("gateway call failed: {e}")),
        Err(_) => Err("gateway did not answer in time".into()),
    }
}

fn blocking_post(url: &str, body: &str, timeout: Duration) -> Result<Value, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .proxy(None)
        .max_redirects(0)
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .timeout_connect(Some(Duration::from_secs(1).min(timeout)))
        .user_agent(concat!("gitward/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut response = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .send(body)
        .map_err(|e| format!("gateway unreachable: {e}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("gateway answered HTTP {}", status.as_u16()));
    }
    let bytes = response
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE)
        .read_to_vec()
        .map_err(|e| format!("gateway answer unreadable or over 1 MiB: {e}"))?;
    let value: Value =
        serde_json::from_slice(&bytes).map_err(|_| "gateway answer is not JSON".to_owned())?;
    if value.is_object() {
        Ok(value)
    } else {
        Err("gateway answer is not a JSON object".into())
    }
}
