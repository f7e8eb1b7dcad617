//! The driver task: moves datagrams between the transport (the UDP socket,
//! or the application's) and the protocol endpoint, fires its timers, and
//! wakes the handles its events concern.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use brisk_proto::Event;

use crate::shared::{Shared, Slot, State};
use crate::timer::Timer;
use crate::transport::{DatagramTransport, RecvErrors};

/// Datagrams read per wake-up before the replies go out.
const READ_BATCH: usize = 64;

/// The shortest wait after a pass whose past deadline produced no work.
const STALL_WAIT: Duration = Duration::from_millis(1);

/// Runs the endpoint over `transport` until it is closed or dropped, or the
/// transport fails (where `recv_errors` says its errors are fatal). Generic,
/// so the UDP socket's calls are direct: no boxing per datagram.
pub(crate) async fn run<T: DatagramTransport>(
    shared: Arc<Shared>,
    transport: T,
    recv_errors: RecvErrors,
) {
    drive(&shared, &transport, recv_errors).await;
    // Whatever stopped the driver, no call may wait for it any longer.
    let st = shared.lock();
    for slot in st.slots.values() {
        slot.notify.notify_waiters();
    }
    shared.accept.notify_waiters();
}

async fn drive<T: DatagramTransport>(shared: &Shared, transport: &T, recv_errors: RecvErrors) {
    let timer = match Timer::new() {
        Ok(t) => t,
        Err(e) => {
            // No timerfd (a sandbox without it): nothing can be timed, so
            // the endpoint stops, and its handles say why.
            shared.lock().stopped = Some(format!("cannot create the driver's timer: {e}"));
            return;
        }
    };
    let mut rx = vec![0u8; 65_536];
    let mut tx = Vec::with_capacity(64 * 1500);
    let mut out: Vec<(SocketAddr, usize, usize)> = Vec::new();
    // Set when the last pass handled a deadline already past and sent nothing,
    // yet the deadline stayed past: the next wait is then at least STALL_WAIT.
    let mut stalled = false;
    loop {
        let deadline = {
            let st = shared.lock();
            if st.stopped.is_some() {
                return;
            }
            st.proto.poll_timeout()
        };
        let mut sleep = deadline.map(|t| shared.instant(t));
        if stalled {
            // Never spin on a deadline that produces no work.
            sleep = Some(std::time::Instant::now() + STALL_WAIT);
        }
        tx.clear();
        out.clear();
        tokio::select! {
            biased;
            _ = shared.wake.notified() => {}
            r = transport.recv_from(&mut rx) => {
                if let (Err(e), RecvErrors::Fatal) = (&r, recv_errors) {
                    // The application's transport has ended: stop, and say why.
                    let mut st = shared.lock();
                    st.stopped = Some(format!("the datagram transport failed: {e}"));
                    st.transport_failed = Some(e.to_string());
                    return;
                }
                if let Ok((n, from)) = r {
                    let mut st = shared.lock();
                    let now = shared.now();
                    // A transport's length is believed only as far as the
                    // buffer goes: a bug there must not panic the driver.
                    st.proto.handle_datagram(now, from, &rx[..n.min(rx.len())]);
                    // Each datagram's answer is taken before the next is read:
                    // a batch of out-of-order packets gets a SACK each (RFC
                    // 9260 6.7), as a kernel stack sends them, not one for all,
                    // which would hide miss indications from the sender.
                    collect(&mut st, now, &mut tx, &mut out);
                    for _ in 1..READ_BATCH {
                        match transport.try_recv_from(&mut rx) {
                            Ok((n, from)) => {
                                st.proto.handle_datagram(now, from, &rx[..n.min(rx.len())]);
                                collect(&mut st, now, &mut tx, &mut out);
                            }
                            Err(_) => break,
                        }
                    }
                }
                // A socket error on receive (an ICMP error reported late) is not
                // fatal: SCTP recovers from loss by itself.
            }
            _ = timer.sleep_until(sleep.unwrap_or_else(far_future)), if sleep.is_some() => {}
        }
        {
            let mut st = shared.lock();
            let now = shared.now();
            st.proto.handle_timeout(now);
            collect(&mut st, now, &mut tx, &mut out);
            dispatch(shared, &mut st);
            stalled = out.is_empty() && st.proto.poll_timeout().is_some_and(|t| t < now);
            if stalled {
                st.stalled_wakeups += 1;
            }
        }
        for &(dest, start, len) in &out {
            let packet = &tx[start..start + len];
            if transport.try_send_to(packet, dest).is_err() {
                // The socket buffer is full (or the destination unreachable):
                // wait for room once; a datagram that still fails is a loss.
                let _ = transport.send_to(packet, dest).await;
            }
        }
    }
}

/// Appends every packet the endpoint has to send to `tx`, noting each one's
/// destination and place in `out`.
fn collect(
    st: &mut State,
    now: brisk_proto::Time,
    tx: &mut Vec<u8>,
    out: &mut Vec<(SocketAddr, usize, usize)>,
) {
    while let Some(t) = st.proto.poll_transmit(now, tx) {
        out.push((t.destination, tx.len() - t.size, t.size));
    }
}

fn far_future() -> std::time::Instant {
    std::time::Instant::now() + Duration::from_secs(86_400)
}

/// Turns protocol events into wake-ups of the waiting handles.
fn dispatch(shared: &Shared, st: &mut State) {
    while let Some((id, event)) = st.proto.poll_event() {
        let is_new = !st.slots.contains_key(&id);
        let slot = st.slots.entry(id).or_insert_with(Slot::new);
        match event {
            Event::Connected => {
                slot.connected = true;
                if is_new {
                    // An association a peer started: hand it to `accept`.
                    st.accepted.push_back(id);
                    shared.accept.notify_one();
                }
            }
            Event::SendFailed { .. } => slot.failed_sends += 1,
            Event::MessageAbandoned { id } => slot.note_abandoned(id),
            Event::Closed(reason) => slot.closed = Some(reason),
            Event::MessageReady | Event::PeerShutdown | Event::Restarted => {}
            Event::StreamsReset { .. }
            | Event::StreamResetFailed { .. }
            | Event::StreamsAdded { .. }
            | Event::StreamsAddFailed { .. }
            | Event::AssociationReset
            | Event::AssociationResetFailed { .. } => {
                if let Some(e) = crate::stream_events::StreamEvent::from_event(&event) {
                    slot.stream_events.push(e);
                }
            }
            Event::PathStateChanged { .. } | Event::DataPathChanged { .. } => {
                if let Some(e) = crate::path_events::PathEvent::from_event(&event) {
                    slot.path_events.push(e);
                }
            }
            Event::MessageAcked { .. } | Event::Retransmission { .. } => continue,
        }
        if let Some(slot) = st.slots.get(&id) {
            slot.notify.notify_waiters();
        }
    }
    // Senders waiting for buffer space: packets went out, so there may be room.
    for id in st.blocked_senders.drain() {
        if let Some(slot) = st.slots.get(&id) {
            slot.notify.notify_waiters();
        }
    }
}
