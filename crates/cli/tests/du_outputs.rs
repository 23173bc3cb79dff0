//! `canopy du`'s other outputs against oracles: the chart and `--json` against GNU du's numbers,
//! the JSON read back through its schema types, the ncdu export against GNU find and read by ncdu
//! itself, the HTML report rendered by headless Chromium, `-x` across a real mount, and the
//! per-entry records of `-o`.

mod common;

use canopy_tools::du::json::{DuJson, JsonNode};
use common::du_tree::{du_lines, tree, write};
use common::*;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn canopy_du(args: &[&OsStr]) -> std::process::Output {
    let mut c = canopy();
    c.arg("du").args(args);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0), "canopy du {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// GNU du's lines as path → number.
fn gnu_sizes(options: &[&str], root: &Path) -> BTreeMap<Vec<u8>, u64> {
    let mut c = gnu("du");
    c.args(options).arg("-0").arg(root);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0));
    du_lines(&out.stdout)
}

/// Every node of a JSON tree with its full path.
fn flatten<'a>(node: &'a JsonNode, path: Vec<u8>, out: &mut Vec<(Vec<u8>, &'a JsonNode)>) {
    for child in &node.children {
        let name = match &child.name_base64 {
            Some(_) => canopy_tools::common::records::EncodedPath {
                path: child.name.clone(),
                path_base64: child.name_base64.clone(),
            }
            .to_bytes()
            .unwrap(),
            None => child.name.as_bytes().to_vec(),
        };
        flatten(child, [path.as_slice(), b"/", &name].concat(), out);
    }
    out.push((path, node));
}

#[test]
fn json_round_trips_and_equals_gnu_du_for_every_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let allocated = gnu_sizes(&["-B1"], &root);
    let apparent = gnu_sizes(&["-b"], &root);
    let inodes = gnu_sizes(&["--inodes"], &root);
    for j in ["1", "4", "32"] {
        let args = ["-j", j, "--json", "--depth", "100", "--min-ratio", "0"];
        let mut argv: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        argv.push(root.as_os_str());
        let out = canopy_du(&argv);
        let doc: DuJson = serde_json::from_slice(&out.stdout).unwrap();
        let again = serde_json::to_string_pretty(&doc).unwrap() + "\n";
        assert_eq!(
            again.as_bytes(),
            out.stdout.as_slice(),
            "the schema types read and write the same document"
        );
        assert_eq!((doc.format.as_str(), doc.version, doc.errors), ("canopy.du", 1, 0));
        let mut nodes = Vec::new();
        flatten(&doc.roots[0], root.as_os_str().as_bytes().to_vec(), &mut nodes);
        let shown: BTreeMap<Vec<u8>, &JsonNode> = nodes.into_iter().collect();
        let dirs: Vec<&Vec<u8>> = allocated.keys().collect();
        assert_eq!(shown.keys().collect::<Vec<_>>(), dirs, "every directory, nothing else (-j {j})");
        for (path, node) in &shown {
            let at = |m: &BTreeMap<Vec<u8>, u64>| m[path];
            assert_eq!(
                (node.sizes.allocated_bytes, node.sizes.apparent_bytes, node.sizes.entries),
                (at(&allocated), at(&apparent), at(&inodes)),
                "{}",
                String::from_utf8_lossy(path)
            );
        }
        assert_eq!(doc.total.allocated_bytes, allocated[root.as_os_str().as_bytes()]);
    }
}

#[test]
fn default_tree_shows_what_is_at_least_one_percent() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let allocated = gnu_sizes(&["-B1"], &root);
    let total = allocated[root.as_os_str().as_bytes()];
    let depth_of = |p: &[u8]| p[root.as_os_str().len()..].iter().filter(|&&b| b == b'/').count();
    let out = canopy_du(&[OsStr::new("--json"), root.as_os_str()]);
    let doc: DuJson = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc.depth, doc.min_ratio, doc.top), (10, 0.01, None));
    let mut nodes = Vec::new();
    flatten(&doc.roots[0], root.as_os_str().as_bytes().to_vec(), &mut nodes);
    let shown: Vec<Vec<u8>> = nodes.iter().map(|(p, _)| p.clone()).collect();
    let mut want: Vec<Vec<u8>> = allocated
        .iter()
        .filter(|&(p, &size)| size as f64 >= 0.01 * total as f64 && depth_of(p) <= 10)
        .map(|(p, _)| p.clone())
        .collect();
    let mut got = shown.clone();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    for (_, node) in &nodes {
        let sizes: Vec<u64> = node.children.iter().map(|c| c.sizes.allocated_bytes).collect();
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "largest first: {sizes:?}");
    }
    // --top 1 --depth 1 --files: the one largest entry below the root.
    let out = canopy_du(&[
        OsStr::new("--json"),
        OsStr::new("--top=1"),
        OsStr::new("--depth=1"),
        OsStr::new("--files"),
        root.as_os_str(),
    ]);
    let doc: DuJson = serde_json::from_slice(&out.stdout).unwrap();
    let children: Vec<&str> = doc.roots[0].children.iter().map(|c| c.name.as_str()).collect();
    let largest = allocated
        .iter()
        .filter(|(p, _)| depth_of(p) == 1)
        .max_by_key(|&(_, &size)| size)
        .map(|(p, _)| String::from_utf8_lossy(&p[root.as_os_str().len() + 1..]).into_owned())
        .unwrap();
    assert_eq!(children, [largest.as_str()]);
    assert!(doc.roots[0].children[0].children.is_empty());
}

