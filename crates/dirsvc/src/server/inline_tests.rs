//! Inodes inline in their entries and moved out: each transition through the writer's batches, then
//! what a reader by id, the index rebuilt from the store, and fsck's scan see.

use prost::Message;

use super::{InlineIndex, read_inode};
use crate::fsck::{Scanned, analyze};
use crate::ids::ROOT_ID;
use crate::mapping::name_hash;
use crate::proto::{Attrs, EntryRecord, InodeRecord, Kind, ScanTable};
use crate::server::apply::{Batch, Counters, Shared};
use crate::server::mutation::{Mutation, Outcome, Refusal};
use crate::server::open_refs::OpenRefs;
use crate::server::repair::scan;
use crate::server::store::{self, Store, entry_key};
use crate::server::touches::Touches;

const SESSION: u64 = 7;

/// One server's store, index and shared state; each mutation is one committed batch.
struct Server {
    _dir: tempfile::TempDir,
    store: Store,
    inline: InlineIndex,
    opens: OpenRefs,
    touches: Touches,
    counters: Counters,
}

impl Server {
    /// Server 0 of `servers`, its root with one active partition, splitting above `split_threshold`.
    fn new(servers: u32, split_threshold: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut server = Self {
            _dir: dir,
            store,
            inline: InlineIndex::default(),
            opens: OpenRefs::default(),
            touches: Touches::default(),
            counters: Counters::default(),
        };
        server.ok(Mutation::Format { index: 0, servers, root_partitions: 1, split_threshold });
        server
    }

    fn apply(&mut self, mutation: Mutation) -> Result<Outcome, Refusal> {
        let shared = Shared { opens: &self.opens, touches: &self.touches, inline: &self.inline };
        let mut batch = Batch::new(&self.store, 0, &mut self.counters, shared);
        let outcome = batch.apply(mutation);
        let reaped = std::mem::take(&mut batch.reaped);
        batch.commit().unwrap();
        self.opens.reaped_committed(&reaped);
        outcome
    }

    fn ok(&mut self, mutation: Mutation) -> Outcome {
        self.apply(mutation).unwrap()
    }

    /// Creates file `name` in the root (opened by `session` unless 0): its id.
    fn create(&mut self, name: &str, session: u64) -> u64 {
        let attrs = Attrs { kind: Kind::File as i32, mode: 0o644, ..Attrs::default() };
        let Outcome::Entry(entry) = self.ok(create(name, attrs, 0, 0, session)) else { panic!("create") };
        assert_eq!(entry.attrs.map(|a| a.nlink), Some(1), "the answer shows the new inode");
        entry.id
    }

    /// A second name for `id` as a client makes it: AddLink, then the entry.
    fn link(&mut self, id: u64, name: &str) {
        let add = Mutation::AddLink { id, dir: ROOT_ID, name: name.into() };
        let Outcome::Linked(intent, object) = self.ok(add) else { panic!("add link") };
        let attrs = object.attrs.unwrap();
        self.ok(create(name, attrs, id, intent, 0));
    }

    fn unlink(&mut self, name: &str) {
        let hash = name_hash(name.as_bytes());
        self.ok(Mutation::Unlink {
            at: (ROOT_ID, 0),
            name: name.into(),
            hash,
            expect_id: 0,
            directory: false,
        });
    }

    fn write(&mut self, id: u64, data: &[u8]) {
        self.ok(Mutation::WriteData { file: id, offset: 0, data: data.to_vec() });
    }

    /// The entry `name` of the root's partition `partition` as stored.
    fn entry(&self, partition: u32, name: &str) -> Option<EntryRecord> {
        store::get_entry(&self.store.snapshot(), &self.store, ROOT_ID, partition, name.as_bytes()).unwrap()
    }

    fn stored_inode(&self, id: u64) -> Option<InodeRecord> {
        store::get_inode(&self.store.snapshot(), &self.store, id).unwrap()
    }

    /// Inode `id` as a reader by id finds it.
    fn read(&self, id: u64) -> Option<InodeRecord> {
        read_inode(&self.store, &self.inline, id).unwrap().1
    }

