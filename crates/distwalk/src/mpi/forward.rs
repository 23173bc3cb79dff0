//! Output from ranks other than 0 travels to rank 0, which writes it: workers write into a queue
//! (whole batches of lines, tagged with their channel: 0 is stdout, the others are output files
//! opened on rank 0 only), the communication thread ships it during the walk, and [`finish`]
//! delivers the rest at the end.

use super::protocol::{OUTPUT, OUTPUT_END};
use canopy_engine::output::Sink;
use canopy_transport::mpi::Transport;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// While a walk runs, writers wait when this much output is queued (back-pressure).
const QUEUE_LIMIT: usize = 16 << 20;

#[derive(Default)]
pub struct Forwarder {
    queue: Mutex<Queue>,
    drained: Condvar,
    /// Rank 0: where each channel's bytes go.
    sinks: Mutex<Vec<Arc<Sink>>>,
    /// Rank 0: end markers received so far. A rank that finishes early sends its marker while rank
    /// 0 may still be leaving the walk, so whichever loop receives it counts it here.
    ended: std::sync::atomic::AtomicU32,
}

#[derive(Default)]
struct Queue {
    /// Each batch starts with its channel byte.
    batches: VecDeque<Vec<u8>>,
    bytes: usize,
    /// A communication thread is draining the queue (so writers may wait for room).
    draining: bool,
}

impl Forwarder {
    pub fn writer(self: &Arc<Self>, channel: u8) -> ForwardWriter {
        ForwardWriter { forwarder: Arc::clone(self), channel }
    }

    /// Rank 0: the sinks forwarded output is written to, by channel.
    pub fn set_sinks(&self, sinks: Vec<Arc<Sink>>) {
        *self.sinks.lock().unwrap_or_else(|e| e.into_inner()) = sinks;
    }

    /// Rank 0: another rank has no more output.
    pub fn note_end(&self) {
        self.ended.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Rank 0: writes a forwarded batch to its channel's sink.
    pub fn print(&self, batch: &[u8]) {
        let Some((&channel, bytes)) = batch.split_first() else { return };
        let sinks = self.sinks.lock().unwrap_or_else(|e| e.into_inner());
        match sinks.get(usize::from(channel)) {
            Some(sink) => {
                let _ = sink.write_all(bytes);
            }
            None => {
                let _ = std::io::stdout().lock().write_all(bytes);
            }
        }
    }

    pub fn set_draining(&self, draining: bool) {
        self.lock().draining = draining;
        self.drained.notify_all();
    }

    /// Takes everything queued.
    pub fn take(&self) -> Vec<Vec<u8>> {
        let mut q = self.lock();
        q.bytes = 0;
        let batches = q.batches.drain(..).collect();
        self.drained.notify_all();
        batches
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub struct ForwardWriter {
    forwarder: Arc<Forwarder>,
    channel: u8,
}

impl Write for ForwardWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let forwarder = &self.forwarder;
        let mut q = forwarder.lock();
        while q.draining && q.bytes > QUEUE_LIMIT {
            q = forwarder
                .drained
                .wait_timeout(q, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        q.bytes += buf.len();
        let mut batch = Vec::with_capacity(buf.len() + 1);
        batch.push(self.channel);
        batch.extend_from_slice(buf);
        q.batches.push_back(batch);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Ships queued output to rank 0 (called by the communication loop of non-root ranks).
pub fn ship(transport: &mut Transport<'_>, forwarder: &Forwarder) {
    for batch in forwarder.take() {
        transport.send(0, OUTPUT, batch);
    }
}

/// End of output: every other rank sends what is left and an end marker; rank 0 prints until it
/// has every marker. Messages from one rank arrive in order, so nothing is lost.
pub fn finish(world: &SimpleCommunicator, forwarder: &Forwarder) {
    let mut transport = Transport::new(world);
    if world.rank() != 0 {
        ship(&mut transport, forwarder);
        transport.send(0, OUTPUT_END, Vec::new());
        transport.flush();
        return;
    }
    let others = world.size() as u32 - 1;
    while forwarder.ended.load(std::sync::atomic::Ordering::SeqCst) < others {
        match transport.poll() {
            Some(m) if m.tag == OUTPUT => forwarder.print(&m.bytes),
            Some(m) if m.tag == OUTPUT_END => forwarder.note_end(),
            Some(_) => {} // stale control messages from the walk carry nothing
            None => std::thread::sleep(Duration::from_micros(100)),
        }
    }
    for sink in forwarder.sinks.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        let _ = sink.flush();
    }
}
