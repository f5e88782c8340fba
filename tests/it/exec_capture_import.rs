//! How a restore point is written by one `git fast-import` run started beside the
//! worktree's listing: a whole cache tree serves as the index's tree and nothing is
//! written loose; a failure after the run started, or an import dropped unfinished, moves
//! no ref, records nothing and leaves no crash report in the git directory.

use std::path::Path;
use std::time::Duration;

use gitward::gateway::server::restore::{Caps, RestoreError};
use gitward::git::fast_import::{Change, Content, Import, NewCommit};
use gitward::git::{Git, Oid};
use gitward::operation::OpError;

use super::exec_ops::Rig;
use super::exec_restore::{open, try_take};

/// `(loose objects, packs)` in the repository's object database.
fn objects(repo: &Path) -> (usize, usize) {
    let dir = repo.join(".git/objects");
    let mut loose = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.len() == 2 && name.chars().all(|c| c.is_ascii_hexdigit()) {
            loose += std::fs::read_dir(entry.path()).unwrap().count();
        }
    }
    let packs = std::fs::read_dir(dir.join("pack"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
        .count();
    (loose, packs)
}

/// What a run that died on a cut stream, or a kill, leaves in the git directory.
fn leftovers(repo: &Path) -> Vec<String> {
    let crash = std::fs::read_dir(repo.join(".git"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("fast_import_crash_"));
    let partial = std::fs::read_dir(repo.join(".git/objects/pack"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("tmp_"));
    crash.chain(partial).collect()
}

#[tokio::test]
async fn a_whole_cache_tree_is_the_index_tree_and_a_point_writes_one_pack_only() {
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "edited\n");
    rig.fx.write(&rig.repo, "new/u.txt", "untracked\n");
    let index = std::fs::read(rig.repo.join(".git/index")).unwrap();
    let before = objects(&rig.repo);
    let mut store = rig.store();
    let refs = ["refs/heads/main".to_owned()];
    let point = try_take(&rig, &mut store, &Caps::default(), &refs)
        .await
        .unwrap();
    let after = objects(&rig.repo);
    assert_eq!(after, (before.0, before.1 + 1), "no loose object, one pack");
    let captured = &point.captured;
    let blob = captured["index"]["blob"].as_str().unwrap();
    let kept = rig
        .fx
        .git_output(&rig.repo, &["cat-file", "blob", blob])
        .stdout;
    assert_eq!(kept, index, "the index file, byte for byte");
    // The index is untouched, so git writes the tree of the index as it was.
    assert_eq!(
        captured["index"]["tree"].as_str().unwrap(),
        rig.git(&["write-tree"])
    );
    assert_eq!(captured["worktree"]["hashed"].as_u64(), Some(2));
    assert_eq!(leftovers(&rig.repo), Vec::<String>::new());
}

#[tokio::test]
async fn a_failure_after_the_import_started_moves_no_ref_and_records_nothing() {
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "edited\n");
    std::fs::write(
        rig.repo.join(".git/MERGE_MSG"),
        "kept in the objects commit\n",
    )
    .unwrap();
    // One more changed path than a point takes: the listing fails after the refs, the
    // index and the state files went to fast-import.
    let many = rig.repo.join("many");
    std::fs::create_dir(&many).unwrap();
    for i in 0..=gitward::operation::pins::MAX_CHANGES {
        std::fs::write(many.join(format!("{i}")), b"").unwrap();
    }
    let mut store = rig.store();
    let refs = ["refs/heads/main".to_owned()];
    let err = try_take(&rig, &mut store, &Caps::default(), &refs)
        .await
        .unwrap_err();
    assert!(
        matches!(err, RestoreError::Op(OpError::Unsupported(_))),
        "{err:?}"
    );
    assert_eq!(rig.git(&["for-each-ref", "refs/gitward/"]), "");
    let repo = open(&rig).await;
    let points = store.all_restore_points(&repo.display()).unwrap();
    assert!(points.is_empty(), "no record");
    assert_eq!(leftovers(&rig.repo), Vec::<String>::new());
}

#[tokio::test]
async fn an_import_dropped_unfinished_ends_cleanly_and_moves_no_ref() {
    let rig = Rig::new();
    let repo = open(&rig).await;
    let git = Git::new(&repo, &rig.cancel);
    let head = Oid::parse(&rig.git(&["rev-parse", "HEAD"])).unwrap();
    let packs = objects(&rig.repo).1;
    // Tests running beside this one may hold the turns for early runs for a moment.
    let mut import = Import::new(&git, 0, true);
    for _ in 0..200 {
        if import.started() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        import = Import::new(&git, 0, true);
    }
    assert!(import.started());
    import.reset("refs/gitward/test/head", &head);
    import.commit(NewCommit {
        ref_name: "refs/gitward/test/commit".into(),
        message: "m\n".into(),
        root: None,
        changes: vec![(
            "f".into(),
            Change::Put {
                mode: 0o100644,
                content: Content::Bytes(b"bytes\n".to_vec()),
            },
        )],
    });
    drop(import);
    // The run ends on its own. Its pack is kept (`.keep`) until after the refs were
    // written: a new pack without a `.keep` is a run that got that far.
    let kept = || {
        std::fs::read_dir(rig.repo.join(".git/objects/pack"))
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".keep"))
    };
    for _ in 0..400 {
        if objects(&rig.repo).1 > packs && !kept() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(objects(&rig.repo).1, packs + 1, "the run ended cleanly");
    assert_eq!(rig.git(&["for-each-ref", "refs/gitward/"]), "");
    assert_eq!(leftovers(&rig.repo), Vec::<String>::new());
}
