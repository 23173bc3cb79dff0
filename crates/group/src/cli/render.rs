//! Printing a group outcome: `clush -b` style text blocks, or one JSON document.

use super::stat::{self, StatKey};
use super::{Failed, GroupArgs, Operation};
use crate::aggr::{
    AggrResult, AggrSpec, Agreement, Averages, Builtin, Classes, Concatenation, Digest, Extremes,
    ForeignPartial, Succeeded, Sums, decimal::Decimal,
};
use crate::group::{Group, OpenReport, Outcome};
use crate::status::MemberStatus;
use crate::transport::Transport;
use crate::value::{FileStat, Value};
use canopy_nodeset::{NodeSet, RangeSet};
use serde_json::{Value as Json, json};
use std::io::Write;
use std::path::Path;

/// How sets of members are named: the set of their hosts when the group is one file per host at one
/// path, else `hosts:path` for each distinct path.
pub struct Labels<'g, 'rt, Tr: Transport> {
    group: &'g Group<'rt, Tr>,
    one_per_host: bool,
}

impl<'g, 'rt, Tr: Transport> Labels<'g, 'rt, Tr> {
    /// The labels of `group`'s members.
    pub fn new(group: &'g Group<'rt, Tr>) -> Self {
        let files = group.gfiles();
        let mut hosts: Vec<&str> = files.iter().map(|f| f.host.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let one_per_host = hosts.len() == files.len() && files.iter().all(|f| f.path == files[0].path);
        Labels { group, one_per_host }
    }

    /// The order `clush -b` prints blocks in (after the command's status): larger sets first, then by the
    /// first host's name compared as a string.
    pub fn clush_key(&self, members: &RangeSet) -> (std::cmp::Reverse<u64>, String) {
        if self.one_per_host {
            let hosts = self.group.hosts_of(members);
            return (std::cmp::Reverse(hosts.len()), hosts.iter().next().unwrap_or_default());
        }
        (std::cmp::Reverse(members.len()), self.of(members))
    }

    /// The label of a set of members.
    pub fn of(&self, members: &RangeSet) -> String {
        if self.one_per_host {
            return self.group.hosts_of(members).to_string();
        }
        let files = self.group.gfiles();
        let mut by_path: Vec<(&Path, Vec<&str>)> = Vec::new();
        for member in members.values() {
            let file = &files[member as usize];
            match by_path.iter_mut().find(|(path, _)| *path == file.path) {
                Some((_, hosts)) => hosts.push(&file.host),
                None => by_path.push((&file.path, vec![&file.host])),
            }
        }
        by_path
            .into_iter()
            .map(|(path, hosts)| format!("{}:{}", NodeSet::from_names(hosts), path.display()))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One `clush -b` block: 15 dashes, the members (and their number when more than one), 15 dashes, content.
pub fn block<Tr: Transport>(
    out: &mut dyn Write,
    labels: &Labels<'_, '_, Tr>,
    members: &RangeSet,
    content: &[u8],
) -> std::io::Result<()> {
    let rule = "-".repeat(15);
    let count = if members.len() > 1 { format!(" ({})", members.len()) } else { String::new() };
    writeln!(out, "{rule}\n{}{count}\n{rule}", labels.of(members))?;
    out.write_all(content)?;
    if !content.is_empty() && !content.ends_with(b"\n") {
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn value_bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::Bytes(bytes) => bytes.clone(),
        Value::Int(v) => v.to_string().into_bytes(),
        Value::Stat(st) => format!(
            "size={} mode={:o} uid={} gid={} nlink={} mtime={}.{:09}",
            st.size, st.mode, st.uid, st.gid, st.nlink, st.mtime, st.mtime_nsec
        )
        .into_bytes(),
    }
}

fn column_name(stat: bool, column: usize) -> String {
    match FileStat::COLUMNS.get(column) {
        Some(name) if stat => (*name).to_owned(),
        _ => format!("field {}", column + 1),
    }
}

fn numbers(values: &[Option<Decimal>]) -> String {
    values.iter().map(|v| v.map_or("-".to_owned(), |d| d.to_string())).collect::<Vec<_>>().join(" ")
}

/// Members whose operation succeeded (those the aggregation saw).
fn succeeded<Tr: Transport>(group: &Group<'_, Tr>) -> RangeSet {
    group
        .gstatus_classes()
        .iter()
        .filter(|(status, _)| status.is_ok())
        .fold(RangeSet::new(), |acc, (_, members)| acc.union(members))
}

fn decoded<T: serde::de::DeserializeOwned>(result: &AggrResult) -> std::io::Result<Option<T>> {
    result.decode().map_err(|e| std::io::Error::other(e.to_string()))
}

/// The classes of a read as `clush -b` shows a command's output: what differs only in a final newline is
/// the same output, an empty one is no output; in clush's order. Each content ends with a newline.
fn output_classes<Tr: Transport>(
    labels: &Labels<'_, '_, Tr>,
    classes: &Classes<Value>,
) -> Vec<(RangeSet, Vec<u8>)> {
    let mut outputs: Vec<(RangeSet, Vec<u8>)> = Vec::new();
    for (value, members) in &classes.0 {
        let mut content = value_bytes(value);
        if content.is_empty() {
            continue;
        }
        if !content.ends_with(b"\n") {
            content.push(b'\n');
        }
        match outputs.iter_mut().find(|(_, c)| *c == content) {
            Some((all, _)) => *all = all.union(members),
            None => outputs.push((members.clone(), content)),
        }
    }
    outputs.sort_by_cached_key(|(members, _)| labels.clush_key(members));
    outputs
}

/// `stat` classes, refined by the contents' digests when `contents` has them, in clush's order.
fn stat_classes<Tr: Transport>(
    labels: &Labels<'_, '_, Tr>,
    stats: &Classes<StatKey>,
    contents: Option<&Classes<Digest>>,
) -> Vec<(RangeSet, StatKey, Option<Digest>)> {
    let mut classes = Vec::new();
    for (key, members) in &stats.0 {
        match contents {
            None => classes.push((members.clone(), *key, None)),
            Some(digests) => {
                for (digest, holders) in &digests.0 {
                    let both = members.intersection(holders);
                    if !both.is_empty() {
                        classes.push((both, *key, Some(*digest)));
                    }
                }
            }
        }
    }
    classes.sort_by_cached_key(|(members, _, _)| labels.clush_key(members));
    classes
}

fn stat_line(key: &StatKey, digest: Option<&Digest>) -> String {
    match digest {
        Some(digest) => format!("{} sha256:{digest}\n", key.ls_line()),
        None => format!("{}\n", key.ls_line()),
    }
}

pub(super) fn text<Tr: Transport>(
    out: &mut dyn Write,
    group: &Group<'_, Tr>,
    outcome: &Outcome,
    contents: Option<&Outcome>,
) -> Result<(), Failed> {
    let Some(result) = outcome.data() else {
        return Ok(());
    };
    let stat = outcome.kind() == crate::ops::OpKind::Fstat;
    let all = succeeded(group);
    let labels = Labels::new(group);
    let AggrSpec::Builtin(builtin) = result.spec() else {
        if let Some(stats) = stat_result(result)? {
            let digests =
                contents.and_then(|c| c.data()).map(decoded::<Classes<Digest>>).transpose()?.flatten();
            for (members, key, digest) in stat_classes(&labels, &stats, digests.as_ref()) {
                block(out, &labels, &members, stat_line(&key, digest.as_ref()).as_bytes())?;
            }
        } else if let Some(partial) = decoded::<ForeignPartial>(result)? {
            block(out, &labels, &partial.members, &partial.data)?;
        }
        return Ok(());
    };
    match builtin {
        Builtin::Classes => {
            if let Some(classes) = decoded::<Classes<Value>>(result)? {
                for (members, content) in output_classes(&labels, &classes) {
                    block(out, &labels, &members, &content)?;
                }
            }
        }
        Builtin::Concat => {
            for (member, value) in decoded::<Concatenation>(result)?.into_iter().flat_map(|c| c.0) {
                block(out, &labels, &RangeSet::from_values([member]), &value_bytes(&value))?;
            }
        }
        Builtin::Checksum => {
            if let Some(classes) = decoded::<Classes<Digest>>(result)? {
                let mut classes: Vec<&(Digest, RangeSet)> = classes.0.iter().collect();
                classes.sort_by_cached_key(|(_, members)| labels.clush_key(members));
                for (digest, members) in classes {
                    block(out, &labels, members, format!("{digest}\n").as_bytes())?;
                }
            }
        }
        Builtin::Sum => {
            if let Some(Sums(sums)) = decoded(result)? {
                block(out, &labels, &all, format!("sum: {}\n", numbers(&sums)).as_bytes())?;
            }
        }
        Builtin::Average => {
            if let Some(averages) = decoded::<Averages>(result)? {
                block(out, &labels, &all, format!("average: {}\n", numbers(&averages.means())).as_bytes())?;
            }
        }
        Builtin::Min | Builtin::Max => {
            if let Some(Extremes(columns)) = decoded(result)? {
                let mut content = String::new();
                for (i, column) in columns.iter().enumerate() {
                    if let Some(extreme) = column {
                        content += &format!(
                            "{} {}: {} at {}\n",
                            builtin.name(),
                            column_name(stat, i),
                            extreme.value,
                            labels.of(&extreme.members)
                        );
                    }
                }
                block(out, &labels, &all, content.as_bytes())?;
            }
        }
        Builtin::Equal => match decoded::<Agreement>(result)? {
            Some(Agreement::Same(value)) => block(out, &labels, &all, &value_bytes(&value))?,
            Some(Agreement::Differ) => block(out, &labels, &all, b"(the members differ)\n")?,
            None => {}
        },
        Builtin::Zero => {
            if let Some(Succeeded(count)) = decoded(result)? {
                block(out, &labels, &all, format!("{count} members succeeded\n").as_bytes())?;
            }
        }
    }
    Ok(())
}

/// The classes of `canopy group stat`'s own aggregation, when `result` is one.
fn stat_result(result: &AggrResult) -> std::io::Result<Option<Classes<StatKey>>> {
    match result.spec() {
        AggrSpec::Registered { name, .. } if name == stat::AGGREGATION => {
            Ok(decoded::<Classes<StatKey>>(result)?)
        }
        _ => Ok(None),
    }
}

/// `canopy group: HOSTS:PATH: error` lines for files that did not open, and silent hosts.
pub(super) fn open_failures(err: &mut dyn Write, report: &OpenReport, timeout: f64) -> std::io::Result<()> {
    for (path, errno, hosts) in report.grouped() {
        writeln!(err, "canopy group: {hosts}:{}: {errno}", path.display())?;
    }
    if !report.missing.is_empty() {
        writeln!(err, "canopy group: no answer from {} within {timeout}s", report.missing)?;
    }
    Ok(())
}

/// `canopy group: MEMBERS: error` lines for members that failed the operation.
pub(super) fn op_failures<Tr: Transport>(
    err: &mut dyn Write,
    group: &Group<'_, Tr>,
    outcome: &Outcome,
    timeout: f64,
) -> std::io::Result<()> {
    let labels = Labels::new(group);
    for failure in outcome.failures() {
        match failure.status {
            MemberStatus::Unreachable => {
                writeln!(err, "canopy group: no answer from {} within {timeout}s", failure.hosts)?
            }
            status => writeln!(err, "canopy group: {}: {status}", labels.of(&failure.members))?,
        }
    }
    Ok(())
}

fn value_json(value: &Value) -> Json {
    match value {
        Value::Int(v) => json!(v),
        Value::Bytes(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => json!({ "text": text }),
            Err(_) => json!({ "hex": hex(bytes) }),
        },
        Value::Stat(st) => json!({
            "size": st.size, "mode": st.mode, "uid": st.uid, "gid": st.gid, "nlink": st.nlink,
            "mtime": st.mtime, "mtime_nsec": st.mtime_nsec,
        }),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn number_json(value: Option<Decimal>) -> Json {
    value.map_or(Json::Null, |d| json!(d.to_f64()))
}

fn members_json<Tr: Transport>(labels: &Labels<'_, '_, Tr>, members: &RangeSet) -> Json {
    json!({
        "members": members.folded(Some(3)),
        "count": members.len(),
        "hosts": labels.group.hosts_of(members).to_string(),
        "label": labels.of(members),
    })
}

fn with(mut base: Json, extra: Json) -> Json {
    if let (Some(base), Json::Object(extra)) = (base.as_object_mut(), extra) {
        base.extend(extra);
    }
    base
}

fn result_json<Tr: Transport>(
    labels: &Labels<'_, '_, Tr>,
    result: &AggrResult,
    contents: Option<&Outcome>,
) -> Result<Json, Failed> {
    let failed = |e: crate::aggr::AggrError| Failed::Run(e.to_string());
    if let Some(stats) = stat_result(result)? {
        let digests = contents.and_then(|c| c.data()).map(decoded::<Classes<Digest>>).transpose()?.flatten();
        let classes = stat_classes(labels, &stats, digests.as_ref());
        return Ok(json!(
            classes
                .iter()
                .map(|(members, key, digest)| {
                    let mut stat = json!({ "stat": key.json() });
                    if let Some(digest) = digest {
                        stat["sha256"] = json!(digest.to_string());
                    }
                    with(members_json(labels, members), stat)
                })
                .collect::<Vec<_>>()
        ));
    }
    let AggrSpec::Builtin(builtin) = result.spec() else {
        return Ok(match result.decode::<ForeignPartial>().map_err(failed)? {
            Some(partial) => {
                with(members_json(labels, &partial.members), json!({ "hex": hex(&partial.data) }))
            }
            None => Json::Null,
        });
    };
    Ok(match builtin {
        Builtin::Classes => json!(result.decode::<Classes<Value>>().map_err(failed)?.map(|classes| {
            let mut classes: Vec<&(Value, RangeSet)> = classes.0.iter().collect();
            classes.sort_by_cached_key(|(_, members)| labels.clush_key(members));
            classes
                .into_iter()
                .map(|(value, members)| {
                    with(members_json(labels, members), json!({ "value": value_json(value) }))
                })
                .collect::<Vec<_>>()
        })),
        Builtin::Concat => json!(result.decode::<Concatenation>().map_err(failed)?.map(|concat| {
            concat
                .0
                .iter()
                .map(|(member, value)| {
                    let file = &labels.group.gfiles()[*member as usize];
                    json!({
                        "member": member, "host": file.host, "path": file.path.to_string_lossy(),
                        "value": value_json(value),
                    })
                })
                .collect::<Vec<_>>()
        })),
        Builtin::Checksum => json!(result.decode::<Classes<Digest>>().map_err(failed)?.map(|classes| {
            let mut classes: Vec<&(Digest, RangeSet)> = classes.0.iter().collect();
            classes.sort_by_cached_key(|(_, members)| labels.clush_key(members));
            classes
                .into_iter()
                .map(|(digest, members)| {
                    with(members_json(labels, members), json!({ "sha256": digest.to_string() }))
                })
                .collect::<Vec<_>>()
        })),
        Builtin::Sum => json!(
            result
                .decode::<Sums>()
                .map_err(failed)?
                .map(|s| { s.0.into_iter().map(number_json).collect::<Vec<_>>() })
        ),
        Builtin::Average => json!(result.decode::<Averages>().map_err(failed)?.map(|a| {
            a.0.iter()
                .map(|c| {
                    c.map_or(
                        Json::Null,
                        |c| json!({ "mean": c.mean().to_f64(), "sum": c.sum.to_f64(), "count": c.count }),
                    )
                })
                .collect::<Vec<_>>()
        })),
        Builtin::Min | Builtin::Max => json!(result.decode::<Extremes>().map_err(failed)?.map(|e| {
            e.0.iter()
                .map(|c| {
                    c.as_ref().map_or(Json::Null, |c| {
                        with(members_json(labels, &c.members), json!({ "value": c.value.to_f64() }))
                    })
                })
                .collect::<Vec<_>>()
        })),
        Builtin::Equal => match result.decode::<Agreement>().map_err(failed)? {
            Some(Agreement::Same(value)) => json!({ "equal": true, "value": value_json(&value) }),
            Some(Agreement::Differ) => json!({ "equal": false }),
            None => Json::Null,
        },
        Builtin::Zero => json!(result.decode::<Succeeded>().map_err(failed)?.map(|s| s.0)),
    })
}

pub(super) fn json<Tr: Transport>(
    args: &GroupArgs,
    group: &Group<'_, Tr>,
    report: &OpenReport,
    outcome: &Outcome,
    contents: Option<&Outcome>,
) -> Result<Json, Failed> {
    let labels = Labels::new(group);
    let mut failures: Vec<Json> = report
        .grouped()
        .into_iter()
        .map(|(path, errno, hosts)| {
            json!({
                "stage": "open", "hosts": hosts.to_string(), "path": path.to_string_lossy(),
                "error": errno.to_string(), "errno": errno.0,
            })
        })
        .collect();
    for failure in outcome.failures() {
        let (error, errno) = match failure.status {
            MemberStatus::Failed(errno) => (errno.to_string(), json!(errno.0)),
            other => (other.to_string(), Json::Null),
        };
        failures.push(with(
            members_json(&labels, &failure.members),
            json!({ "stage": format!("{:?}", outcome.kind()).to_lowercase(), "error": error, "errno": errno }),
        ));
    }
    let operation = match args.op {
        Operation::Read => "read",
        Operation::Stat => "stat",
        Operation::Checksum => "checksum",
    };
    let all = RangeSet::from_span(0, group.gsize().max(1) - 1);
    Ok(json!({
        "operation": operation,
        "path": args.path,
        "members": group.gsize(),
        "hosts": if group.gsize() > 0 { group.hosts_of(&all).to_string() } else { String::new() },
        "status": outcome.status_value().ok().flatten(),
        "aggregation": outcome.data().map(|d| d.spec().to_string()),
        "result": match outcome.data() {
            Some(data) => result_json(&labels, data, contents)?,
            None => Json::Null,
        },
        "failures": failures,
        "missing": outcome.missing().to_string(),
        "not_opened": report.missing.to_string(),
    }))
}
