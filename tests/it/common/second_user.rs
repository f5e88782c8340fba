//! The hard-separation setup in tests: the gateway runs as a second OS user
//! (`gitward-gw`), the test (the agent's side) as root. The user is created when missing,
//! under a lock, so concurrent test processes create it once; tests that need it run as
//! root (as in CI) and fail plainly otherwise.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The second user's name.
pub const NAME: &str = "gitward-gw";

/// The second user's `(uid, gid)`, created on first use.
pub fn ids() -> (u32, u32) {
    static IDS: OnceLock<(u32, u32)> = OnceLock::new();
    *IDS.get_or_init(|| {
        let me = std::fs::metadata("/proc/self").unwrap().uid();
        assert_eq!(
            me, 0,
            "the separate-user setup needs root, to create and run as `{NAME}`"
        );
        // `flock` serialises creation across test processes; `id` makes it idempotent.
        let status = Command::new("flock")
            .args(["/tmp/gitward-gw-user.lock", "sh", "-c"])
            .arg(format!(
                "id -u {NAME} >/dev/null 2>&1 || useradd --system --no-create-home \
                 --user-group --shell /usr/sbin/nologin {NAME}"
            ))
            .status()
            .expect("flock runs");
        assert!(status.success(), "creating the user {NAME} failed");
        let id = |flag: &str| -> u32 {
            let out = Command::new("id").args([flag, NAME]).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        (id("-u"), id("-g"))
    })
}

/// Makes `cmd` run as the second user (std drops root's supplementary groups when a
/// process started by root changes its uid).
pub fn run_as(cmd: &mut Command) {
    let (uid, gid) = ids();
    cmd.uid(uid).gid(gid);
}

/// Hands `path` (recursively) to the second user, as its own state directory.
pub fn give(path: &Path) {
    let (uid, gid) = ids();
    let status = Command::new("chown")
        .args(["-R", &format!("{uid}:{gid}"), "--"])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "chown {}", path.display());
}

/// Lets both users write `path` (recursively): a repository both sides may change.
pub fn share(path: &Path) {
    let status = Command::new("chmod")
        .args(["-R", "a+rwX", "--"])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "chmod {}", path.display());
}

/// Lets the second user into `dir` (a fixture root made private by its creator).
pub fn open_dir(dir: &Path) {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}
