// Command pion-peer is the pion/sctp interop test peer described in
// tests/interop/PROTOCOL.md: SCTP over UDP on loopback, roles "server"
// (echo) and "client" (generate, verify, then shut down or abort). Two more
// roles, "sink" and "blast" (bench.go), serve scripts/bench-net and are not
// part of the interop protocol, nor are "msg-send" and "msg-recv"
// (workload.go), the message workload of tests/interop/WORKLOAD.md.
// "pr-send" and "pr-recv" (pr.go) test partial reliability under loss
// (PROTOCOL.md).
//
// Result lines go to stdout, diagnostics (including pion's own logging,
// tunable with PION_LOG_DEBUG=sctp etc.) go to stderr.
//
// Optional environment knob (not part of the protocol): PION_PEER_IDATA=0
// stops pion from offering I-DATA / I-FORWARD-TSN (RFC 8260) in its
// INIT / INIT ACK. By default pion offers them.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/logging"
	"github.com/pion/sctp"
)

const (
	overallTimeout = 60 * time.Second
	maxMessage     = 65536
	numStreams     = 8
	readBufSize    = maxMessage + 1024 // larger than any message we expect
)

var sizes = [...]int{1, 2, 3, 4, 100, 1000, 1199, 1200, 1452, 4096, 16384, 65536}

// gen implements GEN(i, S) from PROTOCOL.md.
func gen(i uint64, seed uint64) (payload []byte, stream uint16, unordered bool, ppid uint32) {
	size := sizes[i%uint64(len(sizes))]
	stream = uint16(i % numStreams)
	unordered = stream >= 6
	ppid = uint32(1000 + i)
	payload = make([]byte, size)
	base := i*131 + seed
	for j := range payload {
		payload[j] = byte((base + uint64(j)*7) % 256)
	}
	return payload, stream, unordered, ppid
}

// ---- result lines -------------------------------------------------------

var (
	finishMu sync.Mutex
	finished bool
	start    = time.Now()
)

// finish prints exactly one result line (the first caller wins) and exits.
func finish(code int, format string, args ...any) {
	finishMu.Lock()
	if finished {
		finishMu.Unlock()
		select {} // another goroutine is exiting
	}
	finished = true
	fmt.Fprintf(os.Stdout, format+"\n", args...)
	os.Exit(code)
}

func fail(format string, args ...any) {
	finish(1, "FAIL "+format, args...)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pion-peer: "+format+"\n", args...)
}

func deadline() time.Time { return start.Add(overallTimeout) }

func armTimeout() {
	time.AfterFunc(time.Until(deadline()), func() { fail("timeout") })
}

func loggerFactory() logging.LoggerFactory {
	f := logging.NewDefaultLoggerFactory()
	f.Writer = os.Stderr
	return f
}

func baseConfig(name string, conn net.Conn) sctp.Config {
	return sctp.Config{
		Name:          name,
		NetConn:       conn,
		LoggerFactory: loggerFactory(),
		// pion's default is already 65536, but be explicit: PROTOCOL.md
		// needs messages of exactly 65536 bytes.
		MaxMessageSize: maxMessage,
	}
}

func interleavingOption() []sctp.AssociationOption {
	if v := os.Getenv("PION_PEER_IDATA"); v == "0" || strings.EqualFold(v, "false") {
		logf("I-DATA disabled by PION_PEER_IDATA=%s", v)
		return []sctp.AssociationOption{sctp.WithEnableInterleaving(false)}
	}
	return nil
}

// isAbort reports whether err is how pion surfaces a received ABORT chunk:
// handleAbort returns an error wrapping sctp.ErrChunk (and, for a
// User-Initiated Abort cause, also sctp.ErrUserInitiatedAbort); readLoop
// hands that error to every open stream as its read error.
func isAbort(err error) bool {
	return errors.Is(err, sctp.ErrChunk) || errors.Is(err, sctp.ErrUserInitiatedAbort)
}

