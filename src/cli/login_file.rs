//! The private file `gitward gateway --open` hands the browser instead of the login link:
//! a page that forwards to the link, in a directory of its own that only this user can
//! enter, removed when dropped.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The written file; dropping it removes the file and its directory.
pub struct LoginFile {
    dir: PathBuf,
    file: PathBuf,
}

impl LoginFile {
    pub fn path(&self) -> &Path {
        &self.file
    }
}

impl Drop for LoginFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Writes the forwarding page for `link` into a fresh `0700` directory under `parent`.
pub fn write(parent: &Path, link: &str) -> std::io::Result<LoginFile> {
    // The link is ours (`http://127.0.0.1:PORT/login#<base64url>`); anything that would
    // need escaping in an attribute is refused rather than escaped.
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.:/#".contains(c);
    if !link.starts_with("http://") || !link.chars().all(plain) {
        return Err(std::io::Error::other("not a login link"));
    }
    let name = crate::gateway::server::auth::random_token()
        .map_err(|e| std::io::Error::other(format!("no randomness: {e}")))?;
    std::fs::create_dir_all(parent)?;
    let dir = parent.join(format!("login-{}", &name[..16]));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    let file = dir.join("login.html");
    let written = LoginFile {
        dir,
        file: file.clone(),
    };
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file)?;
    write!(
        out,
        "<!doctype html>\n<meta charset=\"utf-8\">\n<meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta http-equiv=\"refresh\" content=\"0;url={link}\">\n<title>gitward</title>\n\
         <p><a href=\"{link}\">Open the approval page</a></p>\n"
    )?;
    out.sync_all()?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_page_is_private_and_goes_when_dropped() {
        let parent = tempfile::tempdir().unwrap();
        let link = "http://127.0.0.1:4000/login#abc-_123";
        let file = write(parent.path(), link).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(file.path()), 0o600);
        assert_eq!(mode(file.path().parent().unwrap()), 0o700);
        let page = std::fs::read_to_string(file.path()).unwrap();
        assert!(
            page.contains(&format!("content=\"0;url={link}\"")),
            "{page}"
        );
        let dir = file.path().parent().unwrap().to_owned();
        drop(file);
        assert!(!dir.exists());
        assert!(write(parent.path(), "http://x/\"><script>").is_err());
    }
}