    fn nlink(&self, id: u64) -> Option<u32> {
        self.read(id).map(|inode| inode.attrs.unwrap().nlink)
    }

    fn has_data(&self, id: u64) -> bool {
        crate::server::data::data_ids(&self.store.snapshot(), &self.store, id.saturating_sub(1), 1)
            .unwrap()
            .contains(&id)
    }
}

fn create(name: &str, attrs: Attrs, id: u64, link_intent: u64, open_session: u64) -> Mutation {
    Mutation::Create {
        at: (ROOT_ID, 0),
        name: name.into(),
        hash: name_hash(name.as_bytes()),
        attrs,
        id,
        replace_id: 0,
        target: Vec::new(),
        link_intent,
        open_session,
    }
}

#[test]
fn a_create_writes_one_entry_holding_its_inode_which_readers_find_by_id() {
    let mut server = Server::new(1, 0);
    let id = server.create("a", 0);
    server.write(id, b"hello");
    let held = server.entry(0, "a").unwrap().inode.expect("the inode is in the entry");
    assert_eq!(held.attrs.unwrap().size, 5, "a write changed the inline inode");
    assert_eq!(server.stored_inode(id), None, "and wrote no inode key");
    assert_eq!(server.read(id), Some(held.clone()));

    // A restarted server finds it from its entries.
    let rebuilt = InlineIndex::load(&server.store).unwrap();
    assert_eq!(read_inode(&server.store, &rebuilt, id).unwrap().1, Some(held));
    assert_eq!(
        read_inode(&server.store, &InlineIndex::default(), id).unwrap().1,
        None,
        "only through the index"
    );
}

#[test]
fn the_first_link_moves_the_inode_out_for_good_and_the_last_unlink_removes_it() {
    let mut server = Server::new(1, 0);
    let id = server.create("a", 0);
    server.write(id, b"data");
    server.link(id, "b");
    assert_eq!(server.entry(0, "a").unwrap().inode, None, "moved out of its entry");
    assert_eq!(server.stored_inode(id).unwrap().attrs.unwrap().nlink, 2);
    assert_eq!(server.nlink(id), Some(2));

    server.unlink("a");
    assert_eq!(server.nlink(id), Some(1), "back to one name");
    assert_eq!(server.entry(0, "b").unwrap().inode, None, "and it stays out");
    assert!(server.has_data(id));

    server.unlink("b");
    assert_eq!(server.read(id), None);
    assert_eq!(server.stored_inode(id), None);
    assert!(!server.has_data(id), "the data went with the last name");
}

#[test]
fn unlinking_an_inline_file_removes_inode_and_data_with_its_entry() {
    let mut server = Server::new(1, 0);
    let id = server.create("a", 0);
    server.write(id, b"data");
    server.unlink("a");
    assert_eq!(server.read(id), None);
    assert!(!server.has_data(id));
    assert!(
        server.store.dump().unwrap().iter().all(|(keyspace, ..)| keyspace != "inodes"),
        "no tombstone to read"
    );
}

#[test]
fn a_rename_over_an_inline_file_removes_it_and_carries_the_renamed_inode() {
    let mut server = Server::new(1, 0);
    let moving = server.create("a", 0);
    let victim = server.create("b", 0);
    server.write(victim, b"old");
    let rename = Mutation::Rename {
        from: (ROOT_ID, 0),
        from_name: b"a".to_vec(),
        from_hash: name_hash(b"a"),
        to: (ROOT_ID, 0),
        to_name: b"b".to_vec(),
        to_hash: name_hash(b"b"),
        expect_id: 0,
        replace_id: victim,
    };
    let before = server.read(moving).unwrap().attrs.unwrap().ctime_ns;
    let Outcome::Entry(answer) = server.ok(rename) else { panic!("rename") };
    assert_eq!(server.read(victim), None, "the replaced file is gone");
    assert!(!server.has_data(victim));
    assert_eq!(server.entry(0, "a"), None);
    let held = server.entry(0, "b").unwrap();
    assert_eq!(held.id, moving);
    let ctime = held.inode.expect("still inline, under its new name").attrs.unwrap().ctime_ns;
    assert!(ctime >= before);
    assert_eq!(answer.attrs.unwrap().ctime_ns, ctime, "the answer shows the new ctime");
    assert_eq!(server.nlink(moving), Some(1), "found by id at its new key");
    assert_eq!(server.inline.keys(moving), vec![entry_key(ROOT_ID, 0, b"b")]);
}

