//! A group commit keeps the partition records and directory objects it touches decoded and writes
//! them once, at the commit: the store must end exactly as if each mutation had been committed on
//! its own, refusals included.

use prost::Message;

use super::{Batch, Counters, Shared};
use crate::ids::ROOT_ID;
use crate::mapping::name_hash;
use crate::proto::{AttrChange, Attrs, DirMeta, EntryRecord, FailureKind, InodeRecord, Kind};
use crate::server::inline::InlineIndex;
use crate::server::mutation::{Mutation, Outcome, Refusal};
use crate::server::open_refs::OpenRefs;
use crate::server::store::{DumpedItem, Store};
use crate::server::touches::Touches;

type Apply<'a> = dyn FnMut(Mutation) -> Result<Outcome, Refusal> + 'a;

fn attrs(kind: Kind, mode: u32) -> Attrs {
    Attrs { kind: kind as i32, mode, ..Attrs::default() }
}

fn create(dir: u64, name: &str, kind: Kind, id: u64) -> Mutation {
    Mutation::Create {
        at: (dir, 0),
        name: name.into(),
        hash: name_hash(name.as_bytes()),
        attrs: attrs(kind, 0o644),
        id,
        replace_id: 0,
        target: Vec::new(),
        link_intent: 0,
        open_session: 0,
    }
}

fn unlink(dir: u64, name: &str, directory: bool) -> Mutation {
    let hash = name_hash(name.as_bytes());
    Mutation::Unlink { at: (dir, 0), name: name.into(), hash, expect_id: 0, directory }
}

fn refused_as(outcome: Result<Outcome, Refusal>, kind: FailureKind) {
    match outcome {
        Err(Refusal::Failure(failure)) => assert_eq!(failure.kind(), kind, "{failure:?}"),
        other => panic!("expected a refusal ({kind:?}), got {other:?}"),
    }
}

/// mkdir d, files in the root and in d, refusals, chmod, rename into d, unlinks, rmdir d: every
/// kind of change to a directory object, several to the same one.
fn script(apply: &mut Apply<'_>) {
    let format = Mutation::Format { index: 0, servers: 1, root_partitions: 1, split_threshold: 0 };
    apply(format).unwrap();
    let dir_attrs = attrs(Kind::Directory, 0o755);
    let made = apply(Mutation::CreateDir {
        parent: ROOT_ID,
        attrs: dir_attrs,
        initial_partitions: 1,
        split_threshold: 0,
    });
    let Ok(Outcome::Dir(meta)) = made else { panic!("mkdir: {made:?}") };
    let d = meta.id;
    apply(Mutation::InitPartitions { meta }).unwrap();
    apply(create(ROOT_ID, "d", Kind::Directory, d)).unwrap();
    apply(create(ROOT_ID, "a", Kind::File, 0)).unwrap();
    apply(create(d, "b", Kind::File, 0)).unwrap();
    refused_as(apply(create(ROOT_ID, "a", Kind::File, 0)), FailureKind::Exists);
    let grow_dir = AttrChange { size: Some(1), ..AttrChange::default() };
    refused_as(apply(Mutation::SetObjectAttr { id: d, change: grow_dir }), FailureKind::IsDirectory);
    let chmod = AttrChange { mode: Some(0o700), ..AttrChange::default() };
    apply(Mutation::SetObjectAttr { id: d, change: chmod }).unwrap();
    apply(Mutation::Rename {
        from: (ROOT_ID, 0),
        from_name: b"a".to_vec(),
        from_hash: name_hash(b"a"),
        to: (d, 0),
        to_name: b"c".to_vec(),
        to_hash: name_hash(b"c"),
        expect_id: 0,
        replace_id: 0,
    })
    .unwrap();
    apply(unlink(d, "b", false)).unwrap();
    refused_as(apply(Mutation::Seal { at: (d, 0), seal: true }), FailureKind::NotEmpty);
    apply(unlink(d, "c", false)).unwrap();
    apply(Mutation::Seal { at: (d, 0), seal: true }).unwrap();
    apply(Mutation::DropPartition { at: (d, 0) }).unwrap();
    apply(Mutation::RemoveDir { dir: d }).unwrap();
    refused_as(apply(Mutation::RemoveDir { dir: d }), FailureKind::NotFound);
    apply(unlink(ROOT_ID, "d", true)).unwrap();
    apply(create(ROOT_ID, "e", Kind::File, 0)).unwrap();
}

/// The store's contents with the times (which come from the clock) zeroed.
fn timeless(store: &Store) -> Vec<DumpedItem> {
    fn zero(attrs: &mut Option<Attrs>) {
        let attrs = attrs.get_or_insert_default();
        (attrs.atime_ns, attrs.mtime_ns, attrs.ctime_ns) = (0, 0, 0);
    }
    let mut items = store.dump().unwrap();
    for (keyspace, _, value) in &mut items {
        match keyspace.as_str() {
            "dirs" => {
                let mut meta = DirMeta::decode(value.as_slice()).unwrap();
                zero(&mut meta.attrs);
                *value = meta.encode_to_vec();
            }
            "inodes" => {
                let mut inode = InodeRecord::decode(value.as_slice()).unwrap();
                zero(&mut inode.attrs);
                *value = inode.encode_to_vec();
            }
            "entries" => {
                let mut record = EntryRecord::decode(value.as_slice()).unwrap();
                if let Some(inode) = &mut record.inode {
                    zero(&mut inode.attrs);
                }
                *value = record.encode_to_vec();
            }
            _ => {}
        }
    }
    items
}

#[test]
fn one_batch_leaves_the_store_as_one_commit_per_mutation() {
    let (opens, touches) = (OpenRefs::default(), Touches::default());
    let (grouped_inline, single_inline) = (InlineIndex::default(), InlineIndex::default());

    let grouped_dir = tempfile::tempdir().unwrap();
    let grouped = Store::open(grouped_dir.path()).unwrap();
    let mut counters = Counters::default();
    let shared = Shared { opens: &opens, touches: &touches, inline: &grouped_inline };
    let mut batch = Batch::new(&grouped, 0, &mut counters, shared);
    script(&mut |mutation| batch.apply(mutation));
    batch.commit().unwrap();

    let single_dir = tempfile::tempdir().unwrap();
    let single = Store::open(single_dir.path()).unwrap();
    let mut counters = Counters::default();
    script(&mut |mutation| {
        let shared = Shared { opens: &opens, touches: &touches, inline: &single_inline };
        let mut batch = Batch::new(&single, 0, &mut counters, shared);
        let outcome = batch.apply(mutation);
        batch.commit().unwrap();
        outcome
    });

    let state = timeless(&grouped);
    assert!(state.iter().any(|(keyspace, ..)| keyspace == "dirs"), "the root is there");
    let inline = |(keyspace, _, value): &DumpedItem| {
        keyspace == "entries" && EntryRecord::decode(value.as_slice()).unwrap().inode.is_some()
    };
    assert!(state.iter().any(inline), "and file e, inline in its entry");
    assert_eq!(state, timeless(&single));
}
