//! The crate graph drawn in `ARCHITECTURE.md` is the one Cargo builds: every path dependency between
//! workspace members (as `cargo metadata` reads the manifests) is in the document's `crate-graph`
//! block, every edge of the block is in a manifest, and the block lists the crates bottom-up, so no
//! crate depends on one above it. Normal and build dependencies are a crate's `NAME:` line,
//! dev-dependencies its `NAME [dev]:` line. Each crate's section in the code map (`### \`crates/NAME\``)
//! says `Depends on: … Used by: …` with the same normal edges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Workspace edges by kind: crate → the workspace crates it depends on.
#[derive(Clone, Debug, Default)]
struct Graph {
    normal: BTreeMap<String, BTreeSet<String>>,
    dev: BTreeMap<String, BTreeSet<String>>,
}

/// A crate's place as its code-map section states it: `Depends on: …. Used by: ….`
#[derive(Debug, PartialEq)]
struct Place {
    depends_on: BTreeSet<String>,
    used_by: BTreeSet<String>,
}

/// The graph as written, and the crates in the order their `NAME:` lines come.
struct Drawn {
    graph: Graph,
    order: Vec<String>,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// The graph Cargo sees: `cargo metadata --no-deps` lists the workspace members with their declared
/// dependencies; the edges are those to other members by path.
fn graph_from_cargo(root: &Path) -> Graph {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let members: BTreeSet<&str> =
        packages.iter().map(|p| p["name"].as_str().expect("package name")).collect();
    let mut graph = Graph::default();
    for package in packages {
        let name = package["name"].as_str().expect("package name").to_owned();
        graph.normal.entry(name.clone()).or_default();
        for dependency in package["dependencies"].as_array().expect("dependencies") {
            let target = dependency["name"].as_str().expect("dependency name");
            if !members.contains(target) || dependency["path"].is_null() {
                continue;
            }
            let edges = match dependency["kind"].as_str() {
                None | Some("normal") | Some("build") => &mut graph.normal,
                Some("dev") => &mut graph.dev,
                Some(other) => panic!("{name} → {target}: unknown dependency kind {other:?}"),
            };
            edges.entry(name.clone()).or_default().insert(target.to_owned());
        }
    }
    graph
}

/// Parses the one ```` ```crate-graph ```` block: `NAME: DEP DEP…` and `NAME [dev]: DEP…` lines,
/// `#` comments and blank lines.
fn graph_from_document(text: &str) -> Result<Drawn, String> {
    let mut lines = text.lines();
    if !lines.by_ref().any(|l| l.trim_end() == "```crate-graph") {
        return Err("no ```crate-graph block".into());
    }
    let block: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("```")).collect();
    if lines.any(|l| l.trim_end() == "```crate-graph") {
        return Err("more than one ```crate-graph block".into());
    }
    let mut drawn = Drawn { graph: Graph::default(), order: Vec::new() };
    for line in block.into_iter().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (head, deps) = line.split_once(':').ok_or_else(|| format!("no ':' in {line:?}"))?;
        let (name, edges) = match head.trim().strip_suffix("[dev]") {
            Some(name) => (name.trim(), &mut drawn.graph.dev),
            None => (head.trim(), &mut drawn.graph.normal),
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(format!("bad crate name in {line:?}"));
        }
        if edges.contains_key(name) {
            return Err(format!("{line:?}: a second line for {name}"));
        }
        let mut targets = BTreeSet::new();
        for dep in deps.split_whitespace() {
            if !targets.insert(dep.to_owned()) {
                return Err(format!("{line:?}: {dep} twice"));
            }
        }
        edges.insert(name.to_owned(), targets);
        if !head.contains("[dev]") {
            drawn.order.push(name.to_owned());
        }
    }
    Ok(drawn)
}