#[test]
fn an_open_inline_file_outlives_its_unlink_until_closed() {
    let mut server = Server::new(1, 0);
    let id = server.create("a", SESSION);
    server.write(id, b"kept");
    server.unlink("a");
    assert_eq!(server.stored_inode(id).unwrap().attrs.unwrap().nlink, 0, "moved out with no name");
    assert_eq!(server.nlink(id), Some(0));
    assert!(server.has_data(id));

    assert!(server.opens.close(id, SESSION), "the last open");
    server.ok(Mutation::Reclaim { ids: vec![id] });
    assert_eq!(server.read(id), None);
    assert!(!server.has_data(id));
}

#[test]
fn a_split_moves_the_inodes_of_the_names_it_sends_away_out_of_their_entries() {
    let mut server = Server::new(2, 1);
    let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let ids: Vec<u64> = names.iter().map(|name| server.create(name, 0)).collect();
    let Outcome::Split(plan) = server.ok(Mutation::SplitBegin { at: (ROOT_ID, 0) }) else { panic!("split") };
    server.ok(Mutation::SplitFinish { at: (ROOT_ID, 0) });
    let mut moved = 0;
    for (name, &id) in names.iter().zip(&ids) {
        let leaves = crate::mapping::owns(plan.child, plan.level + 1, name_hash(name.as_bytes()));
        assert_eq!(server.entry(0, name).is_none(), leaves, "{name}");
        assert_eq!(server.stored_inode(id).is_some(), leaves, "{name}: moved out when its name left");
        assert_eq!(server.nlink(id), Some(1), "{name}: found by id either way");
        moved += usize::from(leaves);
    }
    assert!(moved > 0 && moved < names.len(), "{moved} of {} names moved", names.len());
}

#[test]
fn fsck_counts_inline_and_moved_out_inodes_alike_and_finds_nothing_to_repair() {
    let mut server = Server::new(1, 0);
    let inline = server.create("a", 0);
    let linked = server.create("b", 0);
    server.link(linked, "c");
    let mut scanned = Scanned::default();
    for table in [ScanTable::ScanInodes, ScanTable::ScanEntries, ScanTable::ScanDirs, ScanTable::ScanData] {
        let page = scan(&server.store.snapshot(), &server.store, &server.opens, table, &[], 100).unwrap();
        scanned.inodes.extend(page.inodes.into_iter().map(|i| (0, i)));
        scanned.entries.extend(page.entries.into_iter().map(|e| (0, e)));
        scanned.dirs.extend(page.dirs.into_iter().map(|d| (0, d)));
    }
    let ids: Vec<u64> = scanned.inodes.iter().map(|(_, inode)| inode.id).collect();
    assert!(ids.contains(&inline) && ids.contains(&linked), "{ids:?}");
    let findings = analyze(&scanned);
    assert_eq!((findings.inodes, findings.entries), (2, 3));
    assert_eq!(findings.problems, Vec::new());

    // A count left too high on an inline inode is repaired in its entry.
    let mut wrong = server.read(inline).unwrap();
    wrong.attrs.as_mut().unwrap().nlink = 2;
    let mut record = server.entry(0, "a").unwrap();
    record.inode = Some(wrong);
    let mut tx = server.store.durable_tx();
    tx.insert(&server.store.entries, entry_key(ROOT_ID, 0, b"a"), record.encode_to_vec());
    tx.commit().unwrap();
    let set = crate::proto::SetLinkCount { id: inline, from: 2, to: 1 };
    server.ok(Mutation::Repair(crate::proto::repair_request::Action::LinkCount(set)));
    assert_eq!(server.entry(0, "a").unwrap().inode.unwrap().attrs.unwrap().nlink, 1);
    assert_eq!(server.stored_inode(inline), None);
}
