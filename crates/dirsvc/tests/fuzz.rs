//! Protocol fuzzing of the server's request decoding: random bytes and random field values for
//! every request type go through protobuf decoding and the server's handlers (the exact path a
//! gRPC request takes after authentication). Nothing may panic or fail internally, and a request
//! the server rejects — malformed, or refused in-band — must leave the store byte-for-byte as it
//! was. Bounded so it runs in a few seconds.

use canopy_dirsvc::mapping::name_hash;
use canopy_dirsvc::proto::*;
use canopy_dirsvc::server::core::Core;
use canopy_dirsvc::server::open_core;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use prost::Message;

const REQUEST_KINDS: usize = 25;

struct Fixture {
    _dir: tempfile::TempDir,
    runtime: tokio::runtime::Runtime,
    core: Core,
    subdir: u64,
    names: Vec<Vec<u8>>,
    /// Ids of the seeded entries.
    ids: Vec<u64>,
}

/// How a handled request ended.
#[derive(Debug, PartialEq)]
enum Handled {
    Undecodable,
    Rejected,
    Accepted,
}

impl Fixture {
    /// Server 0 of a two-server cluster, with a few entries in the root and in a subdirectory.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (core, subdir, names, ids) = runtime.block_on(async {
            let core = open_core(&dir.path().join("store"), 0, 2).unwrap().core;
            core.format(2, 0).await.unwrap();
            let dir_attrs = Attrs { kind: Kind::Directory as i32, mode: 0o755, ..Attrs::default() };
            let meta = core
                .create_dir(CreateDirRequest {
                    parent: 1,
                    attrs: Some(dir_attrs),
                    initial_partitions: 1,
                    split_threshold: 0,
                })
                .await
                .unwrap()
                .meta
                .unwrap();
            core.init_partitions(InitPartitionsRequest { meta: Some(meta.clone()) }).await.unwrap();
            // Root partition 0 of "11" holds even hashes; the subdirectory's only partition all.
            let names: Vec<Vec<u8>> = (0..40)
                .map(|i| format!("seed-{i}").into_bytes())
                .filter(|n| name_hash(n).is_multiple_of(2))
                .take(5)
                .collect();
            let mut ids = Vec::new();
            for (dir, name) in names.iter().flat_map(|n| [(1, n), (meta.id, n)]) {
                let reply = core
                    .create(CreateRequest {
                        at: Some(PartitionRef { dir, partition: 0 }),
                        name: name.clone(),
                        attrs: Some(file_attrs()),
                        id: 0,
                        replace_id: 0,
                        target: Vec::new(),
                        link_intent: 0,
                        open_session: 0,
                    })
                    .await
                    .unwrap();
                assert!(reply.failure.is_none(), "{:?}", reply.failure);
                ids.push(reply.entry.unwrap().id);
            }
            (core, meta.id, names, ids)
        });
        Self { _dir: dir, runtime, core, subdir, names, ids }
    }

    fn check(&self, kind: usize, bytes: &[u8]) -> Result<(), TestCaseError> {
        let before = self.core.store.dump().unwrap();
        let handled = self.runtime.block_on(async {
            let handled = handle(&self.core, kind, bytes).await;
            // What an accepted read queued for the writer (an access time) is applied before the
            // next request is compared.
            self.core.settle_writer().await;
            handled
        });
        let handled = match handled {
            Ok(handled) => handled,
            Err(status) => {
                prop_assert_ne!(status.code(), tonic::Code::Internal, "{}", status.message());
                Handled::Rejected
            }
        };
        if handled != Handled::Accepted {
            let after = self.core.store.dump().unwrap();
            prop_assert!(before == after, "request kind {kind} was rejected but changed the store");
        }
        Ok(())
    }
}

fn file_attrs() -> Attrs {
    Attrs { kind: Kind::File as i32, mode: 0o644, ..Attrs::default() }
}

