//! Seeds of the simulator's independent random streams.
//!
//! Every stream (a host's endpoint, a host's app, one impairment of one link
//! direction) gets its own ChaCha8 seed derived from the simulation seed and
//! the stream's name, so changing one stream's consumer never shifts another.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Which kind of stream a seed is for.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Endpoint = 1,
    App = 2,
    Impairment = 3,
}

/// SplitMix64's output function: a good 64-bit mixer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The 32-byte seed of stream (`kind`, `a`, `b`) under simulation seed `seed`.
pub fn seed_for(seed: u64, kind: Stream, a: u64, b: u64) -> [u8; 32] {
    let mut state = mix(mix(mix(seed) ^ kind as u64) ^ a);
    state = mix(state ^ b);
    let mut out = [0u8; 32];
    for word in out.chunks_exact_mut(8) {
        state = mix(state);
        word.copy_from_slice(&state.to_le_bytes());
    }
    out
}

/// A generator for stream (`kind`, `a`, `b`).
pub fn stream(seed: u64, kind: Stream, a: u64, b: u64) -> ChaCha8Rng {
    ChaCha8Rng::from_seed(seed_for(seed, kind, a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_every_coordinate_and_repeat_for_the_same_one() {
        let base = seed_for(7, Stream::Impairment, 1, 0);
        assert_eq!(base, seed_for(7, Stream::Impairment, 1, 0));
        assert_ne!(base, seed_for(8, Stream::Impairment, 1, 0));
        assert_ne!(base, seed_for(7, Stream::App, 1, 0));
        assert_ne!(base, seed_for(7, Stream::Impairment, 2, 0));
        assert_ne!(base, seed_for(7, Stream::Impairment, 1, 1));
        assert_ne!(
            seed_for(0, Stream::Endpoint, 0, 0),
            seed_for(0, Stream::Endpoint, 1, 0)
        );
    }
}
