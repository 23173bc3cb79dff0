//! The distributed walk across three hosts, built with the `mpi` feature: network namespaces on a
//! bridge, each with its own hostname, Open MPI's rsh launcher entering them (`common::netns`).
//! `canopy find` and `canopy du` print what GNU find and du print, the ranks report three hosts
//! and three nodes, and every byte the ranks sent each other across hosts (their `--stats`) went
//! over the veths (the interface counters). Needs root (namespaces, bridge).
#![cfg(feature = "mpi")]

mod common;

use common::launch_oracles::{assert_du_like_gnu, assert_success, gnu_find_records, stats_ranks};
use common::mpirun::{LIMIT, mpirun_command, run_within};
use common::netns::Hosts;
use common::random_tree::random_tree;
use common::*;
use std::collections::BTreeSet;
use std::process::Output;

const HOSTS: usize = 3;
const RANKS_PER_HOST: usize = 2;

/// `mpirun` on host 0 starting `RANKS_PER_HOST` ranks of `canopy ARGS` on every host.
fn mpirun_across(hosts: &Hosts, args: &[&str]) -> Output {
    let options = hosts.mpirun_options(RANKS_PER_HOST);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let mpirun = mpirun_command(HOSTS * RANKS_PER_HOST, &options, args);
    run_within(hosts.on_host(0, &mpirun), LIMIT)
}

#[test]
fn the_walk_spans_three_network_namespace_hosts() {
    if !root_or_skip("make network namespaces and bridges") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("trees");
    std::fs::create_dir(&root).unwrap();
    hostile_tree(&root);
    random_tree(&root.join("random"), 3);
    let du_base = tempfile::tempdir().unwrap();
    let sized = du_tree::tree(du_base.path());
    let stats = tmp.path().join("stats.json");
    let hosts = Hosts::create(HOSTS, tmp.path());
    let before: Vec<(u64, u64)> = (0..HOSTS).map(|i| hosts.traffic(i)).collect();

    // drqs: every idle rank asks a random rank for work, so the walk usually spreads over the hosts
    // (how far depends on timing and is the scheduler's business: not checked here). Whatever the
    // spread, termination passes through every rank, so every host exchanges bytes with the others.
    let (root_s, stats_s) = (root.to_str().unwrap(), stats.to_str().unwrap());
    let out = mpirun_across(&hosts, &["find", "--sched", "drqs", "--stats", stats_s, root_s, "-print0"]);
    assert_success(&out, "canopy find across hosts");
    assert_same_records(&records(&out.stdout, 0), &gnu_find_records(&root), "canopy find across hosts");

    let after: Vec<(u64, u64)> = (0..HOSTS).map(|i| hosts.traffic(i)).collect();
    let mut ranks = stats_ranks(&stats);
    ranks.sort_by_key(|r| r["rank"].as_u64());
    let rank_numbers: Vec<u64> = ranks.iter().filter_map(|r| r["rank"].as_u64()).collect();
    assert_eq!(rank_numbers, (0..(HOSTS * RANKS_PER_HOST) as u64).collect::<Vec<_>>());
    let host_of: Vec<usize> = ranks
        .iter()
        .map(|r| {
            let name = r["host"].as_str().unwrap();
            hosts.hostnames().iter().position(|h| *h == name).unwrap_or_else(|| panic!("rank on host {name}"))
        })
        .collect();
    for h in 0..HOSTS {
        let on_h = host_of.iter().filter(|&&x| x == h).count();
        assert_eq!(on_h, RANKS_PER_HOST, "ranks on {}: {host_of:?}", hosts.hostnames()[h]);
    }
    let nodes: BTreeSet<u64> = ranks.iter().map(|r| r["node"].as_u64().unwrap()).collect();
    assert_eq!(nodes.len(), HOSTS, "MPI sees one node per host");

    // What the ranks of each host sent to and received from the other hosts' ranks.
    let mut sent = [0u64; HOSTS];
    let mut received = [0u64; HOSTS];
    for (from, rank) in ranks.iter().enumerate() {
        // 6 ranks: every peer is among a rank's top peers.
        for peer in rank["top_peers"].as_array().unwrap() {
            let (to, bytes) = (peer["rank"].as_u64().unwrap() as usize, peer["bytes"].as_u64().unwrap());
            if host_of[from] != host_of[to] {
                sent[host_of[from]] += bytes;
                received[host_of[to]] += bytes;
            }
        }
    }
    for h in 0..HOSTS {
        let (veth_sent, veth_received) = (after[h].0 - before[h].0, after[h].1 - before[h].1);
        let name = hosts.hostnames()[h];
        assert!(
            sent[h] > 0 && received[h] > 0,
            "{name}'s ranks talked to other hosts: {sent:?} {received:?}"
        );
        assert!(
            veth_sent >= sent[h],
            "{name} sent {} walk bytes to other hosts, its veth carried {veth_sent}",
            sent[h]
        );
        assert!(
            veth_received >= received[h],
            "{name} received {} walk bytes from other hosts, its veth carried {veth_received}",
            received[h]
        );
    }

    let across = |args: &[&str]| mpirun_across(&hosts, args);
    assert_du_like_gnu(&sized, &[&["-s"], &["-B1"]], across, "mpirun across hosts");
}
