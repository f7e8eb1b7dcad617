mod harness;
use std::time::Duration;
use brisk_tcp::{TcpConfig, Time};
use harness::{Dir, Pair, ms, pattern};
#[test]
fn dbg() {
    let cfg = TcpConfig { sack: false, initial_window: Some(10), delayed_ack: None, ..TcpConfig::rfc() };
    let mut p = Pair::new(ms(10), cfg.clone(), cfg);
    p.connect();
    p.run_to(Time::from_secs(1));
    p.drop_data(Dir::AtoB, 3);
    for _ in 0..10 { p.a_write(&pattern(1460)); }
    p.run_for(ms(100));
    for l in &p.log { let s = &l.seen; println!("{:?} {} seq={} ack={} len={} win={} fl={:x} {:?}", s.dir, s.sent_at, s.header.seq, s.header.ack, s.len, s.header.window, s.header.flags, l.fate); }
    println!("{:?}", p.a_stats());
    let _ = Duration::ZERO;
}