/// Decodes `bytes` as request type `kind` and runs the server's handler for it.
async fn handle(core: &Core, kind: usize, bytes: &[u8]) -> Result<Handled, tonic::Status> {
    macro_rules! run {
        ($request:ty, $method:ident, $rejected:expr) => {{
            let Ok(request) = <$request>::decode(bytes) else {
                return Ok(Handled::Undecodable);
            };
            let reply = core.$method(request).await?;
            #[allow(clippy::redundant_closure_call)]
            Ok(if ($rejected)(&reply) { Handled::Rejected } else { Handled::Accepted })
        }};
    }
    let entry = |r: &EntryReply| r.failure.is_some();
    let dir = |r: &DirMetaReply| r.failure.is_some();
    let ack = |r: &Ack| r.failure.is_some() || r.already_done;
    let object = |r: &ObjectReply| r.failure.is_some();
    match kind {
        0 => run!(CreateRequest, create, entry),
        1 => run!(LookupRequest, lookup, entry),
        2 => run!(UnlinkRequest, unlink, entry),
        3 => run!(RenameRequest, rename, entry),
        4 => run!(ReadPartitionRequest, read_partition, |r: &ReadPartitionReply| r.failure.is_some()),
        5 => run!(CreateDirRequest, create_dir, dir),
        6 => run!(DirRequest, get_dir, dir),
        7 => run!(DirRequest, remove_dir, dir),
        // NOT_FOUND is a fence's answer "never made", which records the fence: accepted.
        8 => run!(FenceLinkRequest, fence_link, |r: &EntryReply| {
            r.failure.as_ref().is_some_and(|f| f.kind() != FailureKind::NotFound)
        }),
        9 => run!(InitPartitionsRequest, init_partitions, ack),
        10 => run!(SealRequest, seal_partition, ack),
        11 => run!(PartitionRef, drop_partition, ack),
        12 => run!(DirRequest, partition_stats, |r: &PartitionStatsReply| r.failure.is_some()),
        13 => run!(InstallSplitRequest, install_split, ack),
        14 => run!(MergeBitmapRequest, merge_bitmap, dir),
        15 => run!(SetObjectAttrRequest, set_object_attr, object),
        16 => run!(AddLinkRequest, add_link, |r: &AddLinkReply| r.failure.is_some()),
        17 => run!(WriteDataRequest, write_data, object),
        18 => run!(ReadDataRequest, read_data, |_: &ReadDataReply| false),
        19 => run!(ObjectsRequest, get_objects, |_: &ObjectsReply| false),
        20 => run!(AbortLinkRequest, abort_link, ack),
        21 => run!(CloseRequest, close, ack),
        22 => run!(DeliverRequest, deliver, |_: &DeliverReply| false),
        23 => run!(ScanRequest, scan, |_: &ScanReply| false),
        _ => run!(RepairRequest, repair, ack),
    }
}

/// Field values near the edges of what servers accept.
#[derive(Debug)]
struct Parts {
    dir: u64,
    partition: u32,
    name: Vec<u8>,
    other_name: Vec<u8>,
    attrs: Option<Attrs>,
    id: u64,
    flag: bool,
    bitmap: Vec<u8>,
    limit: u32,
    entries: usize,
}

