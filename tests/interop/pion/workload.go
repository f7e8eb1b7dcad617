package main

// Message workload roles (../WORKLOAD.md), used by `brisk emulate` to measure
// each message's transfer time (MTT) over emulated links. They are not part
// of the interop protocol and do not touch the other roles:
//
//	pion-peer msg-recv --bind ADDR:PORT [--records FILE] [KNOBS]
//	pion-peer msg-send --bind ADDR:PORT --connect ADDR:PORT --size BYTES
//	                   (--every MS --count N | --bursts B --burst-size K --gap MS)
//	                   [--start-delay MS] [KNOBS]
//
// The ports are UDP ports; pion's SCTP port is 5000 on both sides. Messages go
// on stream 0, ordered, PPID 0 (pion accepts PPID 0 on send and receive).
//
// Stamps are CLOCK_MONOTONIC (clock_gettime(2)), shared by the sender and
// the receiver on one machine; Go's own monotonic readings are relative to
// each process's start and cannot be compared across processes. The sender
// also schedules its writes on CLOCK_MONOTONIC: clock_nanosleep(2) to an
// absolute time, on a locked OS thread with a 1 ns timer slack, because Go's
// timers can fire up to about 1 ms late.
//
// KNOBS are pion/sctp v1.11.3's tunables, for both roles; a value of 0 (the
// default) keeps pion's default:
//
//	--rto-max MS               RTO.Max (pion: 60000). RTO.Initial and RTO.Min
//	                           are fixed at 1000 ms in pion; RTO.Max also caps
//	                           them, so --rto-max below 1000 pins the RTO there.
//	--rack-min-rtt-wnd MS      RACK min-RTT window (pion: 30000)
//	--rack-reo-wnd-floor MS    RACK reordering window floor (pion: 0 = RTT/4)
//	--rack-wc-del-ack MS       RACK worst-case delayed ACK for the PTO (pion: 200)
//	--mtu BYTES                SCTP packet size (pion: 1191)
//	--min-cwnd BYTES           minimum congestion window
//	--fast-rtx-wnd BYTES       send window during fast retransmit
//	--cwnd-ca-step BYTES       cwnd increase per RTT in congestion avoidance
//	--max-receive-buffer BYTES advertised receive window (pion: 1048576)
//	--block-write              pion's BlockWrite: a write waits while earlier
//	                           data is still queued unsent (pion: writes never
//	                           block, the send queue is unbounded)
//
// The delayed-SACK timer (200 ms), Max.Init.Retransmits (8) and
// Path.Max.Retrans (5) are constants in pion and cannot be set.
//
// msg-send prints "SENT count=<N>" on stdout. msg-recv writes its CSV records
// to --records or stdout and its end line, "CLOSED received=<n>", on stderr;
// its "FAIL <reason>" also goes to stderr, so that stdout holds nothing but
// records. msg-send's "FAIL <reason>" goes to stdout, like the other roles.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/sctp"
	"golang.org/x/sys/unix"
)

const (
	defaultStartDelayMs = 500
	minWorkloadMessage  = 12 // seq (4) + written_ns (8)
)

func workloadUsage() {
	fmt.Fprintln(os.Stderr, `usage:
  pion-peer msg-recv --bind ADDR:PORT [--records FILE] [KNOBS]
  pion-peer msg-send --bind ADDR:PORT --connect ADDR:PORT --size BYTES
                     (--every MS --count N | --bursts B --burst-size K --gap MS)
                     [--start-delay MS] [KNOBS]
KNOBS (0 = pion's default):
  --rto-max MS  --rack-min-rtt-wnd MS  --rack-reo-wnd-floor MS  --rack-wc-del-ack MS
  --mtu BYTES  --min-cwnd BYTES  --fast-rtx-wnd BYTES  --cwnd-ca-step BYTES
  --max-receive-buffer BYTES  --block-write`)
	os.Exit(2)
}

// ---- result lines -------------------------------------------------------

// workloadOut is where the workload roles' result lines go: stdout for
// msg-send, stderr for msg-recv (whose stdout may carry the records).
var workloadOut io.Writer = os.Stdout

