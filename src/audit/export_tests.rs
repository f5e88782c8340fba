use super::*;
use crate::audit::{AuditConfig, Entry, Ledger, ledger::ROTATE_BYTES};

fn ledger(dir: &Path, rotate_bytes: u64) -> (std::path::PathBuf, Ledger) {
    let path = dir.join("mcp.jsonl");
    let ledger = Ledger::open(AuditConfig {
        path: path.clone(),
        signer: None,
        rotate_bytes,
    })
    .unwrap();
    (path, ledger)
}

fn entry(event: &str, summary: &str) -> Entry {
    Entry::now()
        .with("event_type", event)
        .with("tool", "repo.status")
        .with("summary", summary)
}

fn run(path: &Path, format: Format, filter: &Filter, allow: bool) -> (String, Exported) {
    let mut out = Vec::new();
    let done = export(path, &[], format, filter, allow, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), done)
}

#[test]
fn jsonl_is_the_ledger_lines_filtered_by_type_and_time() {
    let dir = tempfile::tempdir().unwrap();
    // Small segments: the export follows the chain across rotations.
    let (path, mut ledger) = ledger(dir.path(), 2048);
    for i in 0..20 {
        let kind = if i % 2 == 0 {
            "tool_call"
        } else {
            "proposal_transition"
        };
        ledger.append(entry(kind, &format!("call {i}"))).unwrap();
    }
    let (all, done) = run(&path, Format::Jsonl, &Filter::default(), false);
    assert!(done.verified);
    let on_disk: usize = scan::segments(&path)
        .iter()
        .map(|s| std::fs::read_to_string(s).unwrap().lines().count())
        .sum();
    assert_eq!(all.lines().count(), on_disk);
    assert_eq!(done.rows as usize, on_disk);
    // Byte for byte the ledger's lines.
    let active = std::fs::read_to_string(&path).unwrap();
    assert!(all.ends_with(&active));

    let only = Filter {
        event_types: vec!["proposal_transition".into()],
        ..Filter::default()
    };
    let (some, _) = run(&path, Format::Jsonl, &only, false);
    assert!(some.lines().count() >= 1);
    assert!(
        some.lines()
            .all(|l| l.contains(r#""event_type":"proposal_transition""#))
    );

    let future = Filter {
        since_ms: Some(crate::audit::ledger::now_ms() + 60_000),
        ..Filter::default()
    };
    assert_eq!(run(&path, Format::Jsonl, &future, false).1.rows, 0);
    let past = Filter {
        until_ms: Some(1),
        ..Filter::default()
    };
    assert_eq!(run(&path, Format::Jsonl, &past, false).1.rows, 0);
}

#[test]
fn a_broken_ledger_exports_nothing_unless_allowed_and_then_every_row_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut ledger) = ledger(dir.path(), ROTATE_BYTES);
    for i in 0..3 {
        ledger
            .append(entry("tool_call", &format!("call {i}")))
            .unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("call 1", "call 9", 1)).unwrap();

    let mut out = Vec::new();
    let refused = export(&path, &[], Format::Csv, &Filter::default(), false, &mut out);
    assert!(
        matches!(refused, Err(ExportError::Broken(..))),
        "{refused:?}"
    );
    assert!(out.is_empty());

    let (rows, done) = run(&path, Format::Jsonl, &Filter::default(), true);
    assert!(!done.verified && done.failure.is_some());
    assert_eq!(rows.lines().count(), 3);
    assert!(
        rows.lines()
            .all(|l| l.starts_with(r#"{"verified":false,"entry":{"#))
    );
    let (csv, _) = run(&path, Format::Csv, &Filter::default(), true);
    assert!(csv.lines().skip(1).all(|l| l.starts_with("false,")));
}

#[test]
fn csv_quotes_what_needs_it_and_defuses_formulas() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut ledger) = ledger(dir.path(), ROTATE_BYTES);
    ledger
        .append(entry("tool_call", "=HYPERLINK(\"x\"), and\nmore"))
        .unwrap();
    let (csv, done) = run(&path, Format::Csv, &Filter::default(), false);
    assert_eq!(done.rows, 1);
    let mut lines = csv.splitn(2, '\n');
    assert_eq!(
        lines.next().unwrap(),
        format!("verified,{}", CSV_COLUMNS.join(","))
    );
    let row = lines.next().unwrap();
    assert!(row.starts_with("true,1,"), "{row}");
    assert!(
        row.contains(
            r#""'=HYPERLINK(""x""), and
more""#
        ),
        "{row}"
    );
}
