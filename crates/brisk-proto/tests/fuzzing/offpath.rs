//! The off-path world: a stranger who knows both endpoints' addresses and
//! ports, but has never seen a packet of theirs, sends packets of every chunk
//! type that claim to come from the peer. It knows no verification tag, no
//! cookie, no heartbeat nonce.
//!
//! The invariant (RFC 9260 8.5, 8.5.1, 5.1.5, 11.2.5): such a packet changes
//! nothing an application can see. The endpoint it reaches emits no event
//! while handling it: no restart, no stream or association reset, no new
//! streams, no close, no message, no path change. (It may still answer, as
//! 8.4 and 5.2.1 say: an INIT gets an INIT ACK, which the real peer discards.)

use super::{A, B, NAMES, World, generate};

/// Whether a case is an off-path world, from B's endpoint seed: one in four.
pub fn enabled(b_seed: u32) -> bool {
    b_seed >> 30 == 1
}

impl World<'_> {
    /// One packet from the off-path stranger to `to`, checked at once.
    pub(super) fn inject_offpath(&mut self, to: usize) {
        // Events already due belong to earlier steps.
        self.drain_events();
        let known: Vec<u32> = [A, B].iter().filter_map(|&s| self.seen[s].tag).collect();
        let mut aim = self.aim(to);
        let d = &mut self.d;
        let mut guess = || loop {
            let t = d.u32();
            if t != 0 && !known.contains(&t) {
                break t;
            }
        };
        aim.tag = guess();
        aim.peer_tag = guess();
        aim.cookie = None;
        aim.hb_info = None;
        aim.own_packet = None;
        let pkt = generate::packet(&mut self.d, &aim);
        self.disturbed = true;
        self.tally.injected += 1;
        let from = self.addrs[1 - to];
        self.log(|| {
            format!(
                "off-path stranger to {} as {from}: {}",
                NAMES[to],
                super::describe(&pkt)
            )
        });
        self.eps[to].handle_datagram(self.now, from, &pkt);
        if let Some((id, e)) = self.eps[to].poll_event() {
            self.fail(format!(
                "an off-path packet ({}) made {} {id:?} emit {e:?}",
                super::describe(&pkt),
                NAMES[to]
            ));
        }
        self.settle();
    }
}