/// Everything that makes the drawn graph differ from Cargo's, or not bottom-up; empty when they agree.
fn disagreements(cargo: &Graph, drawn: &Drawn) -> Vec<String> {
    let mut problems = Vec::new();
    for name in cargo.normal.keys().filter(|n| !drawn.graph.normal.contains_key(*n)) {
        problems.push(format!("workspace crate {name} has no `{name}:` line"));
    }
    for name in drawn.graph.normal.keys().filter(|n| !cargo.normal.contains_key(*n)) {
        problems.push(format!("`{name}:` names no workspace crate"));
    }
    for name in drawn.graph.dev.keys().filter(|n| !drawn.graph.normal.contains_key(*n)) {
        problems.push(format!("`{name} [dev]:` has no `{name}:` line"));
    }
    for (kind, real, written) in
        [("", &cargo.normal, &drawn.graph.normal), (" [dev]", &cargo.dev, &drawn.graph.dev)]
    {
        let empty = BTreeSet::new();
        let names: BTreeSet<&String> = real.keys().chain(written.keys()).collect();
        for name in names {
            let real_deps = real.get(name).unwrap_or(&empty);
            let written_deps = written.get(name).unwrap_or(&empty);
            for dep in real_deps.difference(written_deps) {
                problems.push(format!("{name}{kind} → {dep} is in Cargo.toml but not in ARCHITECTURE.md"));
            }
            for dep in written_deps.difference(real_deps) {
                problems.push(format!("{name}{kind} → {dep} is in ARCHITECTURE.md but in no Cargo.toml"));
            }
        }
    }
    let position = |name: &str| drawn.order.iter().position(|n| n == name);
    for edges in [&drawn.graph.normal, &drawn.graph.dev] {
        for (name, deps) in edges {
            for dep in deps {
                if let (Some(from), Some(to)) = (position(name), position(dep))
                    && to >= from
                {
                    problems
                        .push(format!("{name} → {dep}: {dep}'s line must come before {name}'s (bottom-up)"));
                }
            }
        }
    }
    problems
}

/// Each crate section's `Depends on: A, B. Used by: C.` line, by crate: (depends on, used by), with
/// short names (`engine` for `canopy-engine`) and `nothing` for none.
fn sections_from_document(text: &str) -> Result<BTreeMap<String, Place>, String> {
    let mut sections = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            current = heading
                .strip_prefix("`crates/")
                .and_then(|rest| rest.split_once('`'))
                .map(|(name, _)| format!("canopy-{name}"));
            continue;
        }
        let (Some(name), Some(rest)) = (&current, line.strip_prefix("Depends on: ")) else { continue };
        let (depends, rest) =
            rest.split_once(". Used by: ").ok_or_else(|| format!("{line:?}: no '. Used by: '"))?;
        let used_by = rest.split_once('.').ok_or_else(|| format!("{line:?}: no '.' after the users"))?.0;
        let list = |names: &str| -> BTreeSet<String> {
            let names = names.split_once(" (").map_or(names, |(names, _)| names);
            if names == "nothing" {
                return BTreeSet::new();
            }
            names.split(", ").map(|n| format!("canopy-{n}")).collect()
        };
        if sections
            .insert(name.clone(), Place { depends_on: list(depends), used_by: list(used_by) })
            .is_some()
        {
            return Err(format!("two 'Depends on:' lines for {name}"));
        }
    }
    Ok(sections)
}

/// Where the code map's sections differ from Cargo's normal edges; empty when they agree.
fn section_disagreements(cargo: &Graph, sections: &BTreeMap<String, Place>) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, deps) in &cargo.normal {
        let Some(place) = sections.get(name) else {
            problems.push(format!("{name} has no code-map section with a 'Depends on:' line"));
            continue;
        };
        let users: BTreeSet<String> =
            cargo.normal.iter().filter(|(_, d)| d.contains(name)).map(|(user, _)| user.clone()).collect();
        if place.depends_on != *deps {
            problems.push(format!(
                "{name}'s section: depends on {:?}, Cargo.toml says {deps:?}",
                place.depends_on
            ));
        }
        if place.used_by != users {
            problems
                .push(format!("{name}'s section: used by {:?}, Cargo.toml says {users:?}", place.used_by));
        }
    }
    for name in sections.keys().filter(|n| !cargo.normal.contains_key(*n)) {
        problems.push(format!("the section of {name} names no workspace crate"));
    }
    problems
}

fn edge(from: &str, to: &str) -> (String, BTreeSet<String>) {
    (from.to_owned(), BTreeSet::from([to.to_owned()]))
}

