//! Builds one SCTP packet in the caller's buffer, chunk by chunk, never beyond
//! the path MTU (RFC 9260 6.10 bundling). Nagle arrives here with the latency
//! mechanisms.

use crate::wire::{Chunk, ChunkCodec, CommonHeader, PacketWriter, WireError};

/// A packet being filled.
pub struct PacketBuilder<'b> {
    writer: PacketWriter<'b>,
    mtu: usize,
    chunks: usize,
}

impl<'b> PacketBuilder<'b> {
    pub fn new(buf: &'b mut Vec<u8>, header: &CommonHeader, mtu: usize) -> Self {
        Self {
            writer: PacketWriter::new(buf, header),
            mtu,
            chunks: 0,
        }
    }

    /// Bytes still free before the MTU.
    pub fn room(&self) -> usize {
        self.mtu.saturating_sub(self.writer.len())
    }

    /// Keeps `len` bytes free for a chunk that goes last, if they are free
    /// now; returns whether they were.
    pub fn reserve(&mut self, len: usize) -> bool {
        if !self.fits(len) {
            return false;
        }
        self.mtu -= len;
        true
    }

    /// Gives back what [`reserve`](Self::reserve) kept.
    pub fn release(&mut self, len: usize) {
        self.mtu = self.mtu.saturating_add(len);
    }

    /// Whether a chunk of `len` encoded bytes still fits.
    pub fn fits(&self, len: usize) -> bool {
        len <= self.room()
    }

    pub fn chunks(&self) -> usize {
        self.chunks
    }

    pub fn is_empty(&self) -> bool {
        self.chunks == 0
    }

    /// Appends a chunk. The caller checked `fits`.
    pub fn push(&mut self, chunk: &Chunk<'_>) -> Result<(), WireError> {
        self.writer.push(chunk)?;
        self.chunks += 1;
        Ok(())
    }

    /// Appends a chunk given as its own type.
    pub fn push_chunk<'c, C: ChunkCodec<'c>>(&mut self, chunk: &C) -> Result<(), WireError> {
        self.writer.push_chunk(chunk)?;
        self.chunks += 1;
        Ok(())
    }

    /// Seals the CRC32c; returns the packet's length.
    pub fn finish(self) -> Result<usize, WireError> {
        let len = self.writer.len();
        self.writer.finish()?;
        Ok(len)
    }
}
