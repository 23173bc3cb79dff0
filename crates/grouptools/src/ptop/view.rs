//! Showing frames: text (batch and terminal), JSON, and the refreshing terminal view with its keys.

use super::procs::{Column, CommandGroup, Process};
use super::{Frame, Grouping, PtopArgs, Sampler, SortKey};
use crate::units::compact_bytes as bytes;
use canopy_group::Transport;
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyModifiers};
use crossterm::{cursor, execute, terminal};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::time::{Duration, Instant};

/// User names by uid, looked up once.
#[derive(Default)]
pub struct Users(RefCell<HashMap<u32, String>>);

impl Users {
    fn name(&self, uid: u32) -> String {
        self.0
            .borrow_mut()
            .entry(uid)
            .or_insert_with(|| {
                canopy_util::owners::user_name(uid)
                    .map_or_else(|| uid.to_string(), |name| String::from_utf8_lossy(&name).into_owned())
            })
            .clone()
    }
}

fn percent(hundredths: u64) -> String {
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

fn place(frame: &Frame, member: u64) -> String {
    frame.places.get(&member).map_or_else(|| "?".into(), |(host, pid)| format!("{host}:{pid}"))
}

fn host(frame: &Frame, member: u64) -> &str {
    frame.places.get(&member).map_or("?", |(host, _)| host.as_str())
}

/// One frame as text: a summary line, the top processes, the group table.
pub fn text(frame: &Frame, sort: SortKey, grouping: Grouping, users: &Users, keys: Option<&str>) -> String {
    let s = &frame.summary;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ptop: {} hosts, {} processes, CPU {}%, resident {}, sorted by {}, collected in {:.0} ms",
        frame.hosts.len(),
        s.processes,
        percent(s.cpu),
        bytes(s.rss),
        if sort == SortKey::Cpu { "CPU" } else { "memory" },
        frame.latency.as_secs_f64() * 1000.0
    );
    if !frame.missing.is_empty() {
        let _ = writeln!(out, "no answer from {}", frame.missing);
    }
    if let Some(keys) = keys {
        let _ = writeln!(out, "{keys}");
    }
    let _ = writeln!(out, "\n{:<16} {:>8} {:<10} {:>7} {:>9}  COMMAND", "HOST", "PID", "USER", "%CPU", "RSS");
    let list: &[Process] = if sort == SortKey::Cpu { &s.top_cpu } else { &s.top_rss };
    for p in list {
        let _ = writeln!(
            out,
            "{:<16} {:>8} {:<10} {:>7} {:>9}  {}",
            host(frame, p.member),
            p.pid,
            users.name(p.uid),
            percent(p.cpu),
            bytes(p.rss),
            p.command
        );
    }
    let groups: Vec<(String, &CommandGroup)> = match grouping {
        Grouping::None => return out,
        Grouping::Command => s.commands.iter().map(|(c, g)| (c.clone(), g)).collect(),
        Grouping::User => {
            s.user_commands.iter().map(|((u, c), g)| (format!("{}/{c}", users.name(*u)), g)).collect()
        }
    };
    // Totals first: what a narrow terminal keeps.
    let title = if grouping == Grouping::Command { "COMMAND" } else { "USER/COMMAND" };
    let _ = writeln!(
        out,
        "\n{title:<20} {:>5} {:>7} {:>7} {:>6} {:>6} {:<18} {:>7} {:>7} WHERE",
        "PROCS", "%CPU", "RSS", "AVG%", "MAX%", "WHERE", "AVGRSS", "MAXRSS"
    );
    for (name, g) in sorted_groups(groups, sort, frame.summary.top_cpu.len().max(frame.summary.top_rss.len()))
    {
        let _ = writeln!(
            out,
            "{name:<20} {:>5} {:>7} {:>7} {:>6} {:>6} {:<18} {:>7} {:>7} {}",
            g.count,
            percent(g.cpu.total),
            bytes(g.rss.total),
            percent(g.cpu.total / g.count),
            percent(g.cpu.max),
            place(frame, g.cpu.max_member),
            bytes(g.rss.total / g.count),
            bytes(g.rss.max),
            place(frame, g.rss.max_member)
        );
    }
    out
}

/// Every line of `text` cut to `width` characters, as top cuts its lines to the terminal.
pub fn fit(text: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return text.to_owned();
    };
    text.lines().map(|line| line.chars().take(width).collect::<String>() + "\n").collect()
}

fn sorted_groups(
    mut groups: Vec<(String, &CommandGroup)>,
    sort: SortKey,
    limit: usize,
) -> Vec<(String, &CommandGroup)> {
    groups.sort_by(|a, b| {
        let key = |g: &CommandGroup| {
            if sort == SortKey::Cpu { (g.cpu.total, g.rss.total) } else { (g.rss.total, g.cpu.total) }
        };
        key(b.1).cmp(&key(a.1)).then_with(|| a.0.cmp(&b.0))
    });
    groups.truncate(limit.max(1));
    groups
}

