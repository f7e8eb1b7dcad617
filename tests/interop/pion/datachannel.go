package main

// The "dc" role: WebRTC data channels (github.com/pion/datachannel, RFC 8831
// and RFC 8832) over a pion/sctp association over UDP, without DTLS, against
// Brisk's datachannel module (crates/brisk/tests/datachannel_interop.rs).
//
//	pion-peer dc --bind 127.0.0.1:UDP [--connect 127.0.0.1:UDP]
//	             --dtls-role client|server [--count N] [--close]
//
// With --connect pion starts the association, else it waits for one. The
// DTLS role only picks pion's stream ids (RFC 8832 6: client even, server
// odd); the peer plays the other.
//
// Script, per side: open two channels, "<side>-reliable" (reliable, ordered)
// and "<side>-unreliable" (unordered, maxRetransmits 0); send dcMessage(0..N)
// on each; the other side echoes every message of the channels it accepted,
// same bytes, same type; each side verifies its echoes (the reliable channel
// in order, the unreliable one as a multiset: nothing is lost on loopback).
// Brisk's channels must arrive with protocol "interop" and priority 512.
// Then pion sends the text "DONE" on pion-reliable. With --close, pion first
// closes pion-unreliable (a stream reset, RFC 8831 6.7), and expects Brisk to
// close brisk-reliable (a read returns io.EOF on it). Brisk then shuts the
// association down; pion prints
//
//	OK verified=<2N> echoed=<2N> peer_closed=<labels closed by Brisk>
//
// and exits 0.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pion/datachannel"
	"github.com/pion/sctp"
)

// dcMessage is message i of the script: text, binary, empty text, empty
// binary in turn; text includes multi-byte UTF-8.
func dcMessage(i int) ([]byte, bool) {
	switch i % 4 {
	case 0:
		return []byte(fmt.Sprintf("m%d-%s", i, strings.Repeat("é", i%7))), true
	case 1:
		b := make([]byte, (i*37)%1500+1)
		for j := range b {
			b[j] = byte((i + j*13) % 256)
		}
		return b, false
	case 2:
		return []byte{}, true
	default:
		return []byte{}, false
	}
}

type dcRun struct {
	count    int
	close    bool
	echoed   atomic.Int64
	verified atomic.Int64

	mu         sync.Mutex
	peerClosed []string
}

func dcMain(_ string, args []string) {
	fs := flag.NewFlagSet("dc", flag.ExitOnError)
	bind := fs.String("bind", "", "local UDP address")
	connect := fs.String("connect", "", "remote UDP address (pion starts the association)")
	role := fs.String("dtls-role", "", "client (even stream ids) or server (odd)")
	count := fs.Int("count", 100, "messages per channel")
	closeCh := fs.Bool("close", false, "close channels by stream reset")
	_ = fs.Parse(args)
	if *bind == "" || (*role != "client" && *role != "server") || *count < 1 || fs.NArg() != 0 {
		usage()
	}
	armTimeout()
	assoc := dcAssociation(*bind, *connect)
	run := &dcRun{count: *count, close: *closeCh}
	lf := loggerFactory()

	first := uint16(0)
	if *role == "server" {
		first = 1
	}
	rel, err := datachannel.Dial(assoc, first, &datachannel.Config{
		ChannelType: datachannel.ChannelTypeReliable, Label: "pion-reliable", LoggerFactory: lf,
	})
	if err != nil {
		fail("dial pion-reliable: %v", err)
	}
	unrel, err := datachannel.Dial(assoc, first+2, &datachannel.Config{
		ChannelType:          datachannel.ChannelTypePartialReliableRexmitUnordered,
		ReliabilityParameter: 0, Label: "pion-unreliable", LoggerFactory: lf,
	})
	if err != nil {
		fail("dial pion-unreliable: %v", err)
	}

	acceptDone := make(chan struct{})
	var echoes sync.WaitGroup
	go func() {
		defer close(acceptDone)
		for {
			dc, err := datachannel.Accept(assoc, &datachannel.Config{LoggerFactory: lf}, rel, unrel)
			if err != nil {
				return
			}
			if dc == rel || dc == unrel {
				continue
			}
			run.checkBriskChannel(dc)
			echoes.Add(1)
			go func() {
				defer echoes.Done()
				run.echo(dc)
			}()
		}
	}()

	var own sync.WaitGroup
	for _, dc := range []*datachannel.DataChannel{rel, unrel} {
		own.Add(1)
		go func() {
			defer own.Done()
			run.sendAndVerify(dc, dc == rel)
		}()
	}
	own.Wait()
	if run.close {
		if err := unrel.Close(); err != nil {
			fail("close pion-unreliable: %v", err)
		}
	}
	if _, err := rel.WriteDataChannel([]byte("DONE"), true); err != nil {
		fail("send DONE: %v", err)
	}
	<-acceptDone // the association has ended: Brisk shut it down
	echoes.Wait()
	run.mu.Lock()
	sort.Strings(run.peerClosed)
	closed := strings.Join(run.peerClosed, ",")
	run.mu.Unlock()
	if run.close && closed != "brisk-reliable" {
		fail("Brisk closed %q, expected brisk-reliable", closed)
	}
	finish(0, "OK verified=%d echoed=%d peer_closed=%s",
		run.verified.Load(), run.echoed.Load(), closed)
}

