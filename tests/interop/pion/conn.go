package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// SCTP chunk types the peer watches for (RFC 9260 section 3.2).
const (
	chunkAbort            = 6
	chunkShutdown         = 7
	chunkShutdownAck      = 8
	chunkShutdownComplete = 14
)

// chunkSeen records which interesting chunk types arrived from the peer. It is
// only a diagnostic / cross-check: the association state itself is pion's.
type chunkSeen struct {
	abort            atomic.Bool
	shutdown         atomic.Bool
	shutdownAck      atomic.Bool
	shutdownComplete atomic.Bool
}

// inspect walks the chunks of one SCTP packet (no checksum check; pion does
// that) and notes the chunk types we care about.
func (c *chunkSeen) inspect(pkt []byte) {
	const commonHeader = 12
	off := commonHeader
	for off+4 <= len(pkt) {
		typ := pkt[off]
		length := int(binary.BigEndian.Uint16(pkt[off+2:]))
		switch typ {
		case chunkAbort:
			c.abort.Store(true)
		case chunkShutdown:
			c.shutdown.Store(true)
		case chunkShutdownAck:
			c.shutdownAck.Store(true)
		case chunkShutdownComplete:
			c.shutdownComplete.Store(true)
		}
		if length < 4 {
			return
		}
		off += (length + 3) &^ 3
	}
}

// sniffConn wraps the client's connected UDP socket so that the chunk types
// received from the peer can be cross-checked at the end.
type sniffConn struct {
	*net.UDPConn
	seen *chunkSeen
}

func (s *sniffConn) Read(b []byte) (int, error) {
	n, err := s.UDPConn.Read(b)
	if n > 0 {
		s.seen.inspect(b[:n])
	}
	return n, err
}

// peerConn presents an unconnected UDP socket as a net.Conn bound to a single
// remote address: the source of the first datagram received. That first
// datagram is handed out by the first Read. Datagrams from other sources are
// dropped. After Close, Read returns io.EOF.
type peerConn struct {
	pc   *net.UDPConn
	peer *net.UDPAddr
	seen *chunkSeen

	mu      sync.Mutex
	pending []byte // first datagram, not yet returned by Read

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// acceptPeer blocks until the first datagram arrives on pc (or the deadline
// passes) and returns a peerConn bound to its source.
func acceptPeer(pc *net.UDPConn, deadline time.Time, seen *chunkSeen) (*peerConn, error) {
	buf := make([]byte, 65536)
	if err := pc.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	n, addr, err := pc.ReadFromUDP(buf)
	if err != nil {
		return nil, err
	}
	if err := pc.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	first := make([]byte, n)
	copy(first, buf[:n])
	seen.inspect(first)
	return &peerConn{pc: pc, peer: addr, seen: seen, pending: first}, nil
}

func (c *peerConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	if c.pending != nil {
		first := c.pending
		c.pending = nil
		c.mu.Unlock()
		n := copy(b, first)
		return n, nil
	}
	c.mu.Unlock()

	for {
		n, addr, err := c.pc.ReadFromUDP(b)
		if err != nil {
			if c.closed.Load() {
				return 0, io.EOF
			}
			return 0, err
		}
		if !addr.IP.Equal(c.peer.IP) || addr.Port != c.peer.Port {
			fmt.Fprintf(os.Stderr, "pion-peer: dropping datagram from unexpected source %s\n", addr)
			continue
		}
		c.seen.inspect(b[:n])
		return n, nil
	}
}

func (c *peerConn) Write(b []byte) (int, error) {
	n, err := c.pc.WriteToUDP(b, c.peer)
	if err != nil && c.closed.Load() {
		return n, io.EOF
	}
	return n, err
}

func (c *peerConn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.closeErr = c.pc.Close()
		if errors.Is(c.closeErr, net.ErrClosed) {
			c.closeErr = nil
		}
	})
	return c.closeErr
}

func (c *peerConn) LocalAddr() net.Addr                { return c.pc.LocalAddr() }
func (c *peerConn) RemoteAddr() net.Addr               { return c.peer }
func (c *peerConn) SetDeadline(t time.Time) error      { return c.pc.SetDeadline(t) }
func (c *peerConn) SetReadDeadline(t time.Time) error  { return c.pc.SetReadDeadline(t) }
func (c *peerConn) SetWriteDeadline(t time.Time) error { return c.pc.SetWriteDeadline(t) }
