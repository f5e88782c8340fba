//! Conflict-marker regions of a working file, found the way git writes them.

use schemars::JsonSchema;
use serde::Serialize;

/// Marker regions listed per file.
const MAX_REGIONS: usize = 200;

#[derive(Debug, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    /// The `<<<<<<<` line.
    pub start_line: u64,
    /// The `|||||||` line of diff3/zdiff3 style markers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_line: Option<u64>,
    /// The `=======` line.
    pub sep_line: Option<u64>,
    /// The `>>>>>>>` line; null when the region is never closed.
    pub end_line: Option<u64>,
}

/// Conflict-marker regions: a line starting with exactly seven `<`, `|`, `=`, `>`
/// (followed by a space or the end of the line) opens, splits or closes a region.
pub(super) fn marker_regions(bytes: &[u8]) -> (Vec<Region>, bool) {
    fn marker(line: &[u8], ch: u8) -> bool {
        line.len() >= 7
            && line[..7].iter().all(|b| *b == ch)
            && matches!(line.get(7), None | Some(b' ') | Some(b'\r'))
    }
    let mut regions = Vec::new();
    let mut open: Option<Region> = None;
    let mut truncated = false;
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let n = i as u64 + 1;
        if marker(line, b'<') {
            if let Some(unclosed) = open.take() {
                regions.push(unclosed);
            }
            open = Some(Region {
                start_line: n,
                base_line: None,
                sep_line: None,
                end_line: None,
            });
        } else if let Some(region) = open.as_mut() {
            if marker(line, b'|') && region.sep_line.is_none() && region.base_line.is_none() {
                region.base_line = Some(n);
            } else if marker(line, b'=') && region.sep_line.is_none() {
                region.sep_line = Some(n);
            } else if marker(line, b'>') && region.sep_line.is_some() {
                region.end_line = Some(n);
                regions.extend(open.take());
            }
        }
        if regions.len() >= MAX_REGIONS {
            truncated = true;
            break;
        }
    }
    regions.extend(open);
    (regions, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_regions_two_way_and_diff3() {
        let text = b"a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feat\nb\n\
<<<<<<< HEAD\nx\n||||||| base\ny\n=======\nz\n>>>>>>> feat\n=======\n<<<<<<<\n";
        let (regions, truncated) = marker_regions(text);
        assert!(!truncated);
        insta::assert_debug_snapshot!(regions, @"
        [
            Region {
                start_line: 2,
                base_line: None,
                sep_line: Some(
                    4,
                ),
                end_line: Some(
                    6,
                ),
            },
            Region {
                start_line: 8,
                base_line: Some(
                    10,
                ),
                sep_line: Some(
                    12,
                ),
                end_line: Some(
                    14,
                ),
            },
            Region {
                start_line: 16,
                base_line: None,
                sep_line: None,
                end_line: None,
            },
        ]
        ");
    }

    #[test]
    fn lookalikes_are_not_markers() {
        let (regions, _) = marker_regions(b"<<<<<<<< eight\n======= x\n<<<<<<x\n");
        assert!(regions.is_empty());
    }
}