// dcAssociation starts (with connect) or waits for the association.
func dcAssociation(bind, connect string) *sctp.Association {
	if connect == "" {
		conn, _ := listenPeer(bind, deadline(), fail)
		return acceptAssociation(baseConfig("dc-server", conn), fail)
	}
	conn, _ := dialPeer(bind, connect, fail)
	return connectAssociation(baseConfig("dc-client", conn), deadline(), fail)
}

// checkBriskChannel checks what Brisk's DATA_CHANNEL_OPEN said.
func (r *dcRun) checkBriskChannel(dc *datachannel.DataChannel) {
	c := dc.Config
	want := map[string]datachannel.ChannelType{
		"brisk-reliable":   datachannel.ChannelTypeReliable,
		"brisk-unreliable": datachannel.ChannelTypePartialReliableRexmitUnordered,
	}
	typ, ok := want[c.Label]
	if !ok || c.ChannelType != typ || c.ReliabilityParameter != 0 ||
		c.Protocol != "interop" || c.Priority != 512 {
		fail("unexpected channel from Brisk: %+v", c)
	}
}

// echo returns every message on a channel Brisk opened, until it is closed.
func (r *dcRun) echo(dc *datachannel.DataChannel) {
	buf := make([]byte, 65536)
	for {
		n, isString, err := dc.ReadDataChannel(buf)
		if err != nil {
			if errors.Is(err, io.EOF) && r.close {
				// Brisk reset its outgoing stream; pion's read reset ours.
				r.mu.Lock()
				r.peerClosed = append(r.peerClosed, dc.Config.Label)
				r.mu.Unlock()
			}
			return
		}
		if _, err := dc.WriteDataChannel(buf[:n], isString); err != nil {
			return
		}
		r.echoed.Add(1)
	}
}

// sendAndVerify sends the script's messages on one of pion's channels and
// checks Brisk's echoes.
func (r *dcRun) sendAndVerify(dc *datachannel.DataChannel, ordered bool) {
	label := dc.Config.Label
	done := make(chan struct{})
	go func() {
		defer close(done)
		want := map[string]int{}
		for i := 0; i < r.count; i++ {
			b, s := dcMessage(i)
			want[fmt.Sprintf("%v:%x", s, b)]++
		}
		buf := make([]byte, 65536)
		for i := 0; i < r.count; i++ {
			n, isString, err := dc.ReadDataChannel(buf)
			if err != nil {
				fail("%s: read echo %d: %v", label, i, err)
			}
			if ordered {
				b, s := dcMessage(i)
				if s != isString || !bytes.Equal(b, buf[:n]) {
					fail("%s: echo %d differs (string=%v, %d bytes)", label, i, isString, n)
				}
			} else {
				key := fmt.Sprintf("%v:%x", isString, buf[:n])
				if want[key] == 0 {
					fail("%s: unexpected echo (string=%v, %d bytes)", label, isString, n)
				}
				want[key]--
			}
			r.verified.Add(1)
		}
	}()
	for i := 0; i < r.count; i++ {
		b, s := dcMessage(i)
		if _, err := dc.WriteDataChannel(b, s); err != nil {
			fail("%s: send %d: %v", label, i, err)
		}
	}
	<-done
}
