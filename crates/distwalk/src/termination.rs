//! Termination detection behind one interface: Safra's token ring ([`crate::safra`]) or the same
//! counting run as waves over a k-ary tree of ranks ([`TreeWave`]).
//!
//! A ring round visits the ranks one after another: P hops, each waiting for its rank's next poll —
//! at 10⁴ ranks a round takes a large fraction of a second, and the walk's end is known only a round
//! or two after it happened. A wave reaches every rank down a tree and comes back up in 2·log_k(P)
//! hops; it costs 2(P−1) messages against the ring's P, but only when ranks go passive.
//!
//! Why the wave is as safe as the ring: every rank still contributes its counter (basic messages
//! sent − received) once per wave, when passive, and is black if it received a basic message since
//! its contribution to the previous wave. The root declares termination when the wave comes back
//! white with a total of zero. Waves do not overlap, so any basic message counted as received in a
//! wave was received before its receiver's previous contribution, hence sent before its sender's
//! contribution to this wave, and counted as sent: a total of zero then means no message sent before
//! its sender contributed is still unreceived. A rank active after contributing must have received a
//! message after it; the earliest such message was sent by a rank that was still passive after its own
//! contribution — sent before it, counted and unreceived: a contradiction. The order in which ranks
//! contribute plays no part, which is why a tree serves as well as a ring.

use crate::kary;
use crate::safra::{Safra, Step, Token};
use serde::{Deserialize, Serialize};

/// A control message of a detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Signal {
    /// The ring's token.
    Token(Token),
    /// A wave starts: sent down the tree.
    Probe { wave: u32 },
    /// A subtree's contribution to a wave: sent up the tree.
    Reply { wave: u32, count: i64, black: bool },
    /// Termination detected: passed on to every rank (down the tree, or straight from rank 0).
    Stop,
}

/// Which detector a walk uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DetectorKind {
    Ring,
    /// Waves over a tree with this fan-out.
    Tree {
        fanout: u32,
    },
}

impl DetectorKind {
    /// Ranks up to which the ring is used: its round of P hops is then a millisecond or two, and it
    /// sends half the messages of a wave.
    pub const RING_MAX: u32 = 64;

    /// The ring for small jobs, the tree above [`DetectorKind::RING_MAX`] ranks.
    pub fn for_size(size: u32) -> Self {
        if size <= Self::RING_MAX { DetectorKind::Ring } else { DetectorKind::Tree { fanout: kary::FANOUT } }
    }
}

/// One rank's side of a detector.
#[derive(Debug)]
pub enum Detector {
    Ring(Safra),
    Tree(TreeWave),
}

impl Detector {
    pub fn new(kind: DetectorKind, rank: u32, size: u32) -> Self {
        match kind {
            DetectorKind::Ring => Detector::Ring(Safra::new(rank, size)),
            DetectorKind::Tree { fanout } => Detector::Tree(TreeWave::new(rank, size, fanout)),
        }
    }

    /// This rank sent `n` basic messages (messages that carry work or report it done).
    pub fn sent_basic(&mut self, n: i64) {
        match self {
            Detector::Ring(s) => s.sent_basic(n),
            Detector::Tree(t) => t.counter += n,
        }
    }

    /// This rank received a basic message.
    pub fn received_basic(&mut self) {
        match self {
            Detector::Ring(s) => s.received_basic(),
            Detector::Tree(t) => {
                t.counter -= 1;
                t.black = true;
            }
        }
    }

    /// A control message arrived. Signals to send go to `out` (destination, signal); returns true
    /// when the walk is over for this rank (a stop arrived).
    pub fn receive(&mut self, signal: Signal, out: &mut Vec<(u32, Signal)>) -> bool {
        match (self, signal) {
            (Detector::Ring(s), Signal::Token(token)) => s.receive_token(token),
            (Detector::Tree(t), Signal::Probe { wave }) => t.probe(wave, out),
            (Detector::Tree(t), Signal::Reply { wave, count, black }) => t.reply(wave, count, black),
            (Detector::Ring(_), Signal::Stop) => return true,
            (Detector::Tree(t), Signal::Stop) => {
                t.over = true;
                out.extend(t.children().map(|c| (c, Signal::Stop)));
                return true;
            }
            (detector, signal) => debug_assert!(false, "{signal:?} is not a signal of {detector:?}"),
        }
        false
    }

