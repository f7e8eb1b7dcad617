package main

// Benchmark roles, used by scripts/bench-net. They are not part of the interop
// protocol (../PROTOCOL.md) and do not touch the "server" and "client" roles:
//
//	pion-peer sink  --bind 127.0.0.1:UDP [--timeout 120s]
//	pion-peer blast --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --size SIZE --count N
//	                [--buffer BYTES] [--mtu BYTES] [--timeout 120s]
//
// sink accepts one association, reads everything on every stream until the
// peer shuts down and prints
//
//	SINK received=<n> bytes=<b> seconds=<s>
//
// where seconds runs from the first message read to the end of the
// association (the peer's graceful shutdown), like `brisk recv`.
//
// blast associates, opens stream 0 and writes N messages of SIZE bytes as
// fast as pion accepts them, then shuts down gracefully (pion sends SHUTDOWN
// only once everything is acknowledged) and prints
//
//	BLAST sent=<n> seconds=<s>
//
// where seconds runs from the first write until Shutdown returns. pion's
// writes never block by default; --buffer (default 4 MiB, Brisk's default send
// buffer; 0 = unbounded) holds the writer back while more than that many bytes
// are queued on the stream, using pion's buffered-amount-low callback as a
// WebRTC data channel user would. --mtu overrides pion's SCTP packet size
// (default 1191 bytes, pion's initialMTU).
//
// Failures print "FAIL <reason>" and exit 1, as in the other roles.

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/sctp"
)

func benchUsage() {
	fmt.Fprintln(os.Stderr, `usage:
  pion-peer sink  --bind 127.0.0.1:UDP [--timeout 120s]
  pion-peer blast --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --size SIZE --count N
                  [--buffer BYTES] [--mtu BYTES] [--timeout 120s]`)
	os.Exit(2)
}

// benchMain runs the "sink" and "blast" roles. It arms its own timeout
// instead of the interop peer's fixed 60 s.
func benchMain(role string, args []string) {
	switch role {
	case "sink":
		fs := flag.NewFlagSet("sink", flag.ExitOnError)
		bind := fs.String("bind", "", "local UDP address")
		timeout := fs.Duration("timeout", 120*time.Second, "give up after this long")
		_ = fs.Parse(args)
		if *bind == "" || fs.NArg() != 0 || *timeout <= 0 {
			benchUsage()
		}
		dl := armBenchTimeout(*timeout)
		runSink(*bind, dl)
	case "blast":
		fs := flag.NewFlagSet("blast", flag.ExitOnError)
		bind := fs.String("bind", "", "local UDP address")
		connect := fs.String("connect", "", "remote UDP address")
		size := fs.Int("size", -1, "message size in bytes")
		count := fs.Int64("count", -1, "number of messages")
		buffer := fs.Uint64("buffer", 4<<20, "max bytes queued in pion before the writer waits (0 = unbounded)")
		mtu := fs.Uint("mtu", 0, "SCTP packet size (0 = pion's default)")
		timeout := fs.Duration("timeout", 120*time.Second, "give up after this long")
		_ = fs.Parse(args)
		if *bind == "" || *connect == "" || *size < 1 || *size > maxMessage ||
			*count < 1 || fs.NArg() != 0 || *timeout <= 0 {
			benchUsage()
		}
		dl := armBenchTimeout(*timeout)
		runBlast(*bind, *connect, *size, uint64(*count), *buffer, uint32(*mtu), dl)
	default:
		benchUsage()
	}
}

func armBenchTimeout(d time.Duration) time.Time {
	dl := time.Now().Add(d)
	time.AfterFunc(d, func() { fail("timeout") })
	return dl
}

// ---- sink ---------------------------------------------------------------

func runSink(bind string, dl time.Time) {
	conn, seen := listenPeer(bind, dl, fail)
	assoc := acceptAssociation(baseConfig("sink", conn), fail, interleavingOption()...)
	logf("sink: association established with %s", conn.peer)

	var (
		msgs, bytes atomic.Uint64
		startOnce   sync.Once
		start       time.Time
		errMu       sync.Mutex
		endErrs     []error
	)
	read := func(s *sctp.Stream) {
		buf := make([]byte, readBufSize)
		for {
			n, _, err := s.ReadSCTP(buf)
			if err != nil {
				errMu.Lock()
				endErrs = append(endErrs, err)
				errMu.Unlock()
				return
			}
			startOnce.Do(func() { start = time.Now() })
			msgs.Add(1)
			bytes.Add(uint64(n))
		}
	}
	serveStreams(assoc, "", read)
	end := time.Now()

	for _, e := range endErrs {
		if isAbort(e) {
			fail("association aborted: %v", e)
		}
		if !isOrderlyClose(e) {
			fail("association ended with error: %v", e)
		}
	}
	if seen.abort.Load() {
		fail("ABORT received")
	}
	if !seen.shutdown.Load() {
		fail("association closed without SHUTDOWN from peer")
	}
	secs := 0.0
	if msgs.Load() > 0 {
		secs = end.Sub(start).Seconds()
	}
	finish(0, "SINK received=%d bytes=%d seconds=%.6f", msgs.Load(), bytes.Load(), secs)
}

// ---- blast --------------------------------------------------------------

func runBlast(bind, connect string, size int, count, buffer uint64, mtu uint32, dl time.Time) {
	conn, seen := dialPeer(bind, connect, fail)
	cfg := baseConfig("blast", conn)
	cfg.MTU = mtu
	assoc := connectAssociation(cfg, dl, fail, interleavingOption()...)
	logf("blast: association established (MTU %d)", assoc.MTU())

	s, err := assoc.OpenStream(0, sctp.PayloadTypeWebRTCBinary)
	if err != nil {
		fail("open stream 0: %v", err)
	}
	// Writable is signalled (capacity 1, never blocks the read loop) when
	// the queued amount falls to half the bound.
	writable := make(chan struct{}, 1)
	if buffer > 0 {
		s.SetBufferedAmountLowThreshold(buffer / 2)
		s.OnBufferedAmountLow(func() {
			select {
			case writable <- struct{}{}:
			default:
			}
		})
	}

	payload := make([]byte, size)
	for j := range payload {
		payload[j] = 0xa5
	}
	start := time.Now()
	for i := uint64(0); i < count; i++ {
		for buffer > 0 && s.BufferedAmount() > buffer {
			select {
			case <-writable:
			case <-time.After(10 * time.Millisecond):
				// Belt and braces: re-check in case a signal raced the test.
			}
		}
		if _, err := s.WriteSCTP(payload, sctp.PayloadTypeWebRTCBinary); err != nil {
			fail("write %d: %v", i, err)
		}
	}
	shutdownAssociation(assoc, dl, fail)
	secs := time.Since(start).Seconds()
	_ = assoc.Close()
	switch {
	case seen.abort.Load():
		fail("ABORT received")
	case !seen.shutdownAck.Load():
		fail("association closed without SHUTDOWN ACK")
	}
	finish(0, "BLAST sent=%d seconds=%.6f", count, secs)
}
