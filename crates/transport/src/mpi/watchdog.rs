//! Detects a rank that stopped answering (stopped with SIGSTOP, cut off by the network, dead without
//! MPI noticing) and aborts the job instead of letting every other rank wait for it forever.
//!
//! Each rank runs one heartbeat thread from `MPI_Init` to the end, on a communicator of its own, so
//! its messages never mix with the walk's or the group layer's. The thread answers every ping at
//! once, whatever the rest of the process is doing — walking a huge directory, writing output to a
//! slow reader, merging results, waiting in a collective — so a busy rank never looks stopped.
//! Once a walk has set a timeout ([`Watchdog::arm`]), it also pings its successor in the ring
//! (rank + 1 mod size) every quarter of the timeout; when the successor has not answered for the
//! whole timeout, it names that rank and its host and calls `MPI_Abort`, which ends every process
//! of the job, those blocked in a collective included. Detection costs one ping and one answer per
//! rank and period, whatever the number of ranks.
//!
//! The threads stop together ([`Watchdog`]'s drop, before `MPI_Finalize`): each enters a
//! nonblocking barrier and keeps answering and watching until every rank has entered it, so no rank
//! stops answering while another still watches it.

use mpi::Tag;
use mpi::collective::CommunicatorCollectives;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const PING: Tag = 1;
const ANSWER: Tag = 2;
const HOST: Tag = 3;

/// How often the thread looks at its messages: the delay a ping's answer may add.
const POLL: Duration = Duration::from_millis(20);

/// A communicator the heartbeat thread owns. `MPI_Comm` is a pointer in Open MPI, so the handle
/// is not `Send` by itself.
struct ThreadComm(SimpleCommunicator);

// SAFETY: MPI was initialised with MPI_THREAD_MULTIPLE (checked before a `Watchdog` is made), and
// after the move only the heartbeat thread uses this communicator.
unsafe impl Send for ThreadComm {}

#[derive(Default)]
struct Shared {
    /// The timeout in milliseconds; 0 while no walk asked for one.
    timeout_ms: AtomicU64,
    stop: AtomicBool,
}

pub struct Watchdog {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Watchdog {
    /// Starts this rank's heartbeat thread. Collective over `world` (it duplicates the communicator
    /// and learns the successor's host name); needs MPI_THREAD_MULTIPLE and at least two ranks.
    pub fn start(world: &SimpleCommunicator) -> Watchdog {
        let comm = world.duplicate();
        let successor_host = exchange_host_names(&comm);
        let shared = Arc::new(Shared::default());
        let comm = ThreadComm(comm);
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("heartbeat".into())
                .spawn(move || {
                    let comm = comm;
                    Heartbeat::new(&comm.0, successor_host, &shared).run();
                })
                .expect("a heartbeat thread")
        };
        Watchdog { shared, thread: Mutex::new(Some(thread)) }
    }

    /// From now on, a successor silent for `timeout` aborts the job. Later calls change the timeout.
    pub fn arm(&self, timeout: Duration) {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX).max(1);
        self.shared.timeout_ms.store(ms, Ordering::SeqCst);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = thread.join();
        }
    }
}

/// Every rank sends its host name to its predecessor, which watches it.
fn exchange_host_names(comm: &SimpleCommunicator) -> String {
    let (rank, size) = (comm.rank(), comm.size());
    let host = crate::hostname().into_bytes();
    mpi::request::scope(|scope| {
        let sent =
            comm.process_at_rank((rank + size - 1) % size).immediate_send_with_tag(scope, &host[..], HOST);
        let (name, _) = comm.process_at_rank((rank + 1) % size).receive_vec_with_tag::<u8>(HOST);
        sent.wait();
        String::from_utf8_lossy(&name).into_owned()
    })
}

struct Heartbeat<'c> {
    comm: &'c SimpleCommunicator,
    shared: &'c Shared,
    successor: i32,
    successor_host: String,
    /// Sends not yet complete (answers, pings); their buffers are empty and static.
    sends: Vec<Request<'static, [u8], StaticScope>>,
    /// When the successor last answered (or when watching began).
    last_answer: Instant,
    /// A ping awaits its answer.
    pinged: bool,
    watching: bool,
}

impl<'c> Heartbeat<'c> {
    fn new(comm: &'c SimpleCommunicator, successor_host: String, shared: &'c Shared) -> Self {
        Heartbeat {
            comm,
            shared,
            successor: (comm.rank() + 1) % comm.size(),
            successor_host,
            sends: Vec::new(),
            last_answer: Instant::now(),
            pinged: false,
            watching: false,
        }
    }

    fn run(mut self) {
        let mut barrier: Option<Request<'static, ()>> = None;
        loop {
            self.answer();
            self.watch();
            self.sends =
                std::mem::take(&mut self.sends).into_iter().filter_map(|send| send.test().err()).collect();
            if barrier.is_none() && self.shared.stop.load(Ordering::SeqCst) {
                barrier = Some(self.comm.immediate_barrier());
            }
            if let Some(pending) = barrier.take() {
                match pending.test() {
                    Ok(_) => break,
                    Err(pending) => barrier = Some(pending),
                }
            }
            std::thread::sleep(POLL);
        }
        // Everyone has stopped watching: what is still in flight is a ping or answer nobody awaits.
        for send in self.sends.drain(..) {
            std::mem::forget(send);
        }
    }

    /// Answers the pings that arrived, and notes the successor's answers.
    fn answer(&mut self) {
        while let Some((message, status)) = self.comm.any_process().immediate_matched_probe() {
            let (_, status) = (message, status).matched_receive_vec::<u8>();
            match status.tag() {
                PING => self.send(status.source_rank(), ANSWER),
                ANSWER => {
                    self.last_answer = Instant::now();
                    self.pinged = false;
                }
                _ => {}
            }
        }
    }

    /// Pings the successor, and aborts the job when it has been silent for the timeout.
    fn watch(&mut self) {
        let ms = self.shared.timeout_ms.load(Ordering::SeqCst);
        if ms == 0 {
            return;
        }
        let timeout = Duration::from_millis(ms);
        if !self.watching {
            self.watching = true;
            self.last_answer = Instant::now();
        }
        if self.last_answer.elapsed() >= timeout {
            self.abort(timeout);
        }
        if !self.pinged && self.last_answer.elapsed() >= timeout / 4 {
            self.send(self.successor, PING);
            self.pinged = true;
        }
    }

    fn send(&mut self, to: i32, tag: Tag) {
        const EMPTY: &[u8] = &[];
        self.sends.push(self.comm.process_at_rank(to).immediate_send_with_tag(StaticScope, EMPTY, tag));
    }

    fn abort(&self, timeout: Duration) -> ! {
        // One write: MPI_Abort's own report must not cut through it.
        let line = format!(
            "canopy: rank {} on {} did not answer within {} s (stopped, partitioned or dead); aborting\n",
            self.successor,
            self.successor_host,
            timeout.as_secs_f64()
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
        self.comm.abort(i32::from(crate::NO_ANSWER_EXIT))
    }
}
