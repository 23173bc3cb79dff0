//! The NodeSet string scanner: a port of ClusterShell's `ParsingEngine._scan_string`, so that odd inputs
//! (`node1[2-3]`, `node[1-2]0`, `a[1-2]b[3-4]-ib0`, operators `,` `!` `&` `^`) mean what they mean there.

use super::ParseError;
use super::rangeset::{Index, RangeSet};

/// A set operation between the accumulated set and the next operand, applied left to right.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum SetOp {
    Union,
    Difference,
    Intersection,
    SymmetricDifference,
}

impl SetOp {
    fn from_char(c: char) -> SetOp {
        match c {
            '!' => SetOp::Difference,
            '&' => SetOp::Intersection,
            '^' => SetOp::SymmetricDifference,
            _ => SetOp::Union,
        }
    }
}

/// One scanned operand: literal name parts around the index positions, and one set per position.
#[derive(Debug)]
pub(crate) struct Operand {
    pub(crate) op: SetOp,
    pub(crate) parts: Vec<String>,
    pub(crate) axes: Vec<RangeSet>,
}

const OPERATORS: [char; 4] = [',', '!', '&', '^'];

fn next_op(text: &str) -> Option<(usize, char)> {
    text.char_indices().find(|(_, c)| OPERATORS.contains(c))
}

