//! Termination detection: Dijkstra's token ring as Safra extended it to asynchronous messages
//! (EWD998), which is what an MPI walk needs.
//!
//! Dijkstra's original ring (EWD840, the seed's choice) assumes a message reaches its receiver
//! instantly; with MPI a message can still be in flight while the token passes its receiver, and
//! a rank that has just finished a stolen subtree reports back without being asked. Safra's version
//! keeps the white/black colours and the token, and adds one counter per rank:
//!
//! * every rank counts basic messages (work, completions) sent minus received;
//! * receiving a basic message makes a rank black;
//! * a passive rank holding the token adds its counter to the token, blackens the token if it is
//!   black itself, passes it on and turns white;
//! * rank 0 starts a round with a white token of count 0, and declares termination when the token
//!   comes back white, rank 0 is white and passive, and token count + its own counter is zero.
//!
//! Why that is safe: if the walk were not over when rank 0 decides, some rank is active or some
//! message in flight. Messages in flight make the sum of counters positive — unless a message was
//! received by a rank after the token had passed it and sent by one before the token reached it,
//! but then the receiver is black, and it passes the token again only in a later round, blackened.
//! An active rank does not pass the token, so the round would not have completed. Control messages
//! (work requests, refusals, the token itself) carry no work and are not counted.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    pub count: i64,
    pub black: bool,
}

/// What a rank should do with the token now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Keep waiting (not holding the token, or not passive).
    Wait,
    /// Send this token to the next rank in the ring.
    Forward(Token),
    /// Rank 0: the walk is over everywhere.
    Terminate,
}

/// One rank's side of the algorithm.
#[derive(Debug)]
pub struct Safra {
    rank: u32,
    size: u32,
    counter: i64,
    black: bool,
    token: Option<Token>,
}

impl Safra {
    /// Rank 0 holds a (virtual) token at the start so it can launch the first round.
    pub fn new(rank: u32, size: u32) -> Self {
        let token = (rank == 0).then_some(Token { count: 0, black: true });
        Safra { rank, size, counter: 0, black: false, token }
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn next_rank(&self) -> u32 {
        (self.rank + 1) % self.size
    }

    pub fn sent_basic(&mut self, n: i64) {
        self.counter += n;
    }

    pub fn received_basic(&mut self) {
        self.counter -= 1;
        self.black = true;
    }

    pub fn receive_token(&mut self, token: Token) {
        self.token = Some(token);
    }

    /// Called when the rank is passive (no local work, nothing left to send).
    pub fn on_passive(&mut self) -> Step {
        let Some(token) = self.token.take() else { return Step::Wait };
        if self.size == 1 {
            // Alone, the ring is this rank: done once nothing it sent itself is outstanding.
            if self.counter == 0 {
                return Step::Terminate;
            }
            self.token = Some(token);
            return Step::Wait;
        }
        if self.rank == 0 {
            if !token.black && !self.black && token.count + self.counter == 0 {
                return Step::Terminate;
            }
            self.black = false;
            return Step::Forward(Token { count: 0, black: false });
        }
        let forwarded = Token { count: token.count + self.counter, black: token.black || self.black };
        self.black = false;
        Step::Forward(forwarded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The randomised never-early/always-eventually check runs the ring through
    // [`crate::termination::Detector`], beside the tree detector.

    #[test]
    fn single_rank_terminates_when_passive() {
        let mut s = Safra::new(0, 1);
        assert_eq!(s.on_passive(), Step::Terminate);
    }
}
