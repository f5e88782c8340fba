use super::*;

fn fields(v: Value) -> Fields {
    v.as_object().unwrap().clone()
}

#[test]
fn defaults_and_refusals_name_the_field() {
    let f = MergeFields::from_fields(&fields(
        json!({"sourceRef": "feature", "targetRef": "refs/heads/main"}),
    ))
    .unwrap();
    assert_eq!(f.strategy, Strategy::Merge);
    assert_eq!(f.target(), "main");
    for (v, field) in [
        (json!({"targetRef": "main"}), "sourceRef"),
        (json!({"sourceRef": "x"}), "targetRef"),
        (
            json!({"sourceRef": "--ours", "targetRef": "main"}),
            "sourceRef",
        ),
        (json!({"sourceRef": "x", "targetRef": "-main"}), "targetRef"),
        (json!({"sourceRef": "x", "targetRef": "a..b"}), "targetRef"),
        (
            json!({"sourceRef": "x", "targetRef": "main", "strategy": "octopus"}),
            "strategy",
        ),
        (
            json!({"sourceRef": "x", "targetRef": "main", "noFf": true}),
            "fields",
        ),
    ] {
        let err = MergeFields::from_fields(&fields(v.clone())).unwrap_err();
        assert_eq!(err.field, field, "{v} → {err}");
    }
}

#[test]
fn schema_names_the_three_strategies() {
    let schema = Merge.fields_schema();
    assert_eq!(schema["required"], json!(["sourceRef", "targetRef"]));
    assert_eq!(
        schema["properties"]["strategy"]["enum"],
        json!(["merge", "squash", "rebase"])
    );
    assert_eq!(schema["properties"]["strategy"]["default"], "merge");
}
