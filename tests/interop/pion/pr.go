package main

// Roles "pr-send" and "pr-recv" of ../PROTOCOL.md: partial reliability
// (RFC 3758 / RFC 7496) under loss. pr-send connects and sends PRGEN(0..N-1)
// on stream 0, unordered, with a retransmission limit or a lifetime
// (Stream.SetReliabilityParams); pr-recv accepts one association and
// reports which messages arrived. Either way the other side ends the
// association with a graceful shutdown.
//
// pion has no notification for abandoned messages, so pr-send's result line
// carries no "abandoned=" field (usrsctp's does).

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pion/sctp"
)

// prSize is PRGEN's size in bytes (--size, default 100).
var prSize = 100

// prGen implements PRGEN(i): prSize bytes, byte j = (i*131 + j*7) mod 256.
func prGen(i uint64) []byte {
	p := make([]byte, prSize)
	for j := range p {
		p[j] = byte((i*131 + uint64(j)*7) % 256)
	}
	return p
}

func prUsage() {
	fmt.Fprintln(os.Stderr, `usage:
  pion-peer pr-recv --bind 127.0.0.1:UDP --count N [--order unordered|ordered]
                    [--size BYTES]
  pion-peer pr-send --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --count N
                    --pr rtx:R|ttl:MS [--every MS] [--order unordered|ordered]
                    [--size BYTES]`)
	os.Exit(2)
}

func prMain(role string, args []string) {
	armTimeout()
	fs := flag.NewFlagSet(role, flag.ExitOnError)
	bind := fs.String("bind", "", "local UDP address")
	count := fs.Uint64("count", 0, "number of messages")
	order := fs.String("order", "unordered", "unordered|ordered")
	size := fs.Int("size", 100, "message size in bytes")
	connect, policy, every := new(string), new(string), new(float64)
	if role == "pr-send" {
		connect = fs.String("connect", "", "remote UDP address")
		policy = fs.String("pr", "", "rtx:R or ttl:MS")
		every = fs.Float64("every", 0, "ms between messages")
	}
	_ = fs.Parse(args)
	if *bind == "" || *count == 0 || *count > 100000 || fs.NArg() != 0 || *every < 0 ||
		(*order != "ordered" && *order != "unordered") || *size < 1 || *size > maxMessage {
		prUsage()
	}
	prSize = *size
	ordered := *order == "ordered"
	if role == "pr-recv" {
		runPrRecv(*bind, *count, ordered)
		return
	}
	relType, relVal, ok := parsePolicy(*policy)
	if *connect == "" || !ok {
		prUsage()
	}
	runPrSend(*bind, *connect, *count, ordered, relType, relVal,
		time.Duration(*every*float64(time.Millisecond)))
}

func parsePolicy(s string) (byte, uint32, bool) {
	kind, val, found := strings.Cut(s, ":")
	v, err := strconv.ParseUint(val, 10, 32)
	if !found || err != nil {
		return 0, 0, false
	}
	switch kind {
	case "rtx":
		return sctp.ReliabilityTypeRexmit, uint32(v), true
	case "ttl":
		return sctp.ReliabilityTypeTimed, uint32(v), v > 0
	}
	return 0, 0, false
}

func runPrSend(bind, connect string, count uint64, ordered bool, relType byte, relVal uint32,
	every time.Duration,
) {
	conn, seen := dialPeer(bind, connect, fail)
	assoc := connectAssociation(baseConfig("client", conn), deadline(), fail, interleavingOption()...)
	logNegotiated(assoc)
	s, err := assoc.OpenStream(0, sctp.PayloadProtocolIdentifier(0))
	if err != nil {
		fail("open stream 0: %v", err)
	}
	s.SetReliabilityParams(!ordered, relType, relVal)
	t0 := time.Now()
	for i := range count {
		time.Sleep(time.Until(t0.Add(time.Duration(i) * every)))
		if _, err := s.WriteSCTP(prGen(i), sctp.PayloadProtocolIdentifier(1000+i)); err != nil {
			fail("send %d: %v", i, err)
		}
	}
	// Until the receiver shuts the association down: the stream's read
	// error then ends this (see isOrderlyClose); no data is expected.
	buf := make([]byte, readBufSize)
	for {
		n, ppi, err := s.ReadSCTP(buf)
		if err == nil {
			fail("data from the receiver (%d bytes, ppid %d)", n, ppi)
		}
		if isAbort(err) || seen.abort.Load() {
			fail("association aborted: %v", err)
		}
		break
	}
	_ = assoc.Close()
	if !seen.shutdown.Load() {
		fail("association ended without SHUTDOWN from the receiver")
	}
	finish(0, "SENT count=%d", count)
}

func runPrRecv(bind string, count uint64, ordered bool) {
	conn, seen := listenPeer(bind, deadline(), fail)
	assoc := acceptAssociation(baseConfig("server", conn), fail, interleavingOption()...)
	logNegotiated(assoc)
	var (
		mu       sync.Mutex
		received = map[uint64]bool{}
		next     uint64 // ordered: skipped messages leave gaps, never reorderings
	)
	read := func(s *sctp.Stream) {
		buf := make([]byte, readBufSize)
		for {
			n, ppi, err := s.ReadSCTP(buf)
			if err != nil {
				if isAbort(err) {
					fail("association aborted: %v", err)
				}
				return
			}
			if s.StreamIdentifier() != 0 {
				fail("message on stream %d", s.StreamIdentifier())
			}
			i := uint64(ppi) - 1000
			if uint64(ppi) < 1000 || i >= count {
				fail("message with unexpected ppid %d", ppi)
			}
			if !bytes.Equal(buf[:n], prGen(i)) {
				fail("message %d: %d bytes, differing from PRGEN", i, n)
			}
			mu.Lock()
			if received[i] {
				fail("message %d received twice", i)
			}
			if ordered && i < next {
				fail("message %d after message %d on an ordered stream", i, next-1)
			}
			next = i + 1
			received[i] = true
			mu.Unlock()
		}
	}
	serveStreams(assoc, "", read)
	if seen.abort.Load() || !seen.shutdown.Load() {
		fail("association ended without a graceful SHUTDOWN")
	}
	ids := make([]int, 0, len(received))
	for i := range received {
		ids = append(ids, int(i))
	}
	sort.Ints(ids)
	list := make([]string, len(ids))
	for k, i := range ids {
		list[k] = strconv.Itoa(i)
	}
	if len(list) == 0 {
		list = []string{"-"}
	}
	finish(0, "RECEIVED count=%d ids=%s", len(ids), strings.Join(list, ","))
}

// logNegotiated reports (stderr) whether I-DATA was negotiated and which
// forward TSN chunk pion uses: FORWARD TSN, or I-FORWARD-TSN with I-DATA
// (RFC 8260). The roles offer I-DATA unless PION_PEER_IDATA=0.
func logNegotiated(assoc *sctp.Association) {
	m, ok := assoc.Metadata()
	if !ok {
		logf("association metadata not available (not established)")
		return
	}
	mode := map[sctp.PartialReliabilityMode]string{
		sctp.PartialReliabilityModeNone:        "none",
		sctp.PartialReliabilityModeForwardTSN:  "FORWARD-TSN",
		sctp.PartialReliabilityModeIForwardTSN: "I-FORWARD-TSN",
	}[m.PartialReliabilityMode]
	logf("negotiated: I-DATA %v, partial reliability %s", m.MessageInterleavingEnabled, mode)
}