fn column_json(frame: &Frame, column: &Column, count: u64) -> Value {
    json!({"total": column.total, "avg": column.total / count.max(1), "max": column.max, "where": place(frame, column.max_member)})
}

fn group_json(frame: &Frame, g: &CommandGroup) -> Value {
    json!({"count": g.count, "cpu_centipercent": column_json(frame, &g.cpu, g.count), "rss_bytes": column_json(frame, &g.rss, g.count)})
}

/// One frame as a JSON object. CPU figures are hundredths of a percent of one CPU.
pub fn json(frame: &Frame, users: &Users) -> Value {
    let s = &frame.summary;
    let process = |p: &Process| {
        json!({"host": host(frame, p.member), "pid": p.pid, "user": users.name(p.uid), "uid": p.uid,
               "command": p.command, "cpu_centipercent": p.cpu, "rss_bytes": p.rss})
    };
    json!({
        "hosts": frame.hosts.to_string(),
        "host_count": frame.hosts.len(),
        "missing": frame.missing.to_string(),
        "processes": s.processes,
        "cpu_centipercent": s.cpu,
        "rss_bytes": s.rss,
        "latency_ms": frame.latency.as_secs_f64() * 1000.0,
        "top_cpu": s.top_cpu.iter().map(process).collect::<Vec<_>>(),
        "top_rss": s.top_rss.iter().map(process).collect::<Vec<_>>(),
        "commands": s.commands.iter().map(|(c, g)| { let mut v = group_json(frame, g); v["command"] = json!(c); v }).collect::<Vec<_>>(),
        "user_commands": s.user_commands.iter().map(|((u, c), g)| {
            let mut v = group_json(frame, g);
            v["command"] = json!(c);
            v["user"] = json!(users.name(*u));
            v["uid"] = json!(u);
            v
        }).collect::<Vec<_>>(),
    })
}

/// The refreshing terminal view: redraws every `--delay`, reads keys in between.
pub fn interactive<T: Transport>(sampler: &mut Sampler<'_, T>, args: &PtopArgs) -> Result<bool, String> {
    let mut stdout = std::io::stdout();
    terminal::enable_raw_mode().map_err(|e| e.to_string())?;
    execute!(stdout, terminal::EnterAlternateScreen, cursor::Hide).map_err(|e| e.to_string())?;
    let result = refresh_loop(sampler, args, &mut stdout);
    let _ = execute!(stdout, cursor::Show, terminal::LeaveAlternateScreen);
    let _ = terminal::disable_raw_mode();
    result
}

fn refresh_loop<T: Transport>(
    sampler: &mut Sampler<'_, T>,
    args: &PtopArgs,
    stdout: &mut std::io::Stdout,
) -> Result<bool, String> {
    let (mut sort, mut grouping) = (args.sort, args.group);
    let delay = Duration::from_secs_f64(args.delay);
    let mut clean = true;
    let mut frames = 0;
    let mut frame = sampler.frame()?;
    loop {
        clean &= frame.missing.is_empty();
        let keys = "keys: c sort by CPU  m sort by memory  g grouping (none/command/user)  q quit";
        let screen = text(&frame, sort, grouping, &sampler.users, Some(keys));
        let (width, height) = terminal::size().map_or((80, 40), |(w, h)| (w as usize, h as usize));
        let screen = fit(&screen, Some(width));
        execute!(stdout, cursor::MoveTo(0, 0), terminal::Clear(terminal::ClearType::All))
            .map_err(|e| e.to_string())?;
        for line in screen.lines().take(height.saturating_sub(1)) {
            write!(stdout, "{line}\r\n").map_err(|e| e.to_string())?;
        }
        stdout.flush().map_err(|e| e.to_string())?;
        frames += 1;
        if args.iterations.is_some_and(|n| frames >= n) {
            return Ok(clean);
        }
        let next = Instant::now() + delay;
        let mut redraw_only = false;
        while let Some(left) = next.checked_duration_since(Instant::now()) {
            if !event::poll(left).map_err(|e| e.to_string())? {
                break;
            }
            if let Event::Key(KeyEvent { code, modifiers, .. }) = event::read().map_err(|e| e.to_string())? {
                match code {
                    KeyCode::Char('q') => return Ok(clean),
                    KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => return Ok(clean),
                    KeyCode::Char('c') => sort = SortKey::Cpu,
                    KeyCode::Char('m') => sort = SortKey::Mem,
                    KeyCode::Char('g') => {
                        grouping = match grouping {
                            Grouping::None => Grouping::Command,
                            Grouping::Command => Grouping::User,
                            Grouping::User => Grouping::None,
                        }
                    }
                    _ => continue,
                }
                redraw_only = true;
                break;
            }
        }
        if !redraw_only {
            frame = sampler.frame()?;
        }
    }
}