#[test]
fn chart_rows_carry_gnu_du_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let human: HashMap<Vec<u8>, String> = {
        let mut c = gnu("du");
        c.args(["-h", "-0", "--max-depth=1"]).arg(&root);
        let out = run(c, None);
        out.stdout
            .split(|&b| b == 0)
            .filter(|l| !l.is_empty())
            .map(|l| {
                let tab = l.iter().position(|&b| b == b'\t').unwrap();
                (l[tab + 1..].to_vec(), String::from_utf8_lossy(&l[..tab]).into_owned())
            })
            .collect()
    };
    let allocated = gnu_sizes(&["-B1", "--max-depth=1"], &root);
    let total = allocated[root.as_os_str().as_bytes()];
    let out = canopy_du(&[
        OsStr::new("--top-down"),
        OsStr::new("--depth=1"),
        OsStr::new("--width=90"),
        root.as_os_str(),
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b'), "no colors into a pipe");
    let rows: Vec<(String, String)> = text
        .lines()
        .map(|l| {
            let label = l.split('│').next().unwrap().trim_end();
            let (size, rest) = label.trim_start().split_once(' ').unwrap();
            (size.to_string(), rest.trim_start_matches(['├', '└', '─', ' ']).to_string())
        })
        .collect();
    assert_eq!(rows[0], (human[root.as_os_str().as_bytes()].clone(), root.display().to_string()));
    let mut want: Vec<(u64, String, String)> = allocated
        .iter()
        .filter(|&(p, &size)| {
            p.as_slice() != root.as_os_str().as_bytes() && size as f64 >= 0.01 * total as f64
        })
        .map(|(p, &size)| {
            let name = String::from_utf8_lossy(&p[root.as_os_str().len() + 1..]).into_owned();
            (size, name, human[p].clone())
        })
        .collect();
    want.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let want: Vec<(String, String)> = want.into_iter().map(|(_, name, size)| (size, name)).collect();
    assert_eq!(&rows[1..], want.as_slice(), "{text}");
    let widths: Vec<usize> = text.lines().map(|l| l.chars().count()).collect();
    assert!(widths.iter().all(|&w| w == 90), "every row fills the width: {widths:?}");

    let colored = canopy_du(&[OsStr::new("--color=always"), root.as_os_str()]);
    assert!(colored.stdout.contains(&0x1b));
    let mut c = canopy();
    c.args(["du", "--chart", "--inodes"]).arg(&root).env("NO_COLOR", "1");
    let plain = run(c, None);
    assert!(!plain.stdout.contains(&0x1b));
    let mut c = gnu("du");
    c.args(["--inodes", "--si", "-s"]).arg(&root);
    let count = String::from_utf8(run(c, None).stdout).unwrap().split('\t').next().unwrap().to_string();
    let last = String::from_utf8(plain.stdout).unwrap().lines().last().unwrap().to_string();
    assert!(last.trim_start().starts_with(&format!("{count} {}", root.display())), "{last} vs {count}");
}

#[test]
fn ncdu_export_lists_every_entry_and_ncdu_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let export = tmp.path().join("scan.json");
    for j in ["1", "8"] {
        canopy_du(&[
            OsStr::new("-j"),
            OsStr::new(j),
            OsStr::new("--ncdu-json"),
            export.as_os_str(),
            root.as_os_str(),
        ]);
        let bytes = std::fs::read(&export).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&String::from_utf8_lossy(&bytes)).unwrap();
        assert_eq!((doc[0].as_u64(), doc[1].as_u64()), (Some(1), Some(2)));
        let mut entries = Vec::new();
        ncdu_entries(&doc[3], String::new(), &mut entries);
        entries.sort();
        assert_eq!(entries, find_entries(&root), "-j {j}");
    }
    let reexport = tmp.path().join("again.json");
    let mut c = gnu("ncdu");
    // -0: no progress display, so anything on stderr is a complaint about the file.
    c.arg("-0").arg("-f").arg(&export).arg("-o").arg(&reexport);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "ncdu: {}", String::from_utf8_lossy(&out.stderr));
    let again: serde_json::Value =
        serde_json::from_str(&String::from_utf8_lossy(&std::fs::read(&reexport).unwrap())).unwrap();
    let mut read_back = Vec::new();
    ncdu_entries(&again[3], String::new(), &mut read_back);
    assert_eq!(read_back.len(), find_entries(&root).len(), "ncdu read every entry");
}