// wfinish is finish (main.go) with a chosen stream.
func wfinish(code int, format string, args ...any) {
	finishMu.Lock()
	if finished {
		finishMu.Unlock()
		select {} // another goroutine is exiting
	}
	finished = true
	fmt.Fprintf(workloadOut, format+"\n", args...)
	os.Exit(code)
}

func wfail(format string, args ...any) {
	wfinish(1, "FAIL "+format, args...)
}

// ---- CLOCK_MONOTONIC ----------------------------------------------------

// monoNow returns CLOCK_MONOTONIC in nanoseconds.
func monoNow() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		wfail("clock_gettime: %v", err)
	}
	return uint64(ts.Sec)*1_000_000_000 + uint64(ts.Nsec)
}

// sleepUntilMono blocks the calling OS thread until CLOCK_MONOTONIC reaches t
// (at once if it already has).
func sleepUntilMono(t uint64) {
	ts := unix.NsecToTimespec(int64(t))
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
		if err == nil {
			return
		}
		if !errors.Is(err, unix.EINTR) { // Go's preemption signals interrupt it
			wfail("clock_nanosleep: %v", err)
		}
	}
}

// msToNs converts a (possibly fractional) duration in milliseconds.
func msToNs(ms float64) uint64 { return uint64(math.Round(ms * 1e6)) }

// ---- the message ----------------------------------------------------------

// fillMessage writes seq and the filler of message seq into m (len(m) >= 12);
// written_ns (bytes 4..12) is left for the sender to stamp.
func fillMessage(m []byte, seq uint32) {
	binary.BigEndian.PutUint32(m[0:4], seq)
	base := uint64(seq) * 131
	for j := minWorkloadMessage; j < len(m); j++ {
		m[j] = byte((base + uint64(j)*7) % 256)
	}
}

// checkMessage verifies a received message's size and filler and returns its
// seq and written_ns.
func checkMessage(m []byte) (seq uint32, written uint64, err error) {
	if len(m) < minWorkloadMessage {
		return 0, 0, fmt.Errorf("message of %d bytes, shorter than %d", len(m), minWorkloadMessage)
	}
	seq = binary.BigEndian.Uint32(m[0:4])
	written = binary.BigEndian.Uint64(m[4:12])
	base := uint64(seq) * 131
	for j := minWorkloadMessage; j < len(m); j++ {
		if want := byte((base + uint64(j)*7) % 256); m[j] != want {
			return seq, written, fmt.Errorf("message seq=%d (%d bytes): byte %d is %d, want %d",
				seq, len(m), j, m[j], want)
		}
	}
	return seq, written, nil
}

// ---- knobs ----------------------------------------------------------------

type knobs struct {
	rtoMax, rackMinRTTWnd, rackReoWndFloor, rackWCDelAck float64 // ms
	mtu, minCwnd, fastRtxWnd, cwndCAStep, maxRecvBuf     uint    // bytes
	blockWrite                                           bool
}

func addKnobFlags(fs *flag.FlagSet) *knobs {
	k := &knobs{}
	fs.Float64Var(&k.rtoMax, "rto-max", 0, "RTO.Max in ms (0 = pion's 60000)")
	fs.Float64Var(&k.rackMinRTTWnd, "rack-min-rtt-wnd", 0, "RACK min-RTT window in ms (0 = pion's 30000)")
	fs.Float64Var(&k.rackReoWndFloor, "rack-reo-wnd-floor", 0, "RACK reordering window floor in ms (0 = RTT/4)")
	fs.Float64Var(&k.rackWCDelAck, "rack-wc-del-ack", 0, "RACK worst-case delayed ACK in ms (0 = pion's 200)")
	fs.UintVar(&k.mtu, "mtu", 0, "SCTP packet size in bytes (0 = pion's 1191)")
	fs.UintVar(&k.minCwnd, "min-cwnd", 0, "minimum congestion window in bytes")
	fs.UintVar(&k.fastRtxWnd, "fast-rtx-wnd", 0, "send window during fast retransmit in bytes")
	fs.UintVar(&k.cwndCAStep, "cwnd-ca-step", 0, "cwnd step in congestion avoidance in bytes")
	fs.UintVar(&k.maxRecvBuf, "max-receive-buffer", 0, "receive buffer in bytes (0 = pion's 1048576)")
	fs.BoolVar(&k.blockWrite, "block-write", false, "pion BlockWrite: a write waits while data is queued unsent")
	return k
}

