//! How fast the simulator runs: a signaling scenario of 60 virtual seconds.
//!
//! `PAIRS` client/server pairs (default 10) across a dumbbell: 100 Mbit/s,
//! 1 ms access links; a 10 Mbit/s, 20 ms bottleneck with 1 % Bernoulli loss
//! forward. Each client sends a 200-byte message every 20 ms (50 msg/s) in
//! its own callback, with the RFC 9260 configuration.
//!
//! ```sh
//! cargo run --release -p brisk-sim --example speed [-- PAIRS [SECONDS]]
//! ```
//!
//! Prints simulated events per wall-clock second and the speed relative to
//! real time.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use brisk_proto::{AssocId, Config, EndpointConfig, Event, OutgoingMessage, Time};
use brisk_sim::{App, AppCtx, Impairment, LinkParams, Sim, dumbbell};

const INTERVAL: Duration = Duration::from_millis(20);
const SIZE: usize = 200;

/// Sends one message per timer tick until `until`.
struct Signaler {
    server: SocketAddr,
    until: Time,
    assoc: Option<AssocId>,
    sent: u64,
}

impl App for Signaler {
    fn start(&mut self, ctx: &mut AppCtx<'_>) {
        let now = ctx.now();
        let server = self.server;
        self.assoc = ctx.endpoint().connect(now, server, Config::rfc9260()).ok();
    }

    fn on_event(&mut self, ctx: &mut AppCtx<'_>, _: AssocId, event: &Event) {
        if *event == Event::Connected {
            ctx.set_timer(ctx.now(), 0);
        }
    }

    fn on_timer(&mut self, ctx: &mut AppCtx<'_>, _: u64) {
        let now = ctx.now();
        if now >= self.until {
            return;
        }
        let Some(a) = self.assoc.and_then(|id| ctx.endpoint().association(id)) else {
            return;
        };
        if a.send(now, OutgoingMessage::new(0, vec![0x5a; SIZE]))
            .is_ok()
        {
            self.sent += 1;
        }
        ctx.set_timer(now + INTERVAL, 0);
    }
}

/// Reads every message.
#[derive(Default)]
struct Sink {
    received: u64,
}

impl App for Sink {
    fn start(&mut self, _: &mut AppCtx<'_>) {}

    fn on_event(&mut self, ctx: &mut AppCtx<'_>, assoc: AssocId, event: &Event) {
        if *event != Event::MessageReady {
            return;
        }
        if let Some(a) = ctx.endpoint().association(assoc) {
            while a.recv().is_some() {
                self.received += 1;
            }
        }
    }

    fn on_timer(&mut self, _: &mut AppCtx<'_>, _: u64) {}
}

/// Runs the scenario once: the simulator, and the wall-clock seconds it took.
fn run(pairs: usize, until: Time) -> (Sim, f64) {
    let mut sim = Sim::new(1);
    let addr = |net: u8, i: usize| -> SocketAddr {
        format!("10.0.{net}.{}:9899", i + 1)
            .parse()
            .expect("address")
    };
    let servers: Vec<_> = (0..pairs)
        .map(|i| {
            sim.add_host(
                addr(1, i),
                EndpointConfig::default(),
                Box::new(Sink::default()),
            )
        })
        .collect();
    let clients: Vec<_> = (0..pairs)
        .map(|i| {
            let app = Signaler {
                server: addr(1, i),
                until,
                assoc: None,
                sent: 0,
            };
            sim.add_host(addr(0, i), EndpointConfig::default(), Box::new(app))
        })
        .collect();
    let access = LinkParams::new(100_000_000, Duration::from_millis(1));
    let neck = LinkParams::new(10_000_000, Duration::from_millis(20));
    let lossy = neck
        .clone()
        .with_impairments([Impairment::Bernoulli { p: 0.01 }]);
    dumbbell(&mut sim, &clients, &servers, access, lossy, neck);
    let wall = Instant::now();
    sim.run_until(until);
    (sim, wall.elapsed().as_secs_f64())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let pairs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let seconds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(60);
    let until = Time::from_secs(seconds);

    // Five identical runs (same seed, same events); the median wall time counts.
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..5 {
        let (sim, wall) = run(pairs, until);
        walls.push(wall);
        last = Some(sim);
    }
    walls.sort_by(f64::total_cmp);
    let elapsed = walls[walls.len() / 2];
    let Some(sim) = last else { return };

    let stats = sim.stats();
    let (mut sent, mut received) = (0, 0);
    for h in sim.hosts() {
        sent += sim.app::<Signaler>(h).map_or(0, |a| a.sent);
        received += sim.app::<Sink>(h).map_or(0, |a| a.received);
    }
    let packets: u64 = stats.links.iter().map(|l| l.sent).sum();
    let losses: u64 = stats.links.iter().map(|l| l.impairment_drops).sum();
    println!(
        "{pairs} pairs, {seconds} s virtual: {sent} messages sent, {received} received, \
         {packets} packet hops, {losses} bottleneck losses, {} events pending at the end",
        sim.pending_events()
    );
    println!(
        "{} events, median of 5 runs {elapsed:.3} s wall: {:.0} events/s, {:.0}x real time",
        stats.events,
        stats.events as f64 / elapsed,
        seconds as f64 / elapsed
    );
}