/// Scans a whole NodeSet expression into operands.
pub(crate) fn scan(text: &str) -> Result<Vec<Operand>, ParseError> {
    let mut out = Vec::new();
    let mut rest: Option<String> = Some(text.trim().to_owned()).filter(|s| !s.is_empty());
    let mut next_code = ',';
    while let Some(current) = rest.take() {
        let current = current.trim_start().to_owned();
        let op = SetOp::from_char(next_code);
        let mut parts = vec![String::new()];
        let mut axes = Vec::new();
        let mut op_idx = next_op(&current);
        if let Some((_, c)) = op_idx {
            next_code = c;
        }
        let mut bracket_idx = current.find('[');
        let bracket_first = |bracket: Option<usize>, op: Option<(usize, char)>| match (bracket, op) {
            (Some(b), Some((o, _))) => o > b,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if bracket_first(bracket_idx, op_idx) {
            let mut sfx = current.clone();
            while bracket_first(bracket_idx, op_idx) {
                let (pfx, after) = sfx.split_once('[').expect("a bracket was found");
                let (rng, after) =
                    after.split_once(']').ok_or_else(|| ParseError::new(&current, "missing bracket"))?;
                let (mut pfx, mut rng, mut after) = (pfx.to_owned(), rng.to_owned(), after.to_owned());
                if pfx.contains(']') {
                    return Err(ParseError::new(&pfx, "illegal closing bracket"));
                }
                if !after.is_empty() {
                    let close = after.find(']');
                    let open = after.find('[');
                    if let Some(close) = close
                        && open.is_none_or(|open| close < open)
                    {
                        return Err(ParseError::new(&after, "illegal closing bracket"));
                    }
                    (after, rng) = amend_trailing_digits(&after, &rng)?;
                }
                if !pfx.is_empty() {
                    (pfx, rng) = amend_leading_digits(&pfx, &rng)?;
                    if !pfx.is_empty() {
                        let (pfx_parts, pfx_axes) = scan_single(&pfx)?;
                        append_parts(&mut parts, pfx_parts);
                        axes.extend(pfx_axes);
                    }
                }
                bracket_idx = after.find('[');
                op_idx = next_op(&after);
                if let Some((_, c)) = op_idx {
                    next_code = c;
                }
                if after.starts_with('[') {
                    return Err(ParseError::new(&after, "illegal reopening bracket"));
                }
                parts.push(String::new());
                axes.push(RangeSet::parse(&rng)?);
                sfx = after;
            }
            op_idx = next_op(&sfx);
            if let Some((idx, c)) = op_idx {
                next_code = c;
                let remainder = sfx[idx + c.len_utf8()..].to_owned();
                if remainder.is_empty() {
                    return Err(missing_operand(c, ""));
                }
                sfx.truncate(idx);
                rest = Some(remainder);
            }
            let sfx = sfx.trim_end();
            if !sfx.is_empty() {
                let (sfx_parts, sfx_axes) = scan_single(sfx)?;
                append_parts(&mut parts, sfx_parts);
                axes.extend(sfx_axes);
            }
        } else {
            let node = match op_idx {
                None => current.as_str(),
                Some((idx, c)) => {
                    let (node, remainder) = (&current[..idx], &current[idx + c.len_utf8()..]);
                    if node.is_empty() || remainder.is_empty() {
                        return Err(missing_operand(c, if node.is_empty() { remainder } else { node }));
                    }
                    rest = Some(remainder.to_owned());
                    node
                }
            };
            if node.contains(']') {
                return Err(ParseError::new(node, "illegal closing bracket"));
            }
            (parts, axes) = scan_single(node.trim_end())?;
        }
        if parts.concat().starts_with('@') {
            return Err(ParseError::new(&parts.concat(), "node groups (@group) are not supported"));
        }
        if parts.iter().any(|p| p.contains(['*', '?'])) {
            return Err(ParseError::new(&parts.concat(), "node wildcards (* and ?) are not supported"));
        }
        out.push(Operand { op, parts, axes });
    }
    Ok(out)
}

fn missing_operand(op: char, near: &str) -> ParseError {
    ParseError::new(near, &format!("missing nodeset operand with '{op}' operator"))
}

/// Appends scanned parts: the first new part continues the current literal.
fn append_parts(parts: &mut Vec<String>, new: Vec<String>) {
    let mut new = new.into_iter();
    if let Some(first) = new.next() {
        parts.last_mut().expect("parts is never empty").push_str(&first);
    }
    parts.extend(new);
}

/// A single name without brackets: every run of digits is an index (`node12b3` has two).
pub(crate) fn scan_single(name: &str) -> Result<(Vec<String>, Vec<RangeSet>), ParseError> {
    if name.is_empty() {
        return Err(ParseError::new(name, "parse error"));
    }
    let mut parts = vec![String::new()];
    let mut axes = Vec::new();
    let mut rest = name;
    while !rest.is_empty() {
        let literal_end = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        parts.last_mut().expect("parts is never empty").push_str(&rest[..literal_end]);
        rest = &rest[literal_end..];
        let digits_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits_end > 0 {
            axes.push(std::iter::once(Index::from_digits(&rest[..digits_end])).collect());
            parts.push(String::new());
            rest = &rest[digits_end..];
        }
    }
    Ok((parts, axes))
}

/// `prefix12[3-4]` means `prefix[123-124]`: move the digits before a bracket into its ranges.
fn amend_leading_digits(outer: &str, inner: &str) -> Result<(String, String), ParseError> {
    let stripped = outer.trim_end_matches(|c: char| c.is_ascii_digit());
    if stripped.len() == outer.len() {
        return Ok((outer.to_owned(), inner.to_owned()));
    }
    let lead = &outer[stripped.len()..];
    let amended: Vec<String> = contiguous_items(&RangeSet::parse(inner)?)
        .iter()
        .map(|item| item.split('-').map(|bound| format!("{lead}{bound}")).collect::<Vec<_>>().join("-"))
        .collect();
    Ok((stripped.to_owned(), amended.join(",")))
}

/// `[1-2]0-ib` means `[10-20/10]-ib`: move the digits after a bracket into its ranges (as a step).
fn amend_trailing_digits(outer: &str, inner: &str) -> Result<(String, String), ParseError> {
    let stripped = outer.trim_start_matches(|c: char| c.is_ascii_digit());
    if stripped.len() == outer.len() {
        return Ok((outer.to_owned(), inner.to_owned()));
    }
    if inner.contains('/') {
        return Err(ParseError::new(outer, "illegal trailing digits after range with steps"));
    }
    let trail = &outer[..outer.len() - stripped.len()];
    let amended: Vec<String> = inner
        .split(',')
        .map(|item| {
            let shifted =
                item.split('-').map(|bound| format!("{bound}{trail}")).collect::<Vec<_>>().join("-");
            if shifted.contains('-') { format!("{shifted}/1{}", "0".repeat(trail.len())) } else { shifted }
        })
        .collect();
    Ok((stripped.to_owned(), amended.join(",")))
}

/// The contiguous runs of a set as `a-b` / `a` strings (ClusterShell's `RangeSet.contiguous()`).
fn contiguous_items(set: &RangeSet) -> Vec<String> {
    set.folded(None).split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect()
}