func (k *knobs) valid() bool {
	for _, ms := range []float64{k.rtoMax, k.rackMinRTTWnd, k.rackReoWndFloor, k.rackWCDelAck} {
		if !(ms >= 0) || math.IsInf(ms, 0) { // also rejects NaN
			return false
		}
	}
	for _, b := range []uint{k.mtu, k.minCwnd, k.fastRtxWnd, k.cwndCAStep, k.maxRecvBuf} {
		if b > math.MaxUint32 {
			return false
		}
	}
	return true
}

func msDuration(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }

// options turns the knobs into pion options. They must come after the
// sctp.Config option (baseConfig), which overwrites BlockWrite and the RACK
// settings wholesale.
func (k *knobs) options() []sctp.AssociationOption {
	var o []sctp.AssociationOption
	if k.rtoMax > 0 {
		o = append(o, sctp.WithRTOMax(k.rtoMax))
	}
	if k.mtu > 0 {
		o = append(o, sctp.WithMTU(uint32(k.mtu)))
	}
	if k.minCwnd > 0 {
		o = append(o, sctp.WithMinCwnd(uint32(k.minCwnd)))
	}
	if k.fastRtxWnd > 0 {
		o = append(o, sctp.WithFastRtxWnd(uint32(k.fastRtxWnd)))
	}
	if k.cwndCAStep > 0 {
		o = append(o, sctp.WithCwndCAStep(uint32(k.cwndCAStep)))
	}
	if k.maxRecvBuf > 0 {
		o = append(o, sctp.WithMaxReceiveBufferSize(uint32(k.maxRecvBuf)))
	}
	if k.blockWrite {
		o = append(o, sctp.WithBlockWrite(true))
	}
	var rack []sctp.AssociationRACKOption
	if k.rackMinRTTWnd > 0 {
		rack = append(rack, sctp.WithRackMinRTTWnd(msDuration(k.rackMinRTTWnd)))
	}
	if k.rackReoWndFloor > 0 {
		rack = append(rack, sctp.WithRackReoWndFloor(msDuration(k.rackReoWndFloor)))
	}
	if k.rackWCDelAck > 0 {
		rack = append(rack, sctp.WithRackWCDelAck(msDuration(k.rackWCDelAck)))
	}
	if len(rack) > 0 {
		o = append(o, sctp.WithRACKOptions(rack...))
	}
	return o
}

// ---- command line ---------------------------------------------------------

type sendParams struct {
	bind, connect string
	size          int
	// offsets[seq] is message seq's scheduled time after t0, in ns.
	offsets      []uint64
	startDelayNs uint64
}

