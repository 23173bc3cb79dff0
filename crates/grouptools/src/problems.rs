//! Failures across hosts, grouped: one line per distinct problem with the set of hosts that had it, the
//! way `clush -b` folds identical output.

use canopy_group::{Group, GroupError, OpenReport, Outcome, Transport};
use canopy_nodeset::{NodeSet, RangeSet};
use std::io::Write;

/// Problems met so far, each with the hosts it happened on, in the order first seen.
#[derive(Debug, Default)]
pub struct Problems {
    entries: Vec<(String, NodeSet)>,
    /// Names the file in messages instead of the member's path (a temporary file is shown as its target).
    label: Option<String>,
}

impl Problems {
    /// Problems about one file, named `label` whatever path the members have.
    pub fn about(label: &str) -> Problems {
        Problems { entries: Vec::new(), label: Some(label.to_owned()) }
    }

    /// Records that `message` happened on `hosts`.
    pub fn add(&mut self, hosts: &NodeSet, message: String) {
        if hosts.is_empty() {
            return;
        }
        match self.entries.iter_mut().find(|(m, _)| *m == message) {
            Some((_, set)) => *set = set.union(hosts),
            None => self.entries.push((message, hosts.clone())),
        }
    }

    /// Records what gopen could not open and the hosts that did not answer it.
    pub fn add_open(&mut self, report: &OpenReport, what: &str) {
        for (path, errno, hosts) in report.grouped() {
            let path = self.label.clone().unwrap_or_else(|| path.display().to_string());
            self.add(&hosts, format!("{path}: {what}: {errno}"));
        }
        self.add(&report.missing, format!("{what}: no answer (host down or too slow)"));
    }

    /// Records the members an operation failed on and returns them (to drop from later steps).
    pub fn add_outcome<T: Transport>(
        &mut self,
        group: &Group<'_, T>,
        outcome: &Outcome,
        what: &str,
    ) -> RangeSet {
        let mut failed = RangeSet::new();
        for failure in outcome.failures() {
            let path = self.label.clone().unwrap_or_else(|| {
                failure
                    .members
                    .values()
                    .next()
                    .map(|m| group.gfiles()[m as usize].path.display().to_string())
                    .unwrap_or_default()
            });
            self.add(&failure.hosts, format!("{path}: {what}: {}", failure.status));
            failed = failed.union(&failure.members);
        }
        failed
    }

    /// Records the failures of an operation's result and returns its outcome (if any) and the members that
    /// failed; `Err` when the operation did not run at all.
    pub fn check<T: Transport>(
        &mut self,
        group: &Group<'_, T>,
        result: Result<Outcome, GroupError>,
        what: &str,
    ) -> Result<(Outcome, RangeSet), GroupError> {
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(GroupError::Members(outcome)) => *outcome,
            Err(other) => return Err(other),
        };
        let failed = self.add_outcome(group, &outcome, what);
        Ok((outcome, failed))
    }

    /// The file the problems are about ("" when none was named).
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or("")
    }

    /// True when nothing went wrong.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The problems as `(message, hosts)`.
    pub fn entries(&self) -> &[(String, NodeSet)] {
        &self.entries
    }

    /// Prints `TOOL: HOSTS: MESSAGE` per problem.
    pub fn print(&self, tool: &str, err: &mut dyn Write) -> std::io::Result<()> {
        for (message, hosts) in &self.entries {
            writeln!(err, "canopy {tool}: {hosts}: {message}")?;
        }
        Ok(())
    }

    /// The problems as JSON: `[{"hosts": "host[1-3]", "count": 3, "error": "..."}]`.
    pub fn json(&self) -> serde_json::Value {
        self.entries
            .iter()
            .map(|(message, hosts)| {
                serde_json::json!({"hosts": hosts.to_string(), "count": hosts.len(), "error": message})
            })
            .collect()
    }
}
