//! Races between separate connections, the way concurrent requests reach the store.

use std::sync::{Arc, Barrier};
use std::thread;

use super::tests::{at, db, pid, proposal, settings};
use super::*;

/// Runs `work(i, store)` on `n` threads at once, each with its own connection.
fn race<T: Send + 'static>(
    path: &Path,
    n: usize,
    work: impl Fn(usize, &mut Store) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let stores: Vec<Store> = (0..n)
        .map(|_| Store::open(path, settings()).unwrap())
        .collect();
    let barrier = Arc::new(Barrier::new(n));
    let work = Arc::new(work);
    let handles: Vec<_> = stores
        .into_iter()
        .enumerate()
        .map(|(i, mut store)| {
            let barrier = Arc::clone(&barrier);
            let work = Arc::clone(&work);
            thread::spawn(move || {
                barrier.wait();
                work(i, &mut store)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn a_hundred_racing_decisions_have_exactly_one_winner() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut store = Store::open(&path, settings()).unwrap();
    store
        .insert(&pid(1), &proposal("claude-code", None, "main"), at(0))
        .unwrap();
    let outcomes = race(&path, 100, |i, store| match i % 3 {
        0 => store.approve(&pid(1), Channel::Web, at(1)),
        1 => store.reject(&pid(1), Channel::Tty, None, at(1)),
        _ => store.cancel(&pid(1), "claude-code", at(1)),
    });
    let winners: Vec<Status> = outcomes
        .iter()
        .filter_map(|o| o.as_ref().ok().map(|r| r.status))
        .collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    let winner = winners[0];
    for outcome in &outcomes {
        match outcome {
            Ok(_) => {}
            Err(StoreError::Conflict { current_state }) => assert_eq!(*current_state, winner),
            Err(e) => panic!("a loser must see a conflict, not {e}"),
        }
    }
    assert_eq!(store.get(&pid(1), at(2)).unwrap().status, winner);
    assert_eq!(store.history(&pid(1)).unwrap().len(), 2);
}

#[test]
fn racing_retries_of_one_idempotency_key_create_one_proposal() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let outcomes = race(&path, 32, |i, store| {
        let id = pid(100 + u32::try_from(i).unwrap());
        store.insert(&id, &proposal("a", Some("merge:same"), "main"), at(0))
    });
    let ids: Vec<String> = outcomes
        .iter()
        .map(|o| o.as_ref().unwrap().record().preview_id.clone())
        .collect();
    let new = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(Inserted::New(_))))
        .count();
    assert_eq!(new, 1);
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
}

#[test]
fn racing_proposals_cannot_overrun_the_pending_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let outcomes = race(&path, 24, |i, store| {
        let id = pid(200 + u32::try_from(i).unwrap());
        store.insert(&id, &proposal("a", None, "main"), at(0))
    });
    let accepted = outcomes.iter().filter(|o| o.is_ok()).count();
    let refused = outcomes
        .iter()
        .filter(|o| matches!(o, Err(StoreError::QuotaExceeded { limit: 3, .. })))
        .count();
    assert_eq!((accepted, refused), (3, 21));
}

#[test]
fn the_pending_cap_counts_all_agents_and_a_short_list_keeps_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let capped = Settings {
        max_pending: 4,
        ..settings()
    };
    let mut store = Store::open(&db(&dir), capped).unwrap();
    // Four agents, one proposal each, one second apart: the per-agent cap never applies.
    for n in 1..=4 {
        let agent = format!("agent-{n}");
        store
            .insert(&pid(n), &proposal(&agent, None, "main"), at(i64::from(n)))
            .unwrap();
    }
    match store.insert(&pid(5), &proposal("agent-5", None, "main"), at(5)) {
        Err(StoreError::QueueFull { limit }) => assert_eq!(limit, 4),
        r => panic!("{r:?}"),
    }
    assert_eq!(store.count_pending(at(5)).unwrap(), 4);
    // Two listed of four: the two newest, oldest first.
    let listed: Vec<String> = store
        .list_pending(at(5), 2)
        .unwrap()
        .into_iter()
        .map(|r| r.preview_id)
        .collect();
    assert_eq!(listed, [pid(3), pid(4)]);
}