// workloadMain runs the "msg-send" and "msg-recv" roles. They arm their own
// timeouts instead of the interop peer's fixed 60 s.
func workloadMain(role string, args []string) {
	switch role {
	case "msg-recv":
		workloadOut = os.Stderr
		fs := flag.NewFlagSet("msg-recv", flag.ExitOnError)
		fs.Usage = workloadUsage
		bind := fs.String("bind", "", "local UDP address")
		records := fs.String("records", "", "CSV records file (default stdout)")
		k := addKnobFlags(fs)
		_ = fs.Parse(args)
		if *bind == "" || fs.NArg() != 0 || !k.valid() {
			workloadUsage()
		}
		runMsgRecv(*bind, *records, k)
	case "msg-send":
		workloadOut = os.Stdout
		fs := flag.NewFlagSet("msg-send", flag.ExitOnError)
		fs.Usage = workloadUsage
		bind := fs.String("bind", "", "local UDP address")
		connect := fs.String("connect", "", "remote UDP address")
		size := fs.Int("size", -1, "message size in bytes (>= 12)")
		every := fs.Float64("every", -1, "periodic: ms between messages")
		count := fs.Int64("count", -1, "periodic: number of messages")
		bursts := fs.Int64("bursts", -1, "bursts: number of bursts")
		burstSize := fs.Int64("burst-size", -1, "bursts: messages per burst")
		gap := fs.Float64("gap", -1, "bursts: ms between burst starts")
		startDelay := fs.Float64("start-delay", defaultStartDelayMs, "ms between association and t0")
		k := addKnobFlags(fs)
		_ = fs.Parse(args)
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		periodic := set["every"] || set["count"]
		burst := set["bursts"] || set["burst-size"] || set["gap"]
		okMs := func(ms float64) bool { return ms >= 0 && !math.IsInf(ms, 0) }
		if *bind == "" || *connect == "" || fs.NArg() != 0 || !k.valid() ||
			*size < minWorkloadMessage || *size > maxMessage || !okMs(*startDelay) ||
			periodic == burst {
			workloadUsage()
		}
		var offsets []uint64
		const maxMessages = math.MaxUint32 + 1 // seq is 32 bits
		if periodic {
			if !okMs(*every) || *count < 1 || *count > maxMessages {
				workloadUsage()
			}
			offsets = make([]uint64, *count)
			for seq := range offsets {
				offsets[seq] = msToNs(float64(seq) * *every)
			}
		} else {
			if *bursts < 1 || *burstSize < 1 || !okMs(*gap) ||
				*bursts > maxMessages / *burstSize {
				workloadUsage()
			}
			offsets = make([]uint64, *bursts**burstSize)
			for seq := range offsets {
				offsets[seq] = msToNs(float64(int64(seq) / *burstSize) * *gap)
			}
		}
		runMsgSend(sendParams{
			bind: *bind, connect: *connect, size: *size,
			offsets: offsets, startDelayNs: msToNs(*startDelay),
		}, k)
	default:
		workloadUsage()
	}
}

// ---- msg-send -------------------------------------------------------------

func runMsgSend(p sendParams, k *knobs) {
	// Association setup gets the interop peers' 60 s; from t0 on the limit is
	// t0 + schedule + 60 s (WORKLOAD.md).
	setupDeadline := time.Now().Add(overallTimeout)
	setupTimer := time.AfterFunc(overallTimeout, func() { wfail("timeout") })

	conn, seen := dialPeer(p.bind, p.connect, wfail)
	assoc := connectAssociation(baseConfig("msg-send", conn), setupDeadline, wfail,
		append(interleavingOption(), k.options()...)...)
	logf("msg-send: association established (MTU %d)", assoc.MTU())

	// Stream 0, ordered (pion's default), PPID 0.
	s, err := assoc.OpenStream(0, sctp.PayloadTypeUnknown)
	if err != nil {
		wfail("open stream 0: %v", err)
	}

	// The receiver sends no data; reading stream 0 surfaces an ABORT (or any
	// other end of the association) while we are still writing or waiting.
	var closing atomic.Bool
	go func() {
		buf := make([]byte, readBufSize)
		for {
			_, _, err := s.ReadSCTP(buf)
			if err == nil {
				logf("msg-send: ignoring a message from the receiver")
				continue
			}
			if closing.Load() {
				return
			}
			if isAbort(err) {
				wfail("peer aborted: %v", err)
			}
			wfail("association ended: %v", err)
		}
	}()

	// The writes are timed by clock_nanosleep on this (locked) thread, with
	// the smallest timer slack so the kernel does not defer the wake-ups.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
		logf("msg-send: PR_SET_TIMERSLACK: %v (keeping the default slack)", err)
	}

	sleepUntilMono(monoNow() + p.startDelayNs)
	t0 := monoNow()
	setupTimer.Stop()
	last := p.offsets[len(p.offsets)-1]
	sendDeadline := time.Now().Add(time.Duration(last) + overallTimeout)
	time.AfterFunc(time.Duration(last)+overallTimeout, func() { wfail("timeout") })

	msg := make([]byte, p.size)
	slept := false
	var target uint64
	for seq, off := range p.offsets {
		fillMessage(msg, uint32(seq))
		// Messages of one burst share their time: sleep once per distinct time.
		if !slept || t0+off > target {
			target = t0 + off
			sleepUntilMono(target)
			slept = true
		}
		stamp := monoNow()
		binary.BigEndian.PutUint64(msg[4:12], stamp)
		// pion copies the payload before WriteSCTP returns, so msg is reused.
		if _, err := s.WriteSCTP(msg, sctp.PayloadTypeUnknown); err != nil {
			wfail("write seq=%d: %v", seq, err)
		}
	}
	runtime.UnlockOSThread()

	// Everything acknowledged: pion releases a stream's buffered amount on
	// the cumulative TSN ack of each chunk.
	for s.BufferedAmount() > 0 {
		time.Sleep(time.Millisecond)
	}
	closing.Store(true)

	// Graceful SHUTDOWN; pion sends it once nothing is pending or in flight
	// and Shutdown returns when the write loop has ended.
	shutdownAssociation(assoc, sendDeadline, wfail)
	// Shutdown also returns when an ABORT ended the write loop: wait for the
	// read loop, then check the wire.
	_ = assoc.Close()
	switch {
	case seen.abort.Load():
		wfail("ABORT received during shutdown")
	case !seen.shutdownAck.Load():
		wfail("association closed without SHUTDOWN ACK")
	}
	wfinish(0, "SENT count=%d", len(p.offsets))
}