fn parts(fixture: &Fixture) -> impl Strategy<Value = Parts> {
    let existing = fixture.names.clone();
    let name = move || {
        prop_oneof![
            1 => Just(Vec::new()),
            1 => Just(b".".to_vec()),
            1 => Just(b"..".to_vec()),
            1 => Just(b"a/b".to_vec()),
            1 => Just(b"nul\0".to_vec()),
            1 => Just(vec![b'x'; 256]),
            1 => Just(vec![b'y'; 255]),
            8 => proptest::sample::select(existing.clone()),
            1 => vec(any::<u8>(), 1..24),
        ]
    };
    let attrs = (-2i32..9, prop_oneof![Just(0o644u32), Just(0o7777), Just(0o10000), any::<u32>()])
        .prop_map(|(kind, mode)| Attrs { kind, mode, ..Attrs::default() });
    (
        prop_oneof![1 => Just(0u64), 3 => Just(1), 3 => Just(fixture.subdir), 1 => any::<u64>()],
        prop_oneof![4 => Just(0u32), 1 => Just(1), 1 => Just(2), 1 => any::<u32>()],
        name(),
        name(),
        proptest::option::of(attrs),
        prop_oneof![
            Just(0u64),
            Just(1),
            Just(fixture.subdir),
            proptest::sample::select(fixture.ids.clone()),
            any::<u64>()
        ],
        any::<bool>(),
        prop_oneof![
            Just(vec![]),
            Just(vec![1u8]),
            Just(vec![2]),
            Just(vec![3]),
            Just(vec![0xff]),
            vec(any::<u8>(), 0..3)
        ],
        prop_oneof![Just(0u32), Just(1), Just(4096), Just(4097), any::<u32>()],
        0usize..4,
    )
        .prop_map(|(dir, partition, name, other_name, attrs, id, flag, bitmap, limit, entries)| Parts {
            dir,
            partition,
            name,
            other_name,
            attrs,
            id,
            flag,
            bitmap,
            limit,
            entries,
        })
}