    /// Called when the rank is passive (no local work, nothing left to send). Signals to send go to
    /// `out`; returns true when this rank (rank 0) has detected termination — the stop signals for
    /// the other ranks are then in `out` already.
    pub fn on_passive(&mut self, out: &mut Vec<(u32, Signal)>) -> bool {
        match self {
            Detector::Ring(s) => match s.on_passive() {
                Step::Wait => false,
                Step::Forward(token) => {
                    out.push((s.next_rank(), Signal::Token(token)));
                    false
                }
                Step::Terminate => {
                    out.extend((1..s.size()).map(|r| (r, Signal::Stop)));
                    true
                }
            },
            Detector::Tree(t) => {
                let done = t.on_passive(out);
                if done {
                    out.extend(t.children().map(|c| (c, Signal::Stop)));
                }
                done
            }
        }
    }
}

/// Safra's counting over a k-ary tree ([`crate::kary`]): rank 0 starts a wave
/// when passive; a probe goes down at once; each rank replies up — its counter plus its subtree's,
/// blackened if it or any of them received basic messages — once it is passive and its children
/// have replied.
#[derive(Debug)]
pub struct TreeWave {
    rank: u32,
    size: u32,
    fanout: u32,
    counter: i64,
    black: bool,
    /// The wave this rank is part of and has not answered yet.
    wave: Option<Pending>,
    /// Rank 0: the number of the last wave started.
    waves: u32,
    /// Termination detected here or a stop received: no more waves.
    over: bool,
}

#[derive(Debug)]
struct Pending {
    wave: u32,
    replies_missing: u32,
    count: i64,
    black: bool,
}

impl TreeWave {
    pub fn new(rank: u32, size: u32, fanout: u32) -> Self {
        TreeWave {
            rank,
            size,
            fanout: fanout.max(1),
            counter: 0,
            black: false,
            wave: None,
            waves: 0,
            over: false,
        }
    }

    pub fn parent(&self) -> Option<u32> {
        kary::parent(self.rank, self.fanout)
    }

    pub fn children(&self) -> impl Iterator<Item = u32> + use<> {
        kary::children(self.rank, self.size, self.fanout)
    }

    /// Waves started so far (rank 0).
    pub fn waves(&self) -> u32 {
        self.waves
    }

    fn start(&mut self, wave: u32, out: &mut Vec<(u32, Signal)>) {
        let children: Vec<u32> = self.children().collect();
        out.extend(children.iter().map(|&c| (c, Signal::Probe { wave })));
        self.wave = Some(Pending { wave, replies_missing: children.len() as u32, count: 0, black: false });
    }

    fn probe(&mut self, wave: u32, out: &mut Vec<(u32, Signal)>) {
        self.start(wave, out);
    }

    fn reply(&mut self, wave: u32, count: i64, black: bool) {
        if let Some(p) = self.wave.as_mut().filter(|p| p.wave == wave) {
            p.replies_missing -= 1;
            p.count += count;
            p.black |= black;
        }
    }