// ---- msg-recv -------------------------------------------------------------

func runMsgRecv(bind, records string, k *knobs) {
	var out io.Writer = os.Stdout
	if records != "" {
		f, err := os.Create(records)
		if err != nil {
			wfail("records file: %v", err)
		}
		out = f // closed by the exit; every row is flushed as written
	}
	rows := bufio.NewWriter(out)
	var rowsMu sync.Mutex
	received := uint64(0)
	emit := func(format string, args ...any) {
		fmt.Fprintf(rows, format, args...)
		if err := rows.Flush(); err != nil {
			wfail("writing records: %v", err)
		}
	}
	emit("seq,written_ns,read_ns,size\n")

	conn, seen := listenPeer(bind, time.Time{}, wfail) // no deadline: wait for the sender
	assoc := acceptAssociation(baseConfig("msg-recv", conn), wfail,
		append(interleavingOption(), k.options()...)...)
	logf("msg-recv: association established with %s", conn.peer)

	var (
		errMu   sync.Mutex
		endErrs []error
	)
	read := func(s *sctp.Stream) {
		if id := s.StreamIdentifier(); id != 0 {
			logf("msg-recv: messages on stream %d (the workload uses stream 0)", id)
		}
		buf := make([]byte, readBufSize)
		for {
			n, _, err := s.ReadSCTP(buf)
			readNs := monoNow()
			if errors.Is(err, io.ErrShortBuffer) {
				wfail("message larger than %d bytes", len(buf))
			}
			if err != nil {
				errMu.Lock()
				endErrs = append(endErrs, err)
				errMu.Unlock()
				return
			}
			seq, written, err := checkMessage(buf[:n])
			if err != nil {
				wfail("%v", err)
			}
			rowsMu.Lock()
			emit("%d,%d,%d,%d\n", seq, written, readNs, n)
			received++
			rowsMu.Unlock()
		}
	}
	serveStreams(assoc, "", read)

	for _, e := range endErrs {
		if isAbort(e) {
			wfail("association aborted: %v", e)
		}
		if !isOrderlyClose(e) {
			wfail("association ended with error: %v", e)
		}
	}
	switch {
	case seen.abort.Load():
		wfail("ABORT received")
	case !seen.shutdown.Load():
		wfail("association closed without SHUTDOWN from peer")
	}
	rowsMu.Lock()
	n := received
	rowsMu.Unlock()
	wfinish(0, "CLOSED received=%d", n)
}