/// A well-formed protobuf encoding of request type `kind` built from `p`.
fn encode(kind: usize, p: &Parts) -> Vec<u8> {
    let partition = PartitionRef { dir: p.dir, partition: p.partition };
    let at = Some(partition);
    let meta = DirMeta {
        id: p.dir,
        parent: p.id,
        attrs: p.attrs,
        servers: (0..p.partition.min(3)).collect(),
        bitmap: p.bitmap.clone(),
        split_threshold: u64::from(p.limit),
        initial_partitions: p.partition,
        subdirs: u64::from(p.limit),
        ..DirMeta::default()
    };
    let entries: Vec<Entry> = (0..p.entries)
        .map(|i| Entry {
            name: if i % 2 == 0 { p.name.clone() } else { p.other_name.clone() },
            id: p.id,
            attrs: p.attrs,
            target: if p.flag { p.other_name.clone() } else { Vec::new() },
            kind: p.attrs.map_or(0, |a| a.kind),
            link_intent: u64::from(p.limit),
        })
        .collect();
    let change = AttrChange {
        mode: p.attrs.map(|a| a.mode),
        uid: p.flag.then_some(7),
        gid: None,
        size: p.flag.then_some(u64::from(p.limit)),
        atime_ns: None,
        mtime_ns: p.attrs.map(|a| i64::from(a.kind)),
    };
    let offset = if p.flag { u64::from(p.limit) } else { p.id };
    match kind {
        0 => CreateRequest {
            at,
            name: p.name.clone(),
            attrs: p.attrs,
            id: p.id,
            replace_id: if p.flag { p.id } else { 0 },
            target: if p.flag { p.other_name.clone() } else { Vec::new() },
            link_intent: if p.entries == 2 { u64::from(p.limit) } else { 0 },
            open_session: if p.entries == 3 { p.dir } else { 0 },
        }
        .encode_to_vec(),
        1 => LookupRequest { at, name: p.name.clone() }.encode_to_vec(),
        2 => UnlinkRequest { at, name: p.name.clone(), expect_id: p.id, directory: p.flag }.encode_to_vec(),
        3 => RenameRequest {
            from: at,
            from_name: p.name.clone(),
            to: Some(PartitionRef { dir: if p.flag { p.dir } else { p.id }, partition: p.partition }),
            to_name: p.other_name.clone(),
            expect_id: p.id,
            replace_id: 0,
        }
        .encode_to_vec(),
        4 => ReadPartitionRequest { at, after: p.name.clone(), limit: p.limit }.encode_to_vec(),
        5 => CreateDirRequest {
            parent: p.dir,
            attrs: p.attrs,
            initial_partitions: p.partition,
            split_threshold: u64::from(p.limit),
        }
        .encode_to_vec(),
        6 | 7 | 12 => DirRequest { dir: p.dir }.encode_to_vec(),
        8 => FenceLinkRequest { at, name: p.name.clone(), id: p.id, intent: u64::from(p.limit) }
            .encode_to_vec(),
        9 => InitPartitionsRequest { meta: Some(meta) }.encode_to_vec(),
        10 => SealRequest { at, seal: p.flag }.encode_to_vec(),
        11 => partition.encode_to_vec(),
        13 => InstallSplitRequest { at, reset: p.flag, entries, activate: !p.flag, bitmap: p.bitmap.clone() }
            .encode_to_vec(),
        14 => MergeBitmapRequest { dir: p.dir, bitmap: p.bitmap.clone() }.encode_to_vec(),
        15 => SetObjectAttrRequest { id: if p.flag { p.id } else { p.dir }, change: Some(change) }
            .encode_to_vec(),
        16 => AddLinkRequest { id: p.id, dir: p.dir, name: p.name.clone() }.encode_to_vec(),
        17 => WriteDataRequest { file: p.id, offset, data: p.name.clone() }.encode_to_vec(),
        18 => ReadDataRequest { file: p.id, offset, length: p.limit }.encode_to_vec(),
        19 => ObjectsRequest { ids: vec![p.id, p.dir], open_session: if p.flag { p.dir } else { 0 } }
            .encode_to_vec(),
        20 => AbortLinkRequest { id: p.id, intent: u64::from(p.limit) }.encode_to_vec(),
        21 => CloseRequest { session: p.dir, ids: vec![p.id], everything: p.flag }.encode_to_vec(),
        22 => DeliverRequest {
            from: p.partition,
            effects: (0..p.entries)
                .map(|i| Effect {
                    seq: u64::from(p.limit) + i as u64,
                    change: Some(match i {
                        0 => effect::Change::Unlinked(Unlinked { id: p.id, time_ns: 5 }),
                        1 => effect::Change::Subdirs(SubdirDelta { dir: p.dir, delta: -1 }),
                        2 => effect::Change::Parent(ParentChange { dir: p.dir, parent: p.id }),
                        _ => effect::Change::LinkDone(LinkDone { id: p.id, intent: 1 }),
                    }),
                })
                .collect(),
            touches: vec![Touch { id: p.dir, kind: i32::from(p.flag), time_ns: i64::from(p.limit) }],
        }
        .encode_to_vec(),
        23 => {
            ScanRequest { table: p.partition as i32, after: p.name.clone(), limit: p.limit }.encode_to_vec()
        }
        _ => RepairRequest {
            action: Some(match p.entries {
                0 => repair_request::Action::LinkCount(SetLinkCount { id: p.id, from: 1, to: p.limit }),
                1 => repair_request::Action::RemoveData(p.id),
                2 => repair_request::Action::Subdirs(SetSubdirs { dir: p.dir, from: 0, to: 1 }),
                _ => repair_request::Action::Parent(ParentChange { dir: p.dir, parent: p.id }),
            }),
        }
        .encode_to_vec(),
    }
}

#[test]
fn request_decoding_never_panics_and_rejections_change_nothing() {
    let fixture = Fixture::new();
    let config = Config { cases: 600, failure_persistence: None, ..Config::default() };

    // Arbitrary bytes: mostly undecodable, sometimes a strange but decodable request.
    let mut runner = TestRunner::new(config.clone());
    runner
        .run(&(0..REQUEST_KINDS, vec(any::<u8>(), 0..200)), |(kind, bytes)| fixture.check(kind, &bytes))
        .unwrap();

    // Well-formed encodings with edge-case fields: exercises validation and in-band refusals.
    let mut runner = TestRunner::new(Config { cases: 3000, ..config });
    runner
        .run(&(0..REQUEST_KINDS, parts(&fixture)), |(kind, parts)| fixture.check(kind, &encode(kind, &parts)))
        .unwrap();

    // The seeded entries that no accepted request removed are still readable: the server works.
    let listing =
        fixture.runtime.block_on(fixture.core.partition_stats(DirRequest { dir: fixture.subdir })).unwrap();
    assert!(listing.failure.is_none());
}
