use super::*;

/// Every `/assets/…` URL in `text` (the page) or every `./x.js` import (a module).
fn references(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (marker, end) in [("\"/assets/", '"'), ("from './", '\'')] {
        let mut rest = text;
        while let Some(i) = rest.find(marker) {
            rest = &rest[i + marker.len()..];
            let name: String = rest.chars().take_while(|&c| c != end).collect();
            found.push(name);
        }
    }
    found
}

#[test]
fn every_asset_the_page_and_its_modules_name_is_served() {
    let mut names = references(INDEX_HTML);
    assert!(names.contains(&"app.js".to_owned()) && names.contains(&"app.css".to_owned()));
    for name in asset_names().filter(|n| n.ends_with(".js")) {
        let (_, body) = asset(name).unwrap();
        names.extend(references(body));
    }
    for name in &names {
        assert!(asset(name).is_some(), "{name} is referenced but not served");
    }
    // And nothing is served that nobody loads.
    for name in asset_names() {
        assert!(
            names.iter().any(|n| n == name),
            "{name} is served but never loaded"
        );
    }
}

#[test]
fn assets_are_found_by_name_or_url_with_their_content_types() {
    assert_eq!(asset("app.js").unwrap().0, "text/javascript; charset=utf-8");
    assert_eq!(asset("/assets/app.js"), asset("app.js"));
    assert_eq!(
        asset("/assets/app.css").unwrap().0,
        "text/css; charset=utf-8"
    );
    assert_eq!(asset("icon.svg").unwrap().0, "image/svg+xml");
    assert!(
        asset("app.css")
            .unwrap()
            .1
            .contains("prefers-color-scheme: dark")
    );
}

#[test]
fn anything_but_a_listed_asset_is_not_found() {
    for bad in [
        "",
        "/",
        "/assets/",
        "index.html",
        "mod.rs",
        "tests.rs",
        "../mod.rs",
        "/assets/../mod.rs",
        "/assets//app.js",
        "assets/app.js",
        "APP.JS",
        "app.js?v=1",
        "app.js/",
        "/assets/app.js%00",
        "./app.js",
    ] {
        assert_eq!(asset(bad), None, "{bad:?}");
    }
}

#[test]
fn the_page_holds_no_inline_script_or_style_so_the_csp_needs_no_exception() {
    let html = INDEX_HTML.to_ascii_lowercase();
    let scripts = html.matches("<script").count();
    assert_eq!(
        scripts,
        html.matches("<script type=\"module\" src=\"/assets/")
            .count()
    );
    assert!(html.contains("</script>"));
    assert!(!html.contains("<style"), "inline <style>");
    assert!(!html.contains(" style="), "inline style attribute");
    assert!(!html.contains("javascript:"));
    for (i, _) in html.match_indices(" on") {
        let attr: String = html[i + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        assert!(
            !html[i + 1 + attr.len()..].starts_with('='),
            "inline handler {attr}"
        );
    }
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no CDN"
    );
}

#[test]
fn the_scripts_never_turn_data_into_markup() {
    for name in asset_names().filter(|n| n.ends_with(".js")) {
        let (_, body) = asset(name).unwrap();
        for sink in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
            "createContextualFragment",
            ".style.",
            "setAttribute('style'",
            "setAttribute('on",
        ] {
            assert!(!body.contains(sink), "{name} uses {sink}");
        }
        assert!(
            !body.contains("http://") && !body.contains("https://"),
            "{name} reaches out"
        );
    }
}

#[test]
fn every_post_carries_the_csrf_token() {
    let (_, api) = asset("api.js").unwrap();
    // Two fetch sites (the calls and the live stream); the calls add the CSRF header for
    // every method but GET, and both send the session as a header, never a cookie.
    assert_eq!(api.matches("fetch(").count(), 2);
    assert!(api.contains("if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;"));
    assert_eq!(api.matches("headers: authHeaders(").count(), 1);
    assert_eq!(api.matches("const headers = authHeaders(").count(), 1);
    assert_eq!(api.matches("credentials: 'omit'").count(), 2);
    assert!(!api.contains("document.cookie") && !api.contains("EventSource("));
    for name in asset_names().filter(|n| n.ends_with(".js") && *n != "api.js") {
        let (_, body) = asset(name).unwrap();
        assert!(
            !body.contains("fetch("),
            "{name} calls the API around api.js"
        );
    }
}
