//! The monitor's pages, rendered on the server and free of JavaScript: cards with the cluster's (or one
//! host's) vital signs in human units and an SVG chart of each over the history kept, a table of the hosts
//! (or, over a large cluster, of who holds the extremes), refreshed by the browser every interval. Sized
//! for a laptop screen (at most 1,240 px wide).

use super::collection::{Collection, Data, HostStat};
use super::collectors::{Sample, Series};
use super::vitals::{Point, Vitals};
use crate::units;
use canopy_group::cli::stat::local_time;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;

/// HTML-escapes text.
fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// RFC 3986's unreserved characters stay as they are in a link; everything else is `%`-encoded.
const LINK_ESCAPED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// `%`-encodes a host name for a link.
pub(super) fn url(text: &str) -> String {
    utf8_percent_encode(text, LINK_ESCAPED).to_string()
}

fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

fn rate(bytes_per_second: f64) -> String {
    format!("{}/s", units::bytes(bytes_per_second))
}

fn date(seconds: f64) -> String {
    local_time(seconds as i64, "%Y-%m-%d %H:%M")
}

/// One chart: what it shows of a point's vitals, and how its values read.
struct Chart {
    title: &'static str,
    value: fn(&Vitals) -> Option<f64>,
    show: fn(f64) -> String,
    /// A second line under the value (totals, the other direction of a rate).
    detail: fn(&Vitals) -> Option<String>,
}

const CHARTS: [Chart; 7] = [
    Chart { title: "CPU busy", value: |v| v.cpu_busy, show: percent, detail: |_| None },
    Chart {
        title: "Load (1 min)",
        value: |v| v.load1,
        show: |l| format!("{l:.2}"),
        detail: |_| Some("per host".into()),
    },
    Chart {
        title: "Memory used",
        value: |v| v.mem_used,
        show: |b| units::bytes(b),
        detail: |v| {
            v.mem_used
                .zip(v.mem_total)
                .map(|(u, t)| format!("{} of {}", percent(u / t.max(1.0)), units::bytes(t)))
        },
    },
    Chart {
        title: "Network in",
        value: |v| v.net.map(|n| n.0),
        show: rate,
        detail: |v| v.net.map(|n| format!("out {}", rate(n.1))),
    },
    Chart {
        title: "Disk read",
        value: |v| v.disk.map(|d| d.0),
        show: rate,
        detail: |v| v.disk.map(|d| format!("write {}", rate(d.1))),
    },
    Chart {
        title: "File systems used",
        value: |v| v.fs.map(|(used, size)| used / size.max(1.0)),
        show: percent,
        detail: |v| v.fs.map(|(used, size)| format!("{} of {}", units::bytes(used), units::bytes(size))),
    },
    Chart {
        title: "Uptime",
        value: |v| v.uptime,
        show: units::duration,
        detail: |v| v.boot_time.map(|b| format!("booted {}", date(b))),
    },
];

const WIDTH: f64 = 270.0;
const HEIGHT: f64 = 64.0;

/// A small line chart of `values` (seconds since the epoch, value) over `[start, end]`, with the largest
/// value and the time span written on it.
fn svg(values: &[(f64, f64)], start: f64, end: f64, show: fn(f64) -> String) -> String {
    let top = values.iter().map(|v| v.1).fold(0.0_f64, f64::max);
    let scale = if top > 0.0 { top * 1.1 } else { 1.0 };
    let x = |t: f64| (t - start) / (end - start).max(1.0) * WIDTH;
    let y = |v: f64| HEIGHT - 4.0 - v / scale * (HEIGHT - 18.0);
    let line: Vec<String> = values.iter().map(|&(t, v)| format!("{:.1},{:.1}", x(t), y(v))).collect();
    let mut out = format!(
        "<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\">"
    );
    let _ = write!(out, "<line x1=\"0\" y1=\"{0}\" x2=\"{WIDTH}\" y2=\"{0}\" class=\"axis\"/>", HEIGHT - 4.0);
    if let (Some(first), Some(last)) = (values.first(), values.last()) {
        let area = format!(
            "{:.1},{} {} {:.1},{}",
            x(first.0),
            HEIGHT - 4.0,
            line.join(" "),
            x(last.0),
            HEIGHT - 4.0
        );
        let _ = write!(
            out,
            "<polygon points=\"{area}\" class=\"area\"/><polyline points=\"{}\" class=\"line\"/>",
            line.join(" ")
        );
    }
    let _ = write!(
        out,
        "<text x=\"2\" y=\"10\" class=\"label\">max {}</text><text x=\"{WIDTH}\" y=\"10\" class=\"label end\">last {}</text></svg>",
        esc(&show(top)),
        units::duration(end - start)
    );
    out
}

