//! Turning per-client timings into mdtest's `SUMMARY rate` table, plus the probe histogram,
//! partition balance and group-commit figures.

use std::fmt::Write;

use serde::Serialize;

use super::{Balance, BenchPlan, RankReport, ServerCounters};
use crate::client::stats::ProbeHistogram;

#[derive(Clone, Debug, Serialize)]
pub struct PhaseSummary {
    pub operation: &'static str,
    /// Operations per second in each iteration: P×K / slowest client's seconds.
    pub rates: Vec<f64>,
    pub max: f64,
    pub min: f64,
    pub mean: f64,
    /// Population standard deviation over iterations, as mdtest prints it.
    pub std_dev: f64,
}

impl PhaseSummary {
    fn new(operation: &'static str, rates: Vec<f64>) -> Self {
        let n = rates.len().max(1) as f64;
        let mean = rates.iter().sum::<f64>() / n;
        let variance = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
        Self {
            operation,
            max: rates.iter().copied().fold(f64::MIN, f64::max),
            min: rates.iter().copied().fold(f64::MAX, f64::min),
            mean,
            std_dev: variance.sqrt(),
            rates,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub target: String,
    pub clients: usize,
    pub files_per_client: usize,
    pub iterations: usize,
    pub phases: Vec<PhaseSummary>,
    pub probes: Option<ProbeHistogram>,
    pub balance: Vec<Balance>,
    /// What the servers did during the run.
    pub servers: Option<ServerCounters>,
    /// CPU time of this process (all client threads) during the run.
    pub client_cpu_seconds: f64,
    pub wall_seconds: f64,
    /// Cores of this machine.
    pub cores: usize,
}

impl BenchReport {
    pub fn new(
        target: String,
        plan: BenchPlan,
        reports: &[RankReport],
        servers: Option<ServerCounters>,
        wall_seconds: f64,
    ) -> Self {
        let clients = reports.len();
        let operations = (clients * plan.files_per_client) as f64;
        let phases = plan
            .phases()
            .iter()
            .map(|&phase| {
                let slot = phase.slot();
                let rates = (0..plan.iterations)
                    .map(|iteration| {
                        let slowest = reports.iter().map(|r| r.seconds[iteration][slot]).fold(0.0, f64::max);
                        operations / slowest.max(1e-9)
                    })
                    .collect();
                PhaseSummary::new(phase.label(), rates)
            })
            .collect();
        let mut probes: Option<ProbeHistogram> = None;
        for histogram in reports.iter().filter_map(|r| r.probes.as_ref()) {
            probes.get_or_insert_with(ProbeHistogram::default).merge(histogram);
        }
        Self {
            target,
            clients,
            files_per_client: plan.files_per_client,
            iterations: plan.iterations,
            phases,
            probes,
            balance: reports.iter().flat_map(|r| r.balance.clone()).collect(),
            servers,
            client_cpu_seconds: 0.0,
            wall_seconds,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }

    /// The report as mdtest prints its summary, with the distributed directory's extras.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "-- {}: {} clients x {} files, {} iterations --",
            self.target, self.clients, self.files_per_client, self.iterations
        );
        let _ = writeln!(out, "SUMMARY rate: (of {} iterations)", self.iterations);
        let _ =
            writeln!(out, "   {:<24}{:>15}{:>15}{:>15}{:>15}", "Operation", "Max", "Min", "Mean", "Std Dev");
        let _ =
            writeln!(out, "   {:<24}{:>15}{:>15}{:>15}{:>15}", "---------", "---", "---", "----", "-------");
        for phase in &self.phases {
            let _ = writeln!(
                out,
                "   {:<24}{:>15.3}{:>15.3}{:>15.3}{:>15.3}",
                phase.operation, phase.max, phase.min, phase.mean, phase.std_dev
            );
        }
        if let Some(probes) = &self.probes {
            let total = probes.total().max(1) as f64;
            let buckets: Vec<String> = probes
                .counts
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| {
                    let label = if i + 1 == probes.counts.len() {
                        format!("{}+", i + 1)
                    } else {
                        (i + 1).to_string()
                    };
                    format!("{label}: {n} ({:.3}%)", *n as f64 * 100.0 / total)
                })
                .collect();
            let _ = writeln!(
                out,
                "Probes per operation: {}; bitmap refreshes: {}",
                buckets.join(", "),
                probes.refreshes
            );
        }
        for (iteration, balance) in self.balance.iter().enumerate() {
            let ratio = balance.max() as f64 / balance.min().max(1) as f64;
            let _ = writeln!(
                out,
                "Partition balance after creation, iteration {}: {} active, entries min {} max {} \
                 (max/min {ratio:.2}){}: {:?}",
                iteration + 1,
                balance.entries.len(),
                balance.min(),
                balance.max(),
                if balance.splitting > 0 {
                    format!(", {} still splitting", balance.splitting)
                } else {
                    String::new()
                },
                balance.entries
            );
        }
        if let Some(servers) = &self.servers {
            let per_sync = servers.requests as f64 / servers.commits.max(1) as f64;
            let sync_ms = servers.sync_seconds * 1e3 / servers.commits.max(1) as f64;
            let syncing = servers.sync_seconds / (self.wall_seconds * servers.servers.max(1) as f64);
            let _ = writeln!(
                out,
                "Group commit: {} requests in {} journal syncs ({per_sync:.1} per sync, {sync_ms:.2} ms \
                 each; each writer syncing {:.0}% of the run)",
                servers.requests,
                servers.commits,
                syncing * 100.0
            );
            let busy = (servers.cpu_seconds + self.client_cpu_seconds) / self.wall_seconds;
            let _ = writeln!(
                out,
                "CPU: servers {:.1} s + clients {:.1} s in {:.1} s = {busy:.2} of {} cores busy",
                servers.cpu_seconds, self.client_cpu_seconds, self.wall_seconds, self.cores
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_uses_the_slowest_client_and_mdtest_statistics() {
        let plan = BenchPlan {
            files_per_client: 100,
            iterations: 2,
            create_only: false,
            links: false,
            layout: super::super::Layout::default(),
        };
        let rank = |seconds: Vec<[f64; 5]>| RankReport { seconds, ..RankReport::default() };
        // Two clients: the slower one decides each phase's rate (no link phases: slots 2, 3 unused).
        let reports = [
            rank(vec![[1.0, 0.5, 0.0, 0.0, 0.25], [2.0, 0.5, 0.0, 0.0, 0.5]]),
            rank(vec![[0.5, 1.0, 0.0, 0.0, 0.25], [1.0, 0.25, 0.0, 0.0, 0.5]]),
        ];
        let report = BenchReport::new("t".into(), plan, &reports, None, 1.0);
        let creation = &report.phases[0];
        assert_eq!(creation.rates, [200.0, 100.0]);
        assert_eq!((creation.max, creation.min, creation.mean), (200.0, 100.0, 150.0));
        assert_eq!(creation.std_dev, 50.0);
        assert_eq!(report.phases[1].rates, [200.0, 400.0]);
        assert_eq!(report.phases[2].rates, [800.0, 400.0]);
        let text = report.render();
        assert!(text.contains("SUMMARY rate: (of 2 iterations)"));
        assert!(
            text.contains(
                "   File creation                   200.000        100.000        150.000         50.000"
            ),
            "{text}"
        );
    }
}