#[test]
fn the_crate_graph_in_architecture_md_is_cargos() {
    let root = workspace_root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md at the root");
    let drawn = graph_from_document(&text).unwrap_or_else(|e| panic!("ARCHITECTURE.md: {e}"));
    let cargo = graph_from_cargo(&root);
    assert!(cargo.normal.len() > 1, "cargo metadata lists the workspace: {cargo:?}");
    let mut problems = disagreements(&cargo, &drawn);
    let sections = sections_from_document(&text).unwrap_or_else(|e| panic!("ARCHITECTURE.md: {e}"));
    problems.extend(section_disagreements(&cargo, &sections));
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md's crate graph and the manifests disagree:\n  {}",
        problems.join("\n  ")
    );
}

/// The comparison catches an edge on either side and an edge that points up: checked on a small
/// graph so it is known to be able to fail.
#[test]
fn an_edge_on_one_side_only_or_pointing_up_is_a_disagreement() {
    let text = "prose\n```crate-graph\n# comment\na:\nb: a\nb [dev]: a\nc: a b\n```\nmore prose\n";
    let drawn = graph_from_document(text).expect("parses");
    assert_eq!(drawn.order, ["a", "b", "c"]);
    let cargo = Graph {
        normal: BTreeMap::from([
            ("a".into(), BTreeSet::new()),
            edge("b", "a"),
            ("c".into(), BTreeSet::from(["a".into(), "b".into()])),
        ]),
        dev: BTreeMap::from([edge("b", "a")]),
    };
    assert_eq!(disagreements(&cargo, &drawn), Vec::<String>::new());

    let mut new_in_cargo = cargo.clone();
    new_in_cargo.normal.get_mut("b").unwrap().insert("c".into());
    let problems = disagreements(&new_in_cargo, &drawn);
    assert_eq!(problems, ["b → c is in Cargo.toml but not in ARCHITECTURE.md"]);

    let mut gone_from_cargo = cargo.clone();
    gone_from_cargo.dev.clear();
    let problems = disagreements(&gone_from_cargo, &drawn);
    assert_eq!(problems, ["b [dev] → a is in ARCHITECTURE.md but in no Cargo.toml"]);

    let upward = graph_from_document("```crate-graph\na: b\nb:\n```\n").expect("parses");
    let cargo_upward = Graph {
        normal: BTreeMap::from([edge("a", "b"), ("b".into(), BTreeSet::new())]),
        dev: BTreeMap::new(),
    };
    assert_eq!(disagreements(&cargo_upward, &upward), ["a → b: b's line must come before a's (bottom-up)"]);

    let unlisted = Graph { normal: BTreeMap::from([("d".into(), BTreeSet::new())]), ..Graph::default() };
    assert!(disagreements(&unlisted, &drawn).iter().any(|p| p == "workspace crate d has no `d:` line"));
}

#[test]
fn a_malformed_block_is_an_error() {
    assert!(graph_from_document("no block here").is_err());
    assert!(graph_from_document("```crate-graph\na b\n```\n").is_err());
    assert!(graph_from_document("```crate-graph\na:\na:\n```\n").is_err());
    assert!(graph_from_document("```crate-graph\na: b b\n```\n").is_err());
}

#[test]
fn a_section_that_misstates_its_edges_is_a_disagreement() {
    let text = "### `crates/a` — a\n\nDepends on: nothing. Used by: b (and more).\n\n\
                ### `crates/b` — b\n\nDepends on: a. Used by: nothing.\n\n### Other\nDepends on: x. Used by: y.\n";
    let sections = sections_from_document(text).expect("parses");
    let cargo = Graph {
        normal: BTreeMap::from([("canopy-a".into(), BTreeSet::new()), edge("canopy-b", "canopy-a")]),
        ..Graph::default()
    };
    assert_eq!(section_disagreements(&cargo, &sections), Vec::<String>::new());

    let mut more = cargo.clone();
    more.normal.insert("canopy-c".into(), BTreeSet::from(["canopy-a".into()]));
    assert_eq!(
        section_disagreements(&more, &sections),
        [
            "canopy-a's section: used by {\"canopy-b\"}, Cargo.toml says {\"canopy-b\", \"canopy-c\"}",
            "canopy-c has no code-map section with a 'Depends on:' line",
        ]
    );
}
