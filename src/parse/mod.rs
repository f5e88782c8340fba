//! Parsers for git's machine-readable output: pure functions from bytes to models.
//!
//! One file per format, the grammar in its module doc. Parsers are strict: a record they
//! do not recognise is an error naming its byte offset, never silently skipped. Record
//! streams (`-z` output) can be parsed while git is still writing, through [`Records`],
//! so memory stays flat however much git prints.

pub mod author_emails;
pub mod cat_file_batch;
pub mod codeowners;
pub mod config;
pub mod diff_tree;
pub mod for_each_ref;
pub mod log;
pub mod ls_files_unmerged;
pub mod ls_tree;
pub mod merge_tree;
pub mod patch;
pub mod reflog_file;
pub mod reflog_walk;
pub mod remote_v;
pub mod stash;
pub mod status_v2;
pub mod submodule;
pub mod worktree;

use crate::sink::{Flow, Sink};

/// A parse failure at a byte offset of git's output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected git output at byte {offset}: {reason}")]
pub struct ParseError {
    pub offset: usize,
    pub reason: String,
}

impl ParseError {
    pub fn new(offset: usize, reason: impl Into<String>) -> Self {
        ParseError {
            offset,
            reason: reason.into(),
        }
    }
}

/// An entry record of the index or a tree, `<three fields> TAB <path>`: the fields as
/// written and the path's bytes (any byte but NUL; never empty). `what` names the record
/// in errors.
pub(crate) fn entry_fields<'a>(
    record: &'a [u8],
    offset: usize,
    what: &str,
) -> Result<([&'a str; 3], &'a [u8]), ParseError> {
    let tab = record
        .iter()
        .position(|b| *b == b'\t')
        .ok_or_else(|| ParseError::new(offset, format!("{what} without a TAB before its path")))?;
    let (meta, path) = (&record[..tab], &record[tab + 1..]);
    let meta = std::str::from_utf8(meta)
        .map_err(|_| ParseError::new(offset, format!("{what} metadata is not ASCII")))?;
    let mut fields = meta.split(' ');
    let (Some(a), Some(b), Some(c), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(ParseError::new(
            offset,
            format!("expected three fields before the path of a {what}, got {meta:?}"),
        ));
    };
    if path.is_empty() {
        return Err(ParseError::new(
            offset,
            format!("{what} with an empty path"),
        ));
    }
    Ok(([a, b, c], path))
}

/// A six-digit octal file mode (`100644`, `120000`, `160000`, …).
pub(crate) fn file_mode(field: &str, offset: usize) -> Result<u32, ParseError> {
    u32::from_str_radix(field, 8)
        .ok()
        .filter(|_| field.len() == 6)
        .ok_or_else(|| ParseError::new(offset, format!("bad mode {field:?}")))
}

/// An object id.
pub(crate) fn object_id(field: &str, offset: usize) -> Result<crate::model::Oid, ParseError> {
    crate::model::Oid::parse(field)
        .ok_or_else(|| ParseError::new(offset, format!("bad object id {field:?}")))
}

/// Consumes NUL-terminated records one at a time.
pub trait RecordParser: Send + 'static {
    /// `offset` is where `record` starts in the whole output.
    fn record(&mut self, record: &[u8], offset: usize) -> Result<Flow, ParseError>;

    /// Called once at the end; `rest` is any bytes after the last NUL.
    fn finish(&mut self, rest: &[u8], offset: usize) -> Result<(), ParseError> {
        if rest.is_empty() {
            Ok(())
        } else {
            Err(ParseError::new(offset, "output ends inside a record"))
        }
    }
}

/// A process sink that splits stdout on NUL and feeds each record to a parser.
pub struct Records<P> {
    pub parser: P,
    pending: Vec<u8>,
    offset: usize,
    pub error: Option<ParseError>,
}

impl<P: RecordParser> Records<P> {
    pub fn new(parser: P) -> Self {
        Records {
            parser,
            pending: Vec::new(),
            offset: 0,
            error: None,
        }
    }

    /// Ends the stream: checks the tail and returns the parser or the first error.
    pub fn finish(mut self, complete: bool) -> Result<P, ParseError> {
        if let Some(err) = self.error {
            return Err(err);
        }
        if complete {
            let rest = std::mem::take(&mut self.pending);
            self.parser.finish(&rest, self.offset)?;
        }
        Ok(self.parser)
    }

    /// Parses a complete buffer in one go.
    pub fn parse_all(parser: P, bytes: &[u8]) -> Result<P, ParseError> {
        let mut records = Records::new(parser);
        records.accept(bytes);
        records.finish(true)
    }
}

impl<P: RecordParser> Sink for Records<P> {
    fn accept(&mut self, chunk: &[u8]) -> Flow {
        if self.error.is_some() {
            return Flow::Enough;
        }
        let mut rest = chunk;
        while let Some(nul) = rest.iter().position(|b| *b == 0) {
            let (head, tail) = (&rest[..nul], &rest[nul + 1..]);
            let start = self.offset;
            let (outcome, len) = if self.pending.is_empty() {
                (self.parser.record(head, start), head.len())
            } else {
                self.pending.extend_from_slice(head);
                let record = std::mem::take(&mut self.pending);
                (self.parser.record(&record, start), record.len())
            };
            self.offset = start + len + 1;
            match outcome {
                Ok(Flow::More) => {}
                Ok(Flow::Enough) => return Flow::Enough,
                Err(err) => {
                    self.error = Some(err);
                    return Flow::Enough;
                }
            }
            rest = tail;
        }
        self.pending.extend_from_slice(rest);
        Flow::More
    }
}

/// A `--format=` argument with `nul` after every field: `%x00` for the pretty formats
/// of log and reflog, `%00` for for-each-ref.
pub(crate) fn format_arg(fields: &[&str], nul: &str) -> String {
    let mut out = String::from("--format=");
    for field in fields {
        out.push_str(field);
        out.push_str(nul);
    }
    out
}

pub(crate) fn utf8(bytes: &[u8], offset: usize, what: &str) -> Result<String, ParseError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| ParseError::new(offset, format!("{what} is not UTF-8")))
}