/// (path, apparent size, disk usage) of every entry of an ncdu export's directory array.
fn ncdu_entries(dir: &serde_json::Value, prefix: String, out: &mut Vec<(String, u64, u64)>) {
    let items = dir.as_array().unwrap();
    let own = &items[0];
    let path = if prefix.is_empty() { ".".to_string() } else { prefix };
    out.push((path.clone(), own["asize"].as_u64().unwrap_or(0), own["dsize"].as_u64().unwrap_or(0)));
    for item in &items[1..] {
        match item {
            serde_json::Value::Array(_) => {
                let name = item[0]["name"].as_str().unwrap();
                ncdu_entries(item, format!("{path}/{name}"), out);
            }
            file => out.push((
                format!("{path}/{}", file["name"].as_str().unwrap()),
                file["asize"].as_u64().unwrap_or(0),
                file["dsize"].as_u64().unwrap_or(0),
            )),
        }
    }
}

fn find_entries(root: &Path) -> Vec<(String, u64, u64)> {
    let mut c = gnu("find");
    c.arg(root).args(["-printf", "%P\\0%s\\0%b\\0"]);
    let out = run(c, None);
    let fields: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
    let mut entries: Vec<(String, u64, u64)> = fields
        .chunks_exact(3)
        .map(|f| {
            let rel = String::from_utf8_lossy(f[0]);
            let path = if rel.is_empty() { ".".to_string() } else { format!("./{rel}") };
            let number = |b: &[u8]| std::str::from_utf8(b).unwrap().parse::<u64>().unwrap();
            (path, number(f[1]), number(f[2]) * 512)
        })
        .collect();
    entries.sort();
    entries
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let page = tmp.path().join("report.html");
    canopy_du(&[OsStr::new("--html"), page.as_os_str(), OsStr::new("--json"), root.as_os_str()]);
    let total = gnu_sizes(&["-B1", "-s"], &root)[root.as_os_str().as_bytes()];
    let profile = tempfile::tempdir().unwrap();
    let mut c = headless_chromium(profile.path());
    c.args(["--enable-logging=stderr", "--v=0", "--window-size=1200,800", "--dump-dom"])
        .arg(format!("file://{}", page.display()));
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0), "chromium (installed by scripts/setup) runs headless");
    let log = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "the page logs nothing (no errors): {console:#?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    let grouped = total
        .to_string()
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(",");
    assert!(dom.contains(&format!("({grouped} bytes)")), "the root's total is shown: {grouped}");
    let cells = dom.matches("class=\"cell").count();
    assert!(cells >= 4, "the treemap is drawn ({cells} cells)");
    assert!(dom.contains("class=\"cell dir\""), "directories can be zoomed into");
}

#[test]
fn one_file_system_across_a_real_mount() {
    if !root_or_skip("mount a tmpfs") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let mountpoint = root.join("mnt");
    std::fs::create_dir(&mountpoint).unwrap();
    let mut mount = gnu("mount");
    mount.args(["-t", "tmpfs", "-o", "size=16m", "canopy-du-test"]).arg(&mountpoint);
    if run(mount, None).status.code() != Some(0) {
        skip("cannot mount a tmpfs here");
        return;
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let mut umount = gnu("umount");
            umount.arg(self.0);
            run(umount, None);
        }
    }
    let _unmount = Unmount(&mountpoint);
    std::fs::create_dir(mountpoint.join("inside")).unwrap();
    write(&mountpoint.join("inside/big"), 500_000);
    for options in [&["-x", "-B1"][..], &["-B1"], &["-x", "--inodes"], &["-x", "-b", "--max-depth=3"]] {
        let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
        args.push(OsStr::new("-0"));
        args.push(root.as_os_str());
        let mut c = gnu("du");
        c.args(&args);
        let want = run(c, None);
        let got = canopy_du(&args);
        assert_same_records(&records(&got.stdout, 0), &records(&want.stdout, 0), &format!("{options:?}"));
    }
}

#[test]
fn records_output_has_one_row_per_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let file = tmp.path().join("entries.jsonl");
    canopy_du(&[OsStr::new("-s"), OsStr::new("-o"), file.as_os_str(), root.as_os_str()]);
    let text = std::fs::read_to_string(&file).unwrap();
    let mut paths: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["path"].as_str().unwrap().to_string())
        .collect();
    paths.sort();
    let mut c = gnu("find");
    c.arg(&root).args(["-printf", "%p\\0"]);
    let out = run(c, None);
    let mut want: Vec<String> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    want.sort();
    assert_eq!(paths, want);
}
