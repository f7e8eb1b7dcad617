// Stream reconfiguration roles (RFC 6525), not part of PROTOCOL.md; the
// usrsctp peer has the same two (see its "reconfig" block):
//
//	pion-peer reconfig-server --bind 127.0.0.1:UDP
//	pion-peer reconfig-client --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --count K
//
// The initiator sends K messages "before-<i>" (PPID 1001) on stream 1, resets
// its outgoing stream 1 (pion: Stream.Close, which sends an Outgoing SSN
// Reset Request once the stream's queued data has gone), then K messages
// "after-<i>" (PPID 1002) on stream 1. pion cannot reuse a stream id until the
// other side has reset its own outgoing stream too (RFC 8831 6.7: pion
// deletes the stream when its incoming side is reset), so the client waits
// for that before opening stream 1 again; the server, like a data channel,
// closes its stream 1 when it sees the incoming reset.
//
// pion does not report SSNs, so the server checks order and content only
// (ssn=na); the reset shows as io.EOF on the stream 1 it had, and the "after"
// messages arrive on a new stream 1. Messages with PPID 1009 are counted as
// "added" (pion cannot add streams: it drops a RE-CONFIG with an Add Streams
// Request as unparsable). The server prints, when the association ends,
//
//	RECONFIG before=<b> reset=<0|1> after=<a> ssn=na added=<m>
//
// and the client "OK reconfig before=K after=K added=0" once shut down.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/pion/sctp"
)

const reconfigStream = 1

func reconfigMain(role string, args []string) {
	armTimeout()
	fs := flag.NewFlagSet(role, flag.ExitOnError)
	bind := fs.String("bind", "", "local UDP address")
	connect := fs.String("connect", "", "remote UDP address")
	count := fs.Int("count", 0, "messages before and after the reset")
	_ = fs.Parse(args)
	switch {
	case *bind == "" || fs.NArg() != 0:
	case role == "reconfig-server":
		runReconfigServer(*bind)
		return
	case role == "reconfig-client" && *connect != "" && *count > 0:
		runReconfigClient(*bind, *connect, *count)
		return
	}
	fmt.Fprintln(os.Stderr, "usage: pion-peer reconfig-server --bind 127.0.0.1:UDP\n"+
		"       pion-peer reconfig-client --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --count K")
	os.Exit(2)
}

type reconfigServer struct {
	mu                   sync.Mutex
	before, after, added int
	reset                bool
}

// take checks one message: the phases of stream 1 in order, PPID 1009 counted.
func (r *reconfigServer) take(sid uint16, msg []byte, ppid uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ppid == 1009 {
		r.added++
		return
	}
	if sid != reconfigStream || (ppid != 1001 && ppid != 1002) {
		fail("unexpected message on stream %d with PPID %d", sid, ppid)
	}
	want := fmt.Sprintf("before-%d", r.before)
	if ppid == 1002 {
		want = fmt.Sprintf("after-%d", r.after)
		if !r.reset {
			fail("'%s' before the reset of stream %d", want, sid)
		}
	}
	if string(msg) != want {
		fail("expected '%s', got '%s'", want, msg)
	}
	if ppid == 1001 {
		r.before++
	} else {
		r.after++
	}
}

func runReconfigServer(bind string) {
	conn, seen := listenPeer(bind, deadline(), fail)
	assoc := acceptAssociation(baseConfig("server", conn), fail, interleavingOption()...)
	r := &reconfigServer{}
	read := func(s *sctp.Stream) {
		buf := make([]byte, readBufSize)
		for {
			n, ppi, err := s.ReadSCTP(buf)
			if err != nil {
				if errors.Is(err, io.EOF) && s.StreamIdentifier() == reconfigStream {
					// The peer reset its outgoing stream 1: as a data
					// channel does (RFC 8831 6.7), reset ours too.
					r.mu.Lock()
					first := !r.reset
					r.reset = true
					r.mu.Unlock()
					if first {
						logf("server: stream %d reset by the peer", reconfigStream)
						_ = s.Close()
					}
				}
				return
			}
			r.take(s.StreamIdentifier(), buf[:n], uint32(ppi))
		}
	}
	serveStreams(assoc, "server", read)
	r.mu.Lock()
	defer r.mu.Unlock()
	if seen.abort.Load() {
		fail("association aborted")
	}
	reset := 0
	if r.reset {
		reset = 1
	}
	finish(0, "RECONFIG before=%d reset=%d after=%d ssn=na added=%d", r.before, reset, r.after, r.added)
}

func runReconfigClient(bind, connect string, count int) {
	conn, seen := dialPeer(bind, connect, fail)
	assoc := connectAssociation(baseConfig("client", conn), deadline(), fail, interleavingOption()...)
	s, err := assoc.OpenStream(reconfigStream, sctp.PayloadProtocolIdentifier(1001))
	if err != nil {
		fail("open stream: %v", err)
	}
	reset := make(chan struct{})
	go func() {
		buf := make([]byte, readBufSize)
		for {
			if _, _, err := s.ReadSCTP(buf); err != nil {
				if errors.Is(err, io.EOF) {
					close(reset)
				}
				return
			}
		}
	}()
	for i := 0; i < count; i++ {
		if _, err := s.WriteSCTP([]byte(fmt.Sprintf("before-%d", i)), 1001); err != nil {
			fail("send before-%d: %v", i, err)
		}
	}
	// With the messages in flight: the reset goes once they have TSNs.
	if err := s.Close(); err != nil {
		fail("close (reset) stream %d: %v", reconfigStream, err)
	}
	select {
	case <-reset:
	case <-time.After(time.Until(deadline())):
		fail("the peer never reset its stream %d", reconfigStream)
	}
	// pion deletes the stream right after it reports EOF.
	time.Sleep(100 * time.Millisecond)
	s2, err := assoc.OpenStream(reconfigStream, sctp.PayloadProtocolIdentifier(1002))
	if err != nil {
		fail("reopen stream: %v", err)
	}
	for i := 0; i < count; i++ {
		if _, err := s2.WriteSCTP([]byte(fmt.Sprintf("after-%d", i)), 1002); err != nil {
			fail("send after-%d: %v", i, err)
		}
	}
	shutdownAssociation(assoc, deadline(), fail)
	_ = assoc.Close()
	if seen.abort.Load() || !seen.shutdownAck.Load() {
		fail("association did not end with SHUTDOWN ACK")
	}
	finish(0, "OK reconfig before=%d after=%d added=0", count, count)
}
