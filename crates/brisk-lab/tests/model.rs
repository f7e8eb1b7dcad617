//! Seed 003's throughput model: exact values of eqs. 5, 7 and 8 to 12.

use brisk_lab::model::{H_CHUNK, eq5, eq7, eq12, header_factor, padding};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn eq5_gives_the_mathis_rate_for_sctp_messages() {
    // sqrt(1000 * 1500) * sqrt(3/2) = sqrt(2.25e6) = 1500; / (0.2 s * sqrt(0.01)) = 75 000 B/s.
    assert!(close(eq5(1000.0, 1500.0, 0.2, 0.01).unwrap(), 75_000.0));
    // Four times the loss halves it; half the RTT doubles it; four times D doubles it.
    assert!(close(eq5(1000.0, 1500.0, 0.2, 0.04).unwrap(), 37_500.0));
    assert!(close(eq5(1000.0, 1500.0, 0.1, 0.01).unwrap(), 150_000.0));
    assert!(close(eq5(4000.0, 1500.0, 0.2, 0.01).unwrap(), 150_000.0));
    assert_eq!(
        eq5(1000.0, 1500.0, 0.2, 0.0),
        None,
        "no loss: no finite rate"
    );
    assert_eq!(eq5(1000.0, 1500.0, 0.0, 0.01), None);
}

#[test]
fn eq7_divides_by_the_square_root_of_the_header_share() {
    assert_eq!(H_CHUNK, 16.0);
    assert!(close(header_factor(16.0), 2.0));
    assert!(close(header_factor(1000.0), 1.016));
    // D = 16: H = 2, so eq. 7 = sqrt(16 * 1500 * 1.5 / 2) / 0.02 = sqrt(18000) / 0.02.
    assert!(close(
        eq7(16.0, 1500.0, 0.2, 0.01).unwrap(),
        18_000f64.sqrt() / 0.02
    ));
    // D = 1000: eq. 5 / sqrt(1.016).
    assert!(close(
        eq7(1000.0, 1500.0, 0.2, 0.01).unwrap(),
        75_000.0 / 1.016f64.sqrt()
    ));
    assert!(eq7(300.0, 1500.0, 0.2, 0.01).unwrap() < eq5(300.0, 1500.0, 0.2, 0.01).unwrap());
}

#[test]
fn eq12_fills_packets_with_whole_chunks_at_the_link_rate() {
    assert_eq!(
        (padding(1450), padding(100), padding(10), padding(7)),
        (2, 0, 2, 1)
    );
    // 1450 bytes: CL = 1468, one chunk per 1500-byte packet; 10 Mbit/s is
    // 1.25e6 B/s over 20 + 12 + 1468 = 1500 bytes a packet.
    assert!(close(
        eq12(1450, 1500, 10e6).unwrap(),
        1450.0 * 1.25e6 / 1500.0
    ));
    // 100 bytes: CL = 116, CPP = floor(1468 / 116) = 12, packets of 32 + 1392 bytes.
    assert!(close(
        eq12(100, 1500, 10e6).unwrap(),
        12.0 * 100.0 * 1.25e6 / 1424.0
    ));
    // 10 bytes: CL = 28, CPP = 52, packets of 32 + 1456 bytes.
    assert!(close(
        eq12(10, 1500, 10e6).unwrap(),
        52.0 * 10.0 * 1.25e6 / 1488.0
    ));
    assert_eq!(eq12(1460, 1500, 10e6), None, "not even one chunk fits");
    assert_eq!(eq12(100, 1500, 0.0), None);
}
