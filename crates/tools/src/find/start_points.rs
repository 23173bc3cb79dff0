//! `-files0-from`: starting points read as NUL-separated names from a file or standard input,
//! with GNU find's messages for what cannot be used.

use canopy_expr::StartList;
use std::io::Read;

/// The names read; `invalid` counts empty ones, each reported (find then exits 1).
pub struct StartPoints {
    pub roots: Vec<Vec<u8>>,
    pub invalid: usize,
}

/// Reads the whole list. An unreadable source is an error message (find exits 1 without walking).
pub fn read(list: &StartList) -> Result<StartPoints, String> {
    let (name, bytes) = match list {
        StartList::Stdin => {
            let mut bytes = Vec::new();
            std::io::stdin().lock().read_to_end(&mut bytes).map_err(|e| {
                format!("'(standard input)': read error: {}", canopy_util::errors::io_error_message(&e))
            })?;
            ("(standard input)".to_string(), bytes)
        }
        StartList::File(path) => {
            let shown = path.display().to_string();
            let mut file = std::fs::File::open(path).map_err(|e| {
                format!("cannot open '{shown}' for reading: {}", canopy_util::errors::io_error_message(&e))
            })?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).map_err(|e| {
                format!("'{shown}': read error: {}", canopy_util::errors::io_error_message(&e))
            })?;
            (shown, bytes)
        }
    };
    Ok(split(&bytes, &name))
}

fn split(bytes: &[u8], source: &str) -> StartPoints {
    let mut points = StartPoints { roots: Vec::new(), invalid: 0 };
    let items = bytes.strip_suffix(b"\0").unwrap_or(bytes);
    if bytes.is_empty() {
        return points;
    }
    for (index, item) in items.split(|&b| b == 0).enumerate() {
        if item.is_empty() {
            crate::common::print_error(
                "find",
                format_args!("'{source}':{}: invalid zero-length file name", index + 1),
            );
            points.invalid += 1;
        } else {
            points.roots.push(item.to_vec());
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_nul_separated_and_empty_ones_counted() {
        let p = split(b"a\0\0b c\0", "x");
        assert_eq!(p.roots, vec![b"a".to_vec(), b"b c".to_vec()]);
        assert_eq!(p.invalid, 1);
        assert_eq!(split(b"a", "x").roots, vec![b"a".to_vec()], "the last NUL is optional");
        let empty = split(b"", "x");
        assert!(empty.roots.is_empty() && empty.invalid == 0);
        assert_eq!(split(b"\0", "x").invalid, 1);
    }
}