    fn on_passive(&mut self, out: &mut Vec<(u32, Signal)>) -> bool {
        if self.over {
            return false;
        }
        if self.rank == 0 && self.wave.is_none() {
            self.waves += 1;
            self.start(self.waves, out);
        }
        let Some(p) = self.wave.as_ref().filter(|p| p.replies_missing == 0) else { return false };
        let (count, black) = (p.count + self.counter, p.black || self.black);
        let wave = p.wave;
        self.wave = None;
        self.black = false;
        match self.parent() {
            Some(parent) => {
                out.push((parent, Signal::Reply { wave, count, black }));
                false
            }
            None if !black && count == 0 => {
                self.over = true;
                true
            }
            None => {
                // Not yet: the next wave starts at once (it waits for every rank to be passive).
                self.waves += 1;
                self.start(self.waves, out);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Ranks hold units of work; doing one may send work to another rank (a basic message that
    /// arrives after a random delay), and signals take random delays too. With either detector,
    /// termination must be detected, never while work exists or is in flight, and every rank must
    /// learn of it.
    fn never_early_always_eventually(kind: impl Fn(u32) -> DetectorKind) {
        for seed in 0..600u64 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let size = rng.u32(1..40);
            let kind = kind(size);
            let mut ranks: Vec<Detector> = (0..size).map(|r| Detector::new(kind, r, size)).collect();
            let mut stopped = vec![false; size as usize];
            let mut work: Vec<u32> = vec![0; size as usize];
            work[rng.usize(0..size as usize)] = rng.u32(1..40);
            let mut in_flight: VecDeque<(u32, u32, u32)> = VecDeque::new(); // (arrive step, to, units)
            let mut signals: VecDeque<(u32, u32, Signal)> = VecDeque::new(); // (arrive step, to, signal)
            let mut budget = 300u32;
            let mut out = Vec::new();
            let mut detected = false;
            for step in 0..200_000u32 {
                for _ in 0..in_flight.len() {
                    let (when, to, units) = in_flight.pop_front().unwrap();
                    if when <= step {
                        work[to as usize] += units;
                        ranks[to as usize].received_basic();
                    } else {
                        in_flight.push_back((when, to, units));
                    }
                }
                for _ in 0..signals.len() {
                    let (when, to, signal) = signals.pop_front().unwrap();
                    if when > step {
                        signals.push_back((when, to, signal));
                        continue;
                    }
                    if ranks[to as usize].receive(signal, &mut out) {
                        stopped[to as usize] = true;
                    }
                    for (next, signal) in out.drain(..) {
                        assert_ne!(next, to, "seed {seed}: a rank signalled itself");
                        signals.push_back((step + rng.u32(0..20), next, signal));
                    }
                }
                let r = rng.usize(0..size as usize);
                if work[r] > 0 {
                    work[r] -= 1;
                    if budget > 0 && rng.bool() {
                        let units = rng.u32(1..4).min(budget);
                        budget -= units;
                        ranks[r].sent_basic(1);
                        in_flight.push_back((step + rng.u32(0..50), rng.u32(0..size), units));
                    }
                } else if !stopped[r] && ranks[r].on_passive(&mut out) {
                    assert!(work.iter().all(|&w| w == 0), "seed {seed}: terminated with work left");
                    assert!(in_flight.is_empty(), "seed {seed}: terminated with work in flight");
                    assert_eq!(r, 0, "seed {seed}: only rank 0 detects");
                    stopped[0] = true;
                    detected = true;
                }
                for (to, signal) in out.drain(..) {
                    assert_ne!(to, r as u32, "seed {seed}: a rank signalled itself");
                    signals.push_back((step + rng.u32(0..20), to, signal));
                }
                if stopped.iter().all(|&s| s) && signals.is_empty() {
                    break;
                }
            }
            assert!(detected, "seed {seed}: termination never detected");
            assert!(stopped.iter().all(|&s| s), "seed {seed}: a rank never learned of the end");
        }
    }

    #[test]
    fn ring_never_early_always_eventually() {
        never_early_always_eventually(|_| DetectorKind::Ring);
    }

    #[test]
    fn tree_never_early_always_eventually() {
        never_early_always_eventually(|size| DetectorKind::Tree { fanout: 1 + size % 5 });
    }

    #[test]
    fn one_rank_detects_at_once_with_no_messages() {
        for kind in [DetectorKind::Ring, DetectorKind::Tree { fanout: 4 }] {
            let mut d = Detector::new(kind, 0, 1);
            let mut out = Vec::new();
            assert!(d.on_passive(&mut out), "{kind:?}");
            assert!(out.is_empty());
        }
    }

    /// With every rank passive from the start, a wave needs 2(P−1) messages and then P−1 stops;
    /// a rank that received work blackens the first wave, so a second one is needed.
    #[test]
    fn wave_message_counts() {
        let size = 13u32;
        let run = |blacken: bool| {
            let mut ranks: Vec<Detector> =
                (0..size).map(|r| Detector::new(DetectorKind::Tree { fanout: 3 }, r, size)).collect();
            if blacken {
                ranks[5].received_basic();
                ranks[0].sent_basic(1);
            }
            let mut queue: VecDeque<(u32, Signal)> = VecDeque::new();
            let mut out = Vec::new();
            let (mut messages, mut stops) = (0, 0);
            let mut detected = false;
            loop {
                for r in (0..size).rev() {
                    detected |= ranks[r as usize].on_passive(&mut out);
                }
                queue.extend(out.drain(..));
                let Some((to, signal)) = queue.pop_front() else { break };
                messages += 1;
                stops += usize::from(signal == Signal::Stop);
                ranks[to as usize].receive(signal, &mut out);
            }
            assert!(detected);
            (messages - stops, stops)
        };
        assert_eq!(run(false), (2 * 12, 12));
        assert_eq!(run(true), (2 * 2 * 12, 12));
    }
}