// isOrderlyClose reports whether err is what stream reads return after the
// association was closed locally (graceful shutdown completed): pion closes
// the net.Conn, and the conn's Read error becomes the streams' read error.
func isOrderlyClose(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// ---- main ---------------------------------------------------------------

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  pion-peer server --bind 127.0.0.1:UDP
  pion-peer client --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --count N [--seed S]
                   [--end shutdown|abort] [--abort-after K] [--window W]`)
	os.Exit(2)
}

// otherRoles have flags (and the benchmark roles a timeout) of their own:
// bench.go, workload.go (../WORKLOAD.md), datachannel.go, pr.go and
// reconfig.go. The interop roles in main are unchanged.
var otherRoles = map[string]func(role string, args []string){
	"sink": benchMain, "blast": benchMain,
	"msg-send": workloadMain, "msg-recv": workloadMain,
	"dc":      dcMain,
	"pr-send": prMain, "pr-recv": prMain,
	"reconfig-server": reconfigMain, "reconfig-client": reconfigMain,
}

func main() {
	if len(os.Args) >= 2 {
		if run, ok := otherRoles[os.Args[1]]; ok {
			run(os.Args[1], os.Args[2:])
			return
		}
	}
	armTimeout()
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "server":
		fs := flag.NewFlagSet("server", flag.ExitOnError)
		bind := fs.String("bind", "", "local UDP address")
		_ = fs.Parse(os.Args[2:])
		if *bind == "" || fs.NArg() != 0 {
			usage()
		}
		runServer(*bind)
	case "client":
		fs := flag.NewFlagSet("client", flag.ExitOnError)
		bind := fs.String("bind", "", "local UDP address")
		connect := fs.String("connect", "", "remote UDP address")
		count := fs.Int64("count", -1, "number of messages")
		seed := fs.Uint64("seed", 0, "generator seed")
		end := fs.String("end", "shutdown", "shutdown|abort")
		abortAfter := fs.Int64("abort-after", -1, "abort after K verified echoes (default N/2)")
		window := fs.Int("window", 32, "max messages sent but not yet echoed")
		_ = fs.Parse(os.Args[2:])
		if *bind == "" || *connect == "" || *count < 0 || fs.NArg() != 0 ||
			(*end != "shutdown" && *end != "abort") || *window < 1 {
			usage()
		}
		k := *abortAfter
		if k < 0 {
			k = *count / 2
		}
		if *end == "abort" && k > *count {
			usage()
		}
		runClient(clientParams{
			bind: *bind, connect: *connect, count: uint64(*count), seed: *seed,
			abort: *end == "abort", abortAfter: uint64(k), window: *window,
		})
	default:
		usage()
	}
}

// ---- server -------------------------------------------------------------

func runServer(bind string) {
	conn, seen := listenPeer(bind, deadline(), fail)
	logf("server: peer is %s", conn.peer)
	assoc := acceptAssociation(baseConfig("server", conn), fail, interleavingOption()...)
	logf("server: association established")

	var (
		echoed   atomic.Int64
		errMu    sync.Mutex
		endErrs  []error
		failOnce sync.Once
	)
	recordEnd := func(err error) {
		errMu.Lock()
		endErrs = append(endErrs, err)
		errMu.Unlock()
	}

	echo := func(s *sctp.Stream) {
		id := s.StreamIdentifier()
		if id == 6 || id == 7 {
			s.SetReliabilityParams(true, sctp.ReliabilityTypeReliable, 0)
		}
		buf := make([]byte, readBufSize)
		for {
			n, ppi, err := s.ReadSCTP(buf)
			if err != nil {
				recordEnd(err)
				return
			}
			if _, err := s.WriteSCTP(buf[:n], ppi); err != nil {
				// The association may be going away under us (abort). Note
				// it; the final classification happens below.
				logf("server: echo on stream %d failed: %v", id, err)
				failOnce.Do(func() { recordEnd(fmt.Errorf("echo write: %w", err)) })
				continue
			}
			echoed.Add(1)
		}
	}

	serveStreams(assoc, "server", echo)

	var abortErr, otherErr error
	orderly := false
	for _, e := range endErrs {
		switch {
		case isAbort(e):
			abortErr = e
		case isOrderlyClose(e):
			orderly = true
		default:
			if otherErr == nil {
				otherErr = e
			}
		}
	}
	n := echoed.Load()
	switch {
	case abortErr != nil:
		logf("server: association aborted: %v", abortErr)
		finish(0, "CLOSED abort echoed=%d", n)
	case len(endErrs) == 0 && seen.abort.Load():
		// No stream ever opened: fall back to what we saw on the wire.
		finish(0, "CLOSED abort echoed=%d", n)
	case (orderly || len(endErrs) == 0) && otherErr == nil && seen.shutdown.Load():
		finish(0, "CLOSED shutdown echoed=%d", n)
	case otherErr != nil:
		fail("association ended with error: %v", otherErr)
	default:
		fail("association closed without SHUTDOWN or ABORT from peer")
	}
}

// ---- client -------------------------------------------------------------

type clientParams struct {
	bind, connect string
	count, seed   uint64
	abort         bool
	abortAfter    uint64
	window        int
}

type client struct {
	p     clientParams
	assoc *sctp.Association
	seen  *chunkSeen

	window chan struct{} // one token per message in flight
	stop   chan struct{} // closed when the sender must stop
	target chan struct{} // closed when the end condition is reached

	mu         sync.Mutex
	verified   uint64
	done       bool                 // target reached: ignore further echoes
	closing    bool                 // we are shutting down / aborting
	pending    map[uint64]bool      // sent, not yet echoed
	orderQueue [numStreams][]uint64 // per ordered stream: sent, not yet echoed, in send order
	peerAbort  error
}

func runClient(p clientParams) {
	conn, seen := dialPeer(p.bind, p.connect, fail)
	assoc := connectAssociation(baseConfig("client", conn), deadline(), fail, interleavingOption()...)
	logf("client: association established")

	c := &client{
		p: p, assoc: assoc, seen: seen,
		window:  make(chan struct{}, p.window),
		stop:    make(chan struct{}),
		target:  make(chan struct{}),
		pending: make(map[uint64]bool),
	}

	streams := make([]*sctp.Stream, numStreams)
	for id := range numStreams {
		s, err := assoc.OpenStream(uint16(id), sctp.PayloadProtocolIdentifier(0))
		if err != nil {
			fail("open stream %d: %v", id, err)
		}
		if id >= 6 {
			s.SetReliabilityParams(true, sctp.ReliabilityTypeReliable, 0)
		}
		streams[id] = s
		go c.reader(s)
	}

	target := p.count
	if p.abort {
		target = p.abortAfter
	}
	if target == 0 {
		c.reachTarget()
	}

	go c.sender(streams)

	<-c.target

	if p.abort {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		assoc.Abort("interop abort")
		finish(0, "ABORTED verified=%d", p.abortAfter)
	}

	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	shutdownAssociation(assoc, deadline(), fail)
	// Shutdown returns once pion's write loop has ended, which also happens
	// when an ABORT arrives. Wait for the read loop, then check that it
	// really was SHUTDOWN / SHUTDOWN ACK / SHUTDOWN COMPLETE.
	_ = assoc.Close()
	c.mu.Lock()
	peerAbort := c.peerAbort
	verified := c.verified
	c.mu.Unlock()
	switch {
	case peerAbort != nil:
		fail("peer aborted during shutdown: %v", peerAbort)
	case seen.abort.Load():
		fail("ABORT received during shutdown")
	case !seen.shutdownAck.Load():
		fail("association closed without SHUTDOWN ACK")
	}
	finish(0, "OK verified=%d", verified)
}

func (c *client) reachTarget() {
	if !c.done {
		c.done = true
		close(c.stop)
		close(c.target)
	}
}

func (c *client) sender(streams []*sctp.Stream) {
	for i := uint64(0); i < c.p.count; i++ {
		select {
		case c.window <- struct{}{}:
		case <-c.stop:
			return
		}
		payload, sid, unordered, ppid := gen(i, c.p.seed)
		c.mu.Lock()
		if c.done {
			c.mu.Unlock()
			return
		}
		c.pending[i] = true
		if !unordered {
			c.orderQueue[sid] = append(c.orderQueue[sid], i)
		}
		c.mu.Unlock()
		if _, err := streams[sid].WriteSCTP(payload, sctp.PayloadProtocolIdentifier(ppid)); err != nil {
			c.mu.Lock()
			stopping := c.closing || c.done
			c.mu.Unlock()
			if stopping {
				return
			}
			fail("send %d on stream %d: %v", i, sid, err)
		}
	}
}

func (c *client) reader(s *sctp.Stream) {
	sid := s.StreamIdentifier()
	buf := make([]byte, readBufSize)
	for {
		n, ppi, err := s.ReadSCTP(buf)
		if err != nil {
			c.mu.Lock()
			closing := c.closing
			if isAbort(err) {
				c.peerAbort = err
			}
			c.mu.Unlock()
			if closing {
				return
			}
			if isAbort(err) {
				fail("peer aborted: %v", err)
			}
			fail("read on stream %d: %v", sid, err)
		}
		c.check(sid, buf[:n], uint32(ppi))
	}
}

func (c *client) check(sid uint16, got []byte, ppi uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return // past the end condition; nothing more is counted
	}
	if ppi < 1000 || uint64(ppi-1000) >= c.p.count {
		fail("echo on stream %d with unexpected ppid %d", sid, ppi)
	}
	i := uint64(ppi - 1000)
	if !c.pending[i] {
		fail("echo for message %d (ppid %d) that is not outstanding", i, ppi)
	}
	want, wantSid, unordered, _ := gen(i, c.p.seed)
	if sid != wantSid {
		fail("message %d echoed on stream %d, sent on stream %d", i, sid, wantSid)
	}
	if !bytes.Equal(got, want) {
		fail("message %d payload mismatch (got %d bytes, want %d)", i, len(got), len(want))
	}
	if !unordered {
		q := c.orderQueue[sid]
		if len(q) == 0 || q[0] != i {
			exp := "none"
			if len(q) > 0 {
				exp = fmt.Sprint(q[0])
			}
			fail("stream %d out of order: got message %d, expected %s", sid, i, exp)
		}
		c.orderQueue[sid] = q[1:]
	}
	delete(c.pending, i)
	c.verified++
	<-c.window

	target := c.p.count
	if c.p.abort {
		target = c.p.abortAfter
	}
	if c.verified >= target {
		c.reachTarget()
	}
}
