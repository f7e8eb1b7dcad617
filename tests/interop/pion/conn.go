package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pion/sctp"
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

// maxDatagram is the largest UDP payload the adapters read.
const maxDatagram = 65535

// deliver copies a datagram into pion's read buffer. pion v1.11.3 reads with
// a fixed 8192-byte buffer (receiveMTU); a larger SCTP packet is truncated and
// then dropped by pion for a bad checksum, so say so on stderr.
func deliver(dst, datagram []byte) int {
	if len(datagram) > len(dst) {
		fmt.Fprintf(os.Stderr,
			"pion-peer: %d-byte datagram exceeds pion's %d-byte read buffer; pion will drop it\n",
			len(datagram), len(dst))
	}
	return copy(dst, datagram)
}

// sniffConn wraps the client's connected UDP socket so that the chunk types
// received from the peer can be cross-checked at the end.
type sniffConn struct {
	*net.UDPConn
	seen    *chunkSeen
	refused atomic.Bool
	buf     [maxDatagram]byte // only used by pion's single read loop
}

// Read returns the next datagram. ICMP port-unreachable reports (which Linux
// surfaces as ECONNREFUSED on a connected UDP socket) are skipped, so that a
// client started a moment before its server does not give up: pion's INIT
// retransmission timer takes care of retrying.
func (s *sniffConn) Read(b []byte) (int, error) {
	for {
		n, err := s.UDPConn.Read(s.buf[:])
		if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
			s.noteRefused()
			continue
		}
		if err != nil {
			return 0, err
		}
		s.seen.inspect(s.buf[:n])
		return deliver(b, s.buf[:n]), nil
	}
}

// Write sends one datagram; ECONNREFUSED (a pending ICMP report from an
// earlier datagram) is treated like a loss, as it would be on a real path.
func (s *sniffConn) Write(b []byte) (int, error) {
	n, err := s.UDPConn.Write(b)
	if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
		s.noteRefused()
		return len(b), nil
	}
	return n, err
}

func (s *sniffConn) noteRefused() {
	if s.refused.CompareAndSwap(false, true) {
		fmt.Fprintln(os.Stderr, "pion-peer: peer port unreachable (ICMP); still trying")
	}
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

	buf [maxDatagram]byte // only used by pion's single read loop
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
		return deliver(b, first), nil
	}
	c.mu.Unlock()

	for {
		n, addr, err := c.pc.ReadFromUDP(c.buf[:])
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
		c.seen.inspect(c.buf[:n])
		return deliver(b, c.buf[:n]), nil
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

// ---- association setup, shared by every role ----------------------------

// failFunc ends the process with a "FAIL ..." result line: fail (main.go),
// or wfail for the workload roles, which print their result elsewhere.
type failFunc func(format string, args ...any)

// dialPeer binds a UDP socket to bind and connects it to connect, wrapped so
// that the chunk types received are recorded in the returned chunkSeen.
func dialPeer(bind, connect string, die failFunc) (*sniffConn, *chunkSeen) {
	laddr, err := net.ResolveUDPAddr("udp", bind)
	if err != nil {
		die("bad --bind: %v", err)
	}
	raddr, err := net.ResolveUDPAddr("udp", connect)
	if err != nil {
		die("bad --connect: %v", err)
	}
	udp, err := net.DialUDP("udp", laddr, raddr)
	if err != nil {
		die("dial: %v", err)
	}
	seen := &chunkSeen{}
	return &sniffConn{UDPConn: udp, seen: seen}, seen
}

// listenPeer binds a UDP socket to bind and waits until dl (the zero time:
// for ever) for the first datagram; the conn is bound to its source.
func listenPeer(bind string, dl time.Time, die failFunc) (*peerConn, *chunkSeen) {
	laddr, err := net.ResolveUDPAddr("udp", bind)
	if err != nil {
		die("bad --bind: %v", err)
	}
	pc, err := net.ListenUDP("udp", laddr)
	if err != nil {
		die("listen %s: %v", bind, err)
	}
	seen := &chunkSeen{}
	conn, err := acceptPeer(pc, dl, seen)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			die("timeout")
		}
		die("waiting for first datagram: %v", err)
	}
	return conn, seen
}

// connectAssociation starts an association (INIT) over cfg.NetConn with the
// extra options, giving up at dl.
func connectAssociation(cfg sctp.Config, dl time.Time, die failFunc,
	extra ...sctp.AssociationOption,
) *sctp.Association {
	opts := []sctp.ClientOption{cfg}
	for _, o := range extra {
		opts = append(opts, o)
	}
	ctx, cancel := context.WithDeadline(context.Background(), dl)
	assoc, err := sctp.ClientContext(ctx, opts...)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			die("timeout")
		}
		die("association setup: %v", err)
	}
	return assoc
}

// acceptAssociation answers the peer's INIT over cfg.NetConn with the extra
// options.
func acceptAssociation(cfg sctp.Config, die failFunc, extra ...sctp.AssociationOption) *sctp.Association {
	opts := []sctp.ServerOption{cfg}
	for _, o := range extra {
		opts = append(opts, o)
	}
	assoc, err := sctp.ServerWithOptions(opts...)
	if err != nil {
		die("association setup: %v", err)
	}
	return assoc
}

// shutdownAssociation shuts the association down gracefully, giving up at
// dl. pion's Shutdown also returns when an ABORT ended the write loop, so
// callers check the wire (chunkSeen) afterwards.
func shutdownAssociation(assoc *sctp.Association, dl time.Time, die failFunc) {
	ctx, cancel := context.WithDeadline(context.Background(), dl)
	err := assoc.Shutdown(ctx)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			die("timeout")
		}
		die("shutdown: %v", err)
	}
}

// serveStreams runs read, in a goroutine of its own, on every stream the peer
// opens until the association ends, then waits for them all. AcceptStream
// returns an error once pion's read loop has ended, which also hands every
// open stream its read error (after its queued data). With a role, each
// stream is logged as "<role>: accepted stream <id>".
func serveStreams(assoc *sctp.Association, role string, read func(*sctp.Stream)) {
	var wg sync.WaitGroup
	for {
		s, err := assoc.AcceptStream()
		if err != nil {
			break
		}
		if role != "" {
			logf("%s: accepted stream %d", role, s.StreamIdentifier())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			read(s)
		}()
	}
	wg.Wait()
}
