//! Where the fuzzer's decisions come from: a stream of bytes.
//!
//! The loop in `tests/fuzz_loop.rs` feeds bytes from a seeded ChaCha RNG;
//! cargo-fuzz feeds the fuzz input. Every decision the driver takes (what to
//! send, when to move the clock, what to drop, how to mutate) is read through
//! [`Dice`], so the same bytes always give the same run, and the bytes a seeded
//! run consumed (see [`Recorder`]) replay that run as a fuzz input.

use std::cell::RefCell;
use std::rc::Rc;

/// A stream of decision bytes.
pub trait Source {
    /// The next byte.
    fn byte(&mut self) -> u8;
    /// Whether the stream ran dry (a fuzz input ended). Bytes read after that
    /// are zeros; the interpreter stops at its next step.
    fn exhausted(&self) -> bool {
        false
    }
}

/// The bytes of a fuzz input, then zeros.
#[derive(Debug, Clone)]
pub struct SliceSource<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> SliceSource<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }
}

impl Source for SliceSource<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos = self.pos.saturating_add(1);
        b
    }

    fn exhausted(&self) -> bool {
        self.pos >= self.data.len()
    }
}

/// A fixed xorshift sequence, for worlds that need no outside decisions.
#[derive(Debug, Clone)]
pub struct XorShift(pub u64);

impl Source for XorShift {
    fn byte(&mut self) -> u8 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 24) as u8
    }
}

/// Records every byte another source hands out, into a buffer the caller
/// keeps a handle on: the recording replays the run through [`SliceSource`].
#[derive(Debug, Clone)]
pub struct Recorder<S> {
    pub inner: S,
    pub bytes: Rc<RefCell<Vec<u8>>>,
}

impl<S: Source> Recorder<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            bytes: Rc::default(),
        }
    }
}

impl<S: Source> Source for Recorder<S> {
    fn byte(&mut self) -> u8 {
        let b = self.inner.byte();
        self.bytes.borrow_mut().push(b);
        b
    }

    fn exhausted(&self) -> bool {
        self.inner.exhausted()
    }
}

/// Typed decisions read from a [`Source`].
pub struct Dice<'s> {
    src: Box<dyn Source + 's>,
}

impl<'s> Dice<'s> {
    pub fn new(src: Box<dyn Source + 's>) -> Self {
        Self { src }
    }

    pub fn exhausted(&self) -> bool {
        self.src.exhausted()
    }

    pub fn byte(&mut self) -> u8 {
        self.src.byte()
    }

    pub fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// True with probability `per256 / 256`.
    pub fn chance(&mut self, per256: u16) -> bool {
        u16::from(self.byte()) < per256
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | (u64::from(self.u32()) << 32)
    }

    /// A value in `0..n` (0 when `n` is 0), reading as few bytes as `n` needs.
    pub fn below(&mut self, n: u32) -> u32 {
        match n {
            0 | 1 => 0,
            2..=256 => u32::from(self.byte()) % n,
            257..=65_536 => u32::from(self.u16()) % n,
            _ => self.u32() % n,
        }
    }

    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        if hi <= lo {
            return lo;
        }
        lo + self.below((hi - lo).saturating_add(1))
    }

    /// A `usize` in `lo..=hi`.
    pub fn range_usize(&mut self, lo: usize, hi: usize) -> usize {
        let lo32 = u32::try_from(lo).unwrap_or(u32::MAX);
        let hi32 = u32::try_from(hi).unwrap_or(u32::MAX);
        self.range(lo32, hi32) as usize
    }

    /// An index into a collection of `len` items (`len` > 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(u32::try_from(len).unwrap_or(u32::MAX)) as usize
    }

    pub fn pick<'t, T>(&mut self, items: &'t [T]) -> &'t T {
        &items[self.index(items.len())]
    }

    /// An index chosen with the given weights.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }

    /// A 32-bit value near `base`: mostly a small step either way, sometimes
    /// far, half the sequence space away, or anything.
    pub fn near(&mut self, base: u32) -> u32 {
        match self.below(16) {
            0..=7 => base.wrapping_add(self.range(0, 48)).wrapping_sub(8),
            8..=9 => base,
            10 => base.wrapping_add(u32::from(self.u16())),
            11 => base.wrapping_sub(u32::from(self.u16())),
            12 => base.wrapping_add(1 << 31),
            13 => base.wrapping_add((1 << 31) - 1),
            14 => *self.pick(&[0, 1, u32::MAX, 0x7fff_ffff, 0x8000_0000]),
            _ => self.u32(),
        }
    }

    /// A 16-bit value near `base`.
    pub fn near16(&mut self, base: u16) -> u16 {
        match self.below(8) {
            0..=4 => base.wrapping_add(self.range(0, 12) as u16).wrapping_sub(2),
            5 => base.wrapping_add(1 << 15),
            6 => *self.pick(&[0, 1, u16::MAX, 0x7fff, 0x8000]),
            _ => self.u16(),
        }
    }
}