const STYLE: &str = "
*{box-sizing:border-box}
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;padding:16px 20px;max-width:1240px;color:#1d2733;background:#f5f7fa}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:20px 0 8px}
header{display:flex;flex-wrap:wrap;gap:8px 24px;align-items:baseline;margin-bottom:14px}
header .status{color:#4a5866}.down{color:#b3261e;font-weight:600}
a{color:#1658a8;text-decoration:none}a:hover{text-decoration:underline}
.cards{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:12px}
.card{background:#fff;border:1px solid #dde3ea;border-radius:8px;padding:10px 12px;min-width:0}
.card h3{font-size:13px;font-weight:600;color:#4a5866;margin:0}
.card .value{font-size:22px;font-weight:600;margin:2px 0 0}
.card .detail{font-size:12px;color:#4a5866;min-height:17px}
.chart{display:block;width:100%;height:auto;margin-top:4px}
.chart .axis{stroke:#c9d2dc;stroke-width:1}.chart .line{fill:none;stroke:#1f6feb;stroke-width:1.6}
.chart .area{fill:#1f6feb;fill-opacity:.12}.chart .label{font-size:10px;fill:#6b7785}.chart .end{text-anchor:end}
table{width:100%;border-collapse:collapse;background:#fff;border:1px solid #dde3ea;table-layout:fixed}
th,td{padding:4px 8px;border-bottom:1px solid #eef1f4;text-align:right;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
th{font-size:12px;color:#4a5866;background:#f0f3f7}th:first-child,td:first-child{text-align:left}
td.hosts{text-align:left}
form{display:inline}input{font:inherit;padding:2px 6px;width:14em}
footer{margin-top:16px;font-size:12px;color:#6b7785}
";

/// What a page is about.
pub enum Subject<'a> {
    /// The cluster.
    Cluster,
    /// One host: its name and samples.
    Host(&'a str, &'a [Sample]),
}

/// A page: the cluster's (or one host's) cards over `points`, and the tables under them (`hosts`: each
/// host's latest vitals, when hosts keep their own series).
pub fn render(
    subject: &Subject<'_>,
    collection: &Collection,
    points: &[(f64, Vitals)],
    window: f64,
    refresh: f64,
    hosts: Option<&BTreeMap<String, Vitals>>,
) -> String {
    let title = match subject {
        Subject::Cluster => "cluster".to_owned(),
        Subject::Host(name, _) => (*name).to_owned(),
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"{}\">\
         <meta name=\"viewport\" content=\"width=device-width\"><link rel=\"icon\" href=\"data:,\">\
         <title>canopy monitor: {}</title><style>{STYLE}</style></head><body>",
        refresh.max(2.0).round(),
        esc(&title)
    );
    let down = if collection.down.is_empty() {
        "none down".to_owned()
    } else {
        format!(
            "<span class=\"down\">{} down: {}</span>",
            collection.down.len(),
            esc(&collection.down.to_string())
        )
    };
    let _ = write!(
        out,
        "<header><h1>canopy monitor: {}</h1><span class=\"status\">{} hosts up ({}), {down}; updated {}</span>\
         <form action=\"/host\"><input name=\"name\" placeholder=\"host name\" aria-label=\"host name\"></form>\
         {}</header>",
        esc(&title),
        collection.up.len(),
        esc(&collection.up.to_string()),
        clock(collection.at),
        if matches!(subject, Subject::Host(..)) { "<a href=\"/\">cluster</a>" } else { "" }
    );
    out.push_str("<section class=\"cards\">");
    // The charts span the history kept, or what there is of it yet.
    let end = collection.at;
    let start = points.first().map_or(end - window, |(t, _)| t.max(end - window)).min(end - 1.0);
    let latest = points.last().map(|p| p.1).unwrap_or_default();
    for chart in &CHARTS {
        let values: Vec<(f64, f64)> =
            points.iter().filter_map(|(t, v)| Some((*t, (chart.value)(v)?))).collect();
        let value = (chart.value)(&latest).map_or_else(|| "…".to_owned(), chart.show);
        let detail = (chart.detail)(&latest).unwrap_or_default();
        let _ = write!(
            out,
            "<div class=\"card\"><h3>{}</h3><div class=\"value\">{}</div><div class=\"detail\">{}</div>{}</div>",
            chart.title,
            esc(&value),
            esc(&detail),
            svg(&values, start, end, chart.show)
        );
    }
    let _ = write!(
        out,
        "<div class=\"card\"><h3>Hosts</h3><div class=\"value\">{} up</div><div class=\"detail\">{} down</div></div>",
        collection.up.len(),
        collection.down.len()
    );
    out.push_str("</section>");
    match subject {
        Subject::Cluster => match &collection.data {
            Data::PerHost(_) => {}
            Data::Cluster(series) => extremes(&mut out, series),
        },
        Subject::Host(_, samples) => file_systems(&mut out, samples),
    }
    if let Some(hosts) = hosts {
        out.push_str(
            "<h2>Hosts</h2><table><thead><tr><th>host</th><th>CPU</th><th>load</th><th>memory</th>\
             <th>net in</th><th>net out</th><th>disk read</th><th>disk write</th><th>file systems</th><th>up</th>\
             </tr></thead><tbody>",
        );
        let or_dots = |v: Option<String>| v.unwrap_or_else(|| "…".into());
        for (host, v) in hosts {
            let _ = write!(
                out,
                "<tr><td><a href=\"/host/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                url(host),
                esc(host),
                or_dots(v.cpu_busy.map(percent)),
                or_dots(v.load1.map(|l| format!("{l:.2}"))),
                or_dots(v.mem_used.zip(v.mem_total).map(|(u, t)| percent(u / t.max(1.0)))),
                or_dots(v.net.map(|n| rate(n.0))),
                or_dots(v.net.map(|n| rate(n.1))),
                or_dots(v.disk.map(|d| rate(d.0))),
                or_dots(v.disk.map(|d| rate(d.1))),
                or_dots(v.fs.map(|(u, s)| percent(u / s.max(1.0)))),
                or_dots(v.uptime.map(units::duration)),
            );
        }
        out.push_str("</tbody></table>");
    }
    out.push_str(
        "<footer>node_exporter's series at <a href=\"/metrics\">/metrics</a>, JSON at <a href=\"/api/cluster\">/api/cluster</a>. \
         Rates are per second between the last two collections.</footer></body></html>",
    );
    out
}

fn clock(seconds: f64) -> String {
    local_time(seconds as i64, "%H:%M:%S")
}

/// Over a large cluster: who holds the extremes of the series people look for first.
fn extremes(out: &mut String, series: &BTreeMap<Series, HostStat>) {
    out.push_str(
        "<h2>Extremes</h2><table><thead><tr><th>series</th><th>min</th><th class=\"hosts\">on</th>\
         <th>max</th><th class=\"hosts\">on</th><th>mean</th></tr></thead><tbody>",
    );
    let shown = |name: &str| -> Option<fn(f64) -> String> {
        match name {
            "node_load1" => Some(|l| format!("{l:.2}")),
            "node_memory_MemAvailable_bytes" | "node_filesystem_avail_bytes" => Some(units::bytes),
            "node_procs_running" => Some(|n| format!("{n:.0}")),
            _ => None,
        }
    };
    for (s, stat) in series {
        let Some(show) = shown(&s.name) else { continue };
        let labels: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let name =
            if labels.is_empty() { s.name.clone() } else { format!("{} {}", s.name, labels.join(" ")) };
        let _ = write!(
            out,
            "<tr><td title=\"{0}\">{0}</td><td>{1}</td><td class=\"hosts\">{2}</td><td>{3}</td><td class=\"hosts\">{4}</td><td>{5}</td></tr>",
            esc(&name),
            esc(&show(stat.min.0.to_f64())),
            esc(&stat.min.1.to_string()),
            esc(&show(stat.max.0.to_f64())),
            esc(&stat.max.1.to_string()),
            esc(&show(stat.mean().to_f64())),
        );
    }
    out.push_str("</tbody></table>");
}

/// One host's file systems.
fn file_systems(out: &mut String, samples: &[Sample]) {
    out.push_str(
        "<h2>File systems</h2><table><thead><tr><th>mount point</th><th>type</th><th>size</th><th>used</th>\
         <th>available</th><th>use</th></tr></thead><tbody>",
    );
    let value = |name: &str, mount_point: &str| {
        samples
            .iter()
            .find(|(s, _)| s.name == name && s.label("mountpoint") == Some(mount_point))
            .map(|(_, v)| v.to_f64())
    };
    for (s, _) in samples.iter().filter(|(s, _)| s.name == "node_filesystem_size_bytes") {
        let mount_point = s.label("mountpoint").unwrap_or_default();
        let (Some(size), Some(avail)) = (
            value("node_filesystem_size_bytes", mount_point),
            value("node_filesystem_avail_bytes", mount_point),
        ) else {
            continue;
        };
        let _ = write!(
            out,
            "<tr><td title=\"{0}\">{0}</td><td>{1}</td><td>{2}</td><td>{3}</td><td>{4}</td><td>{5}</td></tr>",
            esc(mount_point),
            esc(s.label("fstype").unwrap_or_default()),
            units::bytes(size),
            units::bytes(size - avail),
            units::bytes(avail),
            percent((size - avail) / size.max(1.0)),
        );
    }
    out.push_str("</tbody></table>");
}

/// Points of one subject: the cluster's or a host's vitals over time.
pub fn series_of(points: &VecDeque<Point>, host: Option<&str>) -> Vec<(f64, Vitals)> {
    points
        .iter()
        .filter_map(|p| match host {
            None => Some((p.at, p.cluster)),
            Some(host) => p.hosts.get(host).map(|v| (p.at, *v)),
        })
        .collect()
}
