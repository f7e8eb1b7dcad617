/*
 * usrsctp interop peer for Brisk.
 *
 * Implements the `server` and `client` roles of ../PROTOCOL.md on top of
 * usrsctp (tested with 0.9.5), speaking SCTP over UDP (RFC 6951) on 127.0.0.1.
 *
 *   peer server --bind 127.0.0.1:UDP
 *   peer client --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --count N
 *               [--seed S] [--end shutdown|abort] [--abort-after K] [--window W]
 *
 * stdout carries only the result lines of PROTOCOL.md; diagnostics go to stderr.
 *
 * It also implements the `msg-send` and `msg-recv` roles of the message
 * workload protocol, ../WORKLOAD.md:
 *
 *   peer msg-recv --bind ADDR:PORT [--records FILE]
 *   peer msg-send --bind ADDR:PORT --connect ADDR:PORT --size BYTES
 *                 (--every MS --count N | --bursts B --burst-size K --gap MS)
 *                 [--start-delay MS]
 *
 * And the `pr-send` and `pr-recv` roles (partial reliability under loss,
 * ../PROTOCOL.md), in their own block near the end of this file, as are the
 * `reconfig-*` roles (RFC 6525) and the `mh-send` and `mh-recv` roles
 * (multi-homing over UDP encapsulation, in network namespaces).
 *
 * Every role also takes these, each applied to the socket before the
 * association exists (so it holds from the handshake on), and each left at
 * usrsctp's default when absent:
 *
 *   --rto-min MS --rto-initial MS --rto-max MS   SCTP_RTOINFO (whole ms;
 *        usrsctp requires min <= initial <= max, counting its defaults --
 *        min 1000, initial 3000, max 60000 ms in 0.9.5 -- for the ones not
 *        given)
 *   --sack-delay MS   SCTP_DELAYED_SACK: the delayed SACK timer (1..500 ms);
 *        0 switches delayed SACK off (sack_freq 1: a SACK for every packet)
 *
 * msg-send prints, after `SENT count=<N>`, `STATS rtx=<R>`: R is the
 * number of DATA chunks usrsctp retransmitted (fast or on T3 expiry), from
 * the stack-wide counter sctps_sendretransdata (usrsctp_get_stat), which is
 * this association's because the process has only one.  usrsctp has no
 * per-association statistics (no SCTP_GET_ASSOC_STATS).  msg-send waits for
 * every message to be acknowledged with SCTP_SENDER_DRY_EVENT (usrsctp's
 * SCTP_STATUS counts the sent queue but not the stream queues), then shuts
 * the association down gracefully.  msg-recv has no time limit of its own
 * (WORKLOAD.md gives none): whoever runs it bounds it.
 *
 * usrsctp behaviour this file relies on (checked against the 0.9.5.0 sources):
 *  - usrsctp_init(port, NULL, ...) opens the UDP encapsulation socket on
 *    INADDR_ANY:port (and [::]:port); packets arriving there are SCTP packets
 *    (RFC 6951).  Replies to a peer that reached us over UDP go back to the
 *    packet's UDP source port (the port is stored per path), so the server
 *    needs no SCTP_REMOTE_UDP_ENCAPS_PORT.
 *  - SCTP_REMOTE_UDP_ENCAPS_PORT set on a one-to-one socket before connect()
 *    is stored on the endpoint and used for the association created by
 *    connect() (sctp_usrreq.c, sctp_setopt).
 *  - The PPID is opaque to the stack: snd_ppid is copied into the DATA chunk
 *    unchanged and the DATA chunk's PPID is copied into rcv_ppid unchanged
 *    (sctp_output.c / sctp_indata.c).  As with every SCTP socket API
 *    (RFC 6458), the application therefore passes it in network byte order.
 *  - rcv_flags carries SCTP_UNORDERED for DATA chunks with the U bit.
 *  - On a one-to-one (SOCK_STREAM) socket an ABORT from the peer queues an
 *    SCTP_ASSOC_CHANGE/SCTP_COMM_LOST notification (whose sac_info holds the
 *    ABORT chunk) before the socket is marked unreadable, and a graceful end
 *    queues SCTP_ASSOC_CHANGE/SCTP_SHUTDOWN_COMP (sctputil.c,
 *    sctp_notify_assoc_change; sctp_input.c, sctp_handle_shutdown_ack /
 *    sctp_handle_shutdown_complete).  Queued data and notifications are read
 *    before recv reports EOF (0) or the socket error.
 *  - usrsctp_sendv() with SCTP_ABORT in snd_flags sends an ABORT whose single
 *    error cause is User-Initiated Abort (cause 12, RFC 9260 3.3.10.12)
 *    carrying the data as the upper layer abort reason (sctp_lower_sosend).
 *  - A message larger than the partial delivery point is handed to the
 *    application in pieces, the last one flagged MSG_EOR; with a single
 *    association pieces of different messages are never interleaved.
 *
 * Departures from usrsctp's defaults (everything else, e.g. ECN, PR-SCTP,
 * AUTH, ASCONF, RE-CONFIG support in INIT, is left as it is):
 *  - sysctl sctp_no_csum_on_loopback = 0 (see stack_init());
 *  - per socket: SCTP_INITMSG 16/16 streams, SO_SNDBUF/SO_RCVBUF 1 MiB,
 *    SCTP_NODELAY, SCTP_RECVRCVINFO, SCTP_ASSOC_CHANGE and
 *    SCTP_SHUTDOWN_EVENT notifications.
 *
 * Worth knowing when reading captures: usrsctp fixes its UDP socket buffers
 * at 128 KiB, so on loopback bursts of large messages can overflow them
 * (UdpRcvbufErrors) and DATA gets retransmitted; and after a user abort the
 * echoes still in flight are answered with ABORT (T bit set), as RFC 9260
 * 8.4 prescribes for out-of-the-blue packets.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <usrsctp.h>

#define SCTP_PORT 5000           /* SCTP port on both sides (PROTOCOL.md) */
#define NUM_STREAMS 16           /* requested in SCTP_INITMSG; 0..7 are used */
#define USED_STREAMS 8
#define MAX_MSG (256 * 1024)     /* largest message accepted (GEN max is 64 KiB) */
#define SOCK_BUF (1024 * 1024)   /* SO_SNDBUF / SO_RCVBUF */
#define TIMEOUT_S 60             /* overall limit (PROTOCOL.md) */
#define ABORT_REASON "interop abort"

static const uint32_t SIZES[12] = {1, 2, 3, 4, 100, 1000, 1199, 1200, 1452, 4096, 16384, 65536};

/* ------------------------------------------------------------------------ */
/* Diagnostics, result lines, failure                                       */
/* ------------------------------------------------------------------------ */

static const char *g_role = "peer";

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "usrsctp-peer %s: ", g_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* usrsctp's debug output (only produced if the library was built with
 * SCTP_DEBUG and debugging is switched on); goes to stderr. */
static void usrsctp_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* Exactly one result line is printed.  g_report records which kind won:
 * REPORT_NONE until then, REPORT_OK for a success line, REPORT_FAIL for a
 * FAIL line (from fail() or the timeout). */
enum { REPORT_NONE, REPORT_OK, REPORT_FAIL };
static atomic_int g_report = REPORT_NONE;

static int claim_report(int kind)
{
	int none = REPORT_NONE;

	return atomic_compare_exchange_strong(&g_report, &none, kind);
}

/* Writes the success result line to `out`. */
static void vresult(FILE *out, const char *fmt, va_list ap)
{
	if (!claim_report(REPORT_OK))
		return;
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	fflush(out);
}

/* Writes the success result line to stdout (the only thing written there
 * besides a FAIL line, and msg-send's STATS line). */
static void result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void result(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vresult(stdout, fmt, ap);
	va_end(ap);
}

/* msg-recv's result line, on stderr (WORKLOAD.md: stdout may carry the
 * records). */
static void result_stderr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void result_stderr(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vresult(stderr, fmt, ap);
	va_end(ap);
}

/* The connected socket, so that a failure can abort the association and
 * the peer does not wait for its own timeout. */
static struct socket *g_conn;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	/* The first report wins (the client has two threads); a second failing
	 * thread waits here for the first one to exit the process. */
	if (!claim_report(REPORT_FAIL)) {
		for (;;)
			pause();
	}
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	diag("FAIL %s", reason);
	printf("FAIL %s\n", reason);
	fflush(stdout);
	if (g_conn != NULL) {
		/* Best effort: tell the peer (User-Initiated Abort "interop fail"). */
		struct sctp_sndinfo snd;

		memset(&snd, 0, sizeof(snd));
		snd.snd_flags = SCTP_ABORT;
		(void)usrsctp_sendv(g_conn, "interop fail", 12, NULL, 0, &snd,
		    (socklen_t)sizeof(snd), SCTP_SENDV_SNDINFO, 0);
	}
	/* Skip usrsctp_finish(): its threads die with the process. */
	_exit(1);
}

/* SIGALRM after TIMEOUT_S: only async-signal-safe calls here.  If the
 * result line is already out (stuck in cleanup), exit accordingly. */
static void on_alarm(int sig)
{
	static const char line[] = "FAIL timeout\n";

	(void)sig;
	if (claim_report(REPORT_FAIL)) {
		ssize_t r = write(STDOUT_FILENO, line, sizeof(line) - 1);

		(void)r;
		_exit(1);
	}
	_exit(atomic_load(&g_report) == REPORT_OK ? 0 : 1);
}

/* ------------------------------------------------------------------------ */
/* GEN(i, S)                                                                */
/* ------------------------------------------------------------------------ */

struct gen {
	uint32_t size;
	uint16_t stream;
	int unordered;
	uint32_t ppid;           /* host byte order */
};

static struct gen gen_meta(uint64_t i)
{
	struct gen g;

	g.size = SIZES[i % 12];
	g.stream = (uint16_t)(i % 8);
	g.unordered = g.stream >= 6;
	g.ppid = (uint32_t)(1000 + i);
	return g;
}

/* byte j = (i*131 + j*7 + S) mod 256; unsigned wrap-around keeps it exact. */
static void gen_bytes(uint64_t i, uint64_t seed, uint8_t *buf, uint32_t size)
{
	for (uint32_t j = 0; j < size; j++)
		buf[j] = (uint8_t)(i * 131u + (uint64_t)j * 7u + seed);
}

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

enum role { ROLE_SERVER, ROLE_CLIENT, ROLE_MSG_SEND, ROLE_MSG_RECV };

struct opts {
	enum role role;
	struct sockaddr_in bind_addr;     /* UDP address; only the port is used by usrsctp */
	struct sockaddr_in connect_addr;  /* peer's UDP address */
	int have_bind, have_connect, have_count;
	uint64_t count, seed, abort_after, window;
	int have_abort_after;
	int end_abort;
	/* msg-send / msg-recv (WORKLOAD.md) */
	uint64_t size, bursts, burst_size;
	int have_size, have_every, have_bursts, have_burst_size, have_gap;
	double every_ms, gap_ms, start_delay_ms;
	const char *records;              /* NULL: stdout */
	/* Tuning, any role; absent: usrsctp's defaults. */
	uint64_t rto_min, rto_initial, rto_max, sack_delay;
	int have_rto_min, have_rto_initial, have_rto_max, have_sack_delay;
	int interleave;                   /* --interleave: offer I-DATA (RFC 8260) */
	/* Set for options the role does not take (reported after parsing). */
	const char *misplaced;
};

static void usage(const char *why) __attribute__((noreturn));
static void usage(const char *why)
{
	fprintf(stderr,
	    "usage: peer server --bind 127.0.0.1:UDP\n"
	    "       peer client --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --count N\n"
	    "                   [--seed S] [--end shutdown|abort] [--abort-after K] [--window W]\n"
	    "       peer msg-recv --bind ADDR:PORT [--records FILE]\n"
	    "       peer msg-send --bind ADDR:PORT --connect ADDR:PORT --size BYTES\n"
	    "                     (--every MS --count N | --bursts B --burst-size K --gap MS)\n"
	    "                     [--start-delay MS]\n"
	    "every role also takes: [--rto-min MS] [--rto-initial MS] [--rto-max MS]\n"
	    "                       [--sack-delay MS]   (whole milliseconds; default: usrsctp's)\n"
	    "                       [--interleave]      (offer I-DATA, RFC 8260)\n");
	fail("usage: %s", why);
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s == '\0' || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

/* A duration in milliseconds, possibly with a fraction ("16", "0.5"). */
static int parse_ms(const char *s, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0' || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(v >= 0.0) || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

/* "a.b.c.d:port" -> sockaddr_in */
static int parse_addr(const char *s, struct sockaddr_in *sin)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	uint64_t port;
	size_t hlen;

	if (colon == NULL)
		return -1;
	hlen = (size_t)(colon - s);
	if (hlen == 0 || hlen >= sizeof(host))
		return -1;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (parse_u64(colon + 1, &port) != 0 || port == 0 || port > 65535)
		return -1;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		return -1;
	return 0;
}

/* A whole number of milliseconds for usrsctp's RTO options (1 .. 2^32-1). */
static void parse_rto(const char *name, const char *val, uint64_t *out, int *have)
{
	char why[64];

	if (parse_u64(val, out) != 0 || *out == 0 || *out > UINT32_MAX) {
		snprintf(why, sizeof(why), "bad %s (whole milliseconds, at least 1)", name);
		usage(why);
	}
	*have = 1;
}

/* Remembers the first option given to a role that does not take it. */
static void only_for(struct opts *o, int ok, const char *name)
{
	if (!ok && o->misplaced == NULL)
		o->misplaced = name;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int msg_send, msg_recv, msg;

	memset(o, 0, sizeof(*o));
	o->window = 32;
	o->start_delay_ms = 500;
	if (argc < 2)
		usage("missing role");
	if (strcmp(argv[1], "server") == 0) {
		o->role = ROLE_SERVER;
	} else if (strcmp(argv[1], "client") == 0) {
		o->role = ROLE_CLIENT;
	} else if (strcmp(argv[1], "msg-send") == 0) {
		o->role = ROLE_MSG_SEND;
	} else if (strcmp(argv[1], "msg-recv") == 0) {
		o->role = ROLE_MSG_RECV;
	} else {
		usage("role must be server, client, msg-send or msg-recv");
	}
	g_role = argv[1];
	msg_send = o->role == ROLE_MSG_SEND;
	msg_recv = o->role == ROLE_MSG_RECV;
	msg = msg_send || msg_recv;
	for (int k = 2; k < argc; k += 2) {
		const char *name = argv[k], *val = k + 1 < argc ? argv[k + 1] : NULL;

		/* --interleave takes no value (see apply_interleave()). */
		if (strcmp(name, "--interleave") == 0) {
			o->interleave = 1;
			k--;
			continue;
		}
		if (val == NULL)
			usage("option without value");
		if (strcmp(name, "--bind") == 0) {
			if (parse_addr(val, &o->bind_addr) != 0)
				usage("bad --bind");
			o->have_bind = 1;
		} else if (strcmp(name, "--connect") == 0) {
			if (parse_addr(val, &o->connect_addr) != 0)
				usage("bad --connect");
			o->have_connect = 1;
			only_for(o, !msg_recv, name);
		} else if (strcmp(name, "--count") == 0) {
			if (parse_u64(val, &o->count) != 0 || o->count > UINT32_MAX - 1000)
				usage("bad --count");
			o->have_count = 1;
			only_for(o, !msg_recv, name);
		} else if (strcmp(name, "--seed") == 0) {
			if (parse_u64(val, &o->seed) != 0)
				usage("bad --seed");
			only_for(o, !msg, name);
		} else if (strcmp(name, "--end") == 0) {
			if (strcmp(val, "shutdown") == 0)
				o->end_abort = 0;
			else if (strcmp(val, "abort") == 0)
				o->end_abort = 1;
			else
				usage("bad --end");
			only_for(o, !msg, name);
		} else if (strcmp(name, "--abort-after") == 0) {
			if (parse_u64(val, &o->abort_after) != 0)
				usage("bad --abort-after");
			o->have_abort_after = 1;
			only_for(o, !msg, name);
		} else if (strcmp(name, "--window") == 0) {
			if (parse_u64(val, &o->window) != 0 || o->window == 0)
				usage("bad --window");
			only_for(o, !msg, name);
		} else if (strcmp(name, "--size") == 0) {
			/* usrsctp refuses a message larger than the send buffer
			 * (EMSGSIZE), which is SOCK_BUF. */
			if (parse_u64(val, &o->size) != 0 || o->size < 12 || o->size > SOCK_BUF)
				usage("bad --size (12 .. 1048576 bytes)");
			o->have_size = 1;
			only_for(o, msg_send, name);
		} else if (strcmp(name, "--every") == 0) {
			if (parse_ms(val, &o->every_ms) != 0)
				usage("bad --every");
			o->have_every = 1;
			only_for(o, msg_send, name);
		} else if (strcmp(name, "--bursts") == 0) {
			if (parse_u64(val, &o->bursts) != 0 || o->bursts > UINT32_MAX)
				usage("bad --bursts");
			o->have_bursts = 1;
			only_for(o, msg_send, name);
		} else if (strcmp(name, "--burst-size") == 0) {
			if (parse_u64(val, &o->burst_size) != 0 || o->burst_size == 0 ||
			    o->burst_size > UINT32_MAX)
				usage("bad --burst-size");
			o->have_burst_size = 1;
			only_for(o, msg_send, name);
		} else if (strcmp(name, "--gap") == 0) {
			if (parse_ms(val, &o->gap_ms) != 0)
				usage("bad --gap");
			o->have_gap = 1;
			only_for(o, msg_send, name);
		} else if (strcmp(name, "--start-delay") == 0) {
			if (parse_ms(val, &o->start_delay_ms) != 0)
				usage("bad --start-delay");
			only_for(o, msg_send, name);
		} else if (strcmp(name, "--records") == 0) {
			if (*val == '\0')
				usage("bad --records");
			o->records = val;
			only_for(o, msg_recv, name);
		} else if (strcmp(name, "--rto-min") == 0) {
			parse_rto(name, val, &o->rto_min, &o->have_rto_min);
		} else if (strcmp(name, "--rto-initial") == 0) {
			parse_rto(name, val, &o->rto_initial, &o->have_rto_initial);
		} else if (strcmp(name, "--rto-max") == 0) {
			parse_rto(name, val, &o->rto_max, &o->have_rto_max);
		} else if (strcmp(name, "--sack-delay") == 0) {
			if (parse_u64(val, &o->sack_delay) != 0 || o->sack_delay > 500)
				usage("bad --sack-delay (whole milliseconds, 0 .. 500)");
			o->have_sack_delay = 1;
		} else {
			usage("unknown option");
		}
	}
	if (!o->have_bind)
		usage("--bind is required");
	if (o->misplaced != NULL) {
		char why[96];

		snprintf(why, sizeof(why), "%s is not an option of %s", o->misplaced, g_role);
		usage(why);
	}
	if (o->have_rto_min && o->have_rto_initial && o->rto_min > o->rto_initial)
		usage("--rto-min exceeds --rto-initial");
	if (o->have_rto_initial && o->have_rto_max && o->rto_initial > o->rto_max)
		usage("--rto-initial exceeds --rto-max");
	if (o->have_rto_min && o->have_rto_max && o->rto_min > o->rto_max)
		usage("--rto-min exceeds --rto-max");
	if (o->role == ROLE_CLIENT) {
		if (!o->have_connect || !o->have_count)
			usage("client needs --connect and --count");
		if (!o->have_abort_after)
			o->abort_after = o->count / 2;
		if (o->end_abort && o->abort_after > o->count)
			usage("--abort-after exceeds --count");
	}
	if (msg_send) {
		int periodic = o->have_every || o->have_count;
		int bursty = o->have_bursts || o->have_burst_size || o->have_gap;

		if (!o->have_connect || !o->have_size)
			usage("msg-send needs --connect and --size");
		if (periodic && bursty)
			usage("give either --every/--count or --bursts/--burst-size/--gap");
		if (periodic && !(o->have_every && o->have_count))
			usage("--every and --count go together");
		if (bursty && !(o->have_bursts && o->have_burst_size && o->have_gap))
			usage("--bursts, --burst-size and --gap go together");
		if (!periodic && !bursty)
			usage("msg-send needs a schedule: --every MS --count N or "
			    "--bursts B --burst-size K --gap MS");
		if (bursty && o->bursts * o->burst_size > UINT32_MAX)
			usage("more than 2^32 messages");
	}
}

/* ------------------------------------------------------------------------ */
/* usrsctp setup                                                            */
/* ------------------------------------------------------------------------ */

/* usrsctp_init() only logs (through the debug callback) if it cannot bind
 * its UDP socket, and then runs without encapsulation.  Check beforehand
 * that the port is free, binding it the way usrsctp does (INADDR_ANY). */
static void check_udp_port_free(uint16_t port)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		fail("socket: %s", strerror(errno));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		fail("udp port %u unavailable: %s", port, strerror(errno));
	close(fd);
}

static void stack_init(uint16_t udp_port)
{
	check_udp_port_free(udp_port);
	/* RFC 6951: the UDP encapsulation port is a stack-wide setting. */
	usrsctp_init(udp_port, NULL, usrsctp_debug);
	/* CRC32c (RFC 9260 6.8).  Over UDP usrsctp always computes it on send
	 * (sctp_output.c, sctp_lowlevel_chunk_output), but by default it does
	 * not verify it on receive when source and destination address are
	 * equal, as on 127.0.0.1 (user_recv_thread.c, recv_function_udp4).
	 * Switch that shortcut off: checksums from Brisk must be checked. */
	usrsctp_sysctl_set_sctp_no_csum_on_loopback(0);
}

/* CRC32c accounting (stderr): packets whose checksum was verified in
 * software ("swcrc"), accepted unverified ("hwcrc", the loopback shortcut),
 * and dropped for a bad checksum.  A Brisk checksum bug shows up here as
 * badsum > 0 even when retransmissions let the run succeed. */
static void log_stats(void)
{
	struct sctpstat st;

	memset(&st, 0, sizeof(st));
	usrsctp_get_stat(&st);
	diag("stats: in %u pkts (crc checked %u, unchecked %u, bad crc %u), "
	    "out %u pkts (crc set %u, unset %u), retransmitted DATA %u "
	    "(fast retransmissions %u, T3 expiries %u)",
	    st.sctps_inpackets, st.sctps_recvswcrc, st.sctps_recvhwcrc, st.sctps_badsum,
	    st.sctps_outpackets, st.sctps_sendswcrc, st.sctps_sendhwcrc,
	    st.sctps_sendretransdata, st.sctps_sendfastretrans, st.sctps_timodata);
}

/* usrsctp_finish() fails while sockets or associations still exist (they
 * are freed by timers after close); retry for a while, then give up. */
static void stack_finish(void)
{
	log_stats();
	for (int k = 0; k < 50; k++) {
		if (usrsctp_finish() == 0)
			return;
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	diag("usrsctp_finish did not complete; exiting anyway");
}

static void set_opt(struct socket *s, int level, int name, const void *val,
    socklen_t len, const char *what)
{
	if (usrsctp_setsockopt(s, level, name, val, len) < 0)
		fail("setsockopt %s: %s", what, strerror(errno));
}

/* An endpoint-wide (SCTP_FUTURE_ASSOC) struct sctp_assoc_value option:
 * associations created later copy it. */
static void set_future_value(struct socket *s, int name, uint32_t value, const char *what)
{
	struct sctp_assoc_value av;

	memset(&av, 0, sizeof(av));
	av.assoc_id = SCTP_FUTURE_ASSOC;
	av.assoc_value = value;
	set_opt(s, IPPROTO_SCTP, name, &av, sizeof(av), what);
}

/* Subscribes to notifications of `type` (RFC 6458 6.2.1) for association
 * `id`: SCTP_FUTURE_ASSOC, or 0 for a one-to-one socket's association. */
static void subscribe(struct socket *s, sctp_assoc_t id, uint16_t type, const char *what)
{
	struct sctp_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.se_assoc_id = id;
	ev.se_type = type;
	ev.se_on = 1;
	set_opt(s, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof(ev), what);
}

/* --interleave: message interleaving (RFC 8260, I-DATA).  usrsctp 0.9.5
 * offers I-DATA in INIT/INIT ACK once the endpoint's idata_supported is on,
 * which SCTP_INTERLEAVING_SUPPORTED (0x1206; not in usrsctp.h, defined in
 * the stack's netinet/sctp.h) allows only with fragment interleave level 2
 * (SCTP_FRAGMENT_INTERLEAVE, RFC 6458 8.1.20) set first.  Level 2 lets
 * partial deliveries of different streams interleave, which recv_msg()
 * cannot take apart, so the partial delivery point is put above the largest
 * message (usrsctp caps it at half the receive buffer, 512 KiB here):
 * every message is read whole. */
#ifndef SCTP_INTERLEAVING_SUPPORTED
#define SCTP_INTERLEAVING_SUPPORTED 0x00001206
#endif
static void apply_interleave(struct socket *s, const struct opts *o)
{
	const int level = 2;
	const uint32_t pd_point = SOCK_BUF / 2;

	if (!o->interleave)
		return;
	set_opt(s, IPPROTO_SCTP, SCTP_FRAGMENT_INTERLEAVE, &level, sizeof(level),
	    "SCTP_FRAGMENT_INTERLEAVE");
	set_opt(s, IPPROTO_SCTP, SCTP_PARTIAL_DELIVERY_POINT, &pd_point, sizeof(pd_point),
	    "SCTP_PARTIAL_DELIVERY_POINT");
	set_future_value(s, SCTP_INTERLEAVING_SUPPORTED, 1, "SCTP_INTERLEAVING_SUPPORTED");
}

/* --rto-* and --sack-delay, set on the endpoint before any association
 * exists: an association copies them when it is created (sctp_init_asoc),
 * and one that accept() hands out keeps them.  Absent options keep usrsctp's
 * defaults (SCTP_RTOINFO and SCTP_DELAYED_SACK leave fields that are 0
 * unchanged). */
static void apply_tuning(struct socket *s, const struct opts *o)
{
	if (o->have_rto_min || o->have_rto_initial || o->have_rto_max) {
		struct sctp_rtoinfo rto;

		memset(&rto, 0, sizeof(rto));
		rto.srto_assoc_id = SCTP_FUTURE_ASSOC;
		rto.srto_min = (uint32_t)o->rto_min;
		rto.srto_initial = (uint32_t)o->rto_initial;
		rto.srto_max = (uint32_t)o->rto_max;
		if (usrsctp_setsockopt(s, IPPROTO_SCTP, SCTP_RTOINFO, &rto, sizeof(rto)) < 0)
			fail("setsockopt SCTP_RTOINFO: %s (usrsctp needs min <= initial <= max, "
			    "with its defaults min 1000, initial 3000, max 60000 ms for the "
			    "values not given)", strerror(errno));
	}
	if (o->have_sack_delay) {
		struct sctp_sack_info sack;

		memset(&sack, 0, sizeof(sack));
		sack.sack_assoc_id = SCTP_FUTURE_ASSOC;
		if (o->sack_delay == 0)
			sack.sack_freq = 1;     /* a SACK for every packet: no delay */
		else
			sack.sack_delay = (uint32_t)o->sack_delay;
		set_opt(s, IPPROTO_SCTP, SCTP_DELAYED_SACK, &sack, sizeof(sack), "SCTP_DELAYED_SACK");
	}
}

/* Logs the association's RTO and delayed SACK parameters (stderr), so that
 * a run shows what --rto-* / --sack-delay (or the defaults) amounted to. */
static void log_tuning(struct socket *s)
{
	struct sctp_rtoinfo rto;
	struct sctp_sack_info sack;
	socklen_t len;

	memset(&rto, 0, sizeof(rto));
	len = sizeof(rto);
	if (usrsctp_getsockopt(s, IPPROTO_SCTP, SCTP_RTOINFO, &rto, &len) < 0) {
		diag("getsockopt SCTP_RTOINFO: %s", strerror(errno));
		return;
	}
	memset(&sack, 0, sizeof(sack));
	len = sizeof(sack);
	if (usrsctp_getsockopt(s, IPPROTO_SCTP, SCTP_DELAYED_SACK, &sack, &len) < 0) {
		diag("getsockopt SCTP_DELAYED_SACK: %s", strerror(errno));
		return;
	}
	diag("rto min %u initial %u max %u ms, sack delay %u ms freq %u",
	    rto.srto_min, rto.srto_initial, rto.srto_max, sack.sack_delay, sack.sack_freq);
}

/* Options common to all roles; a socket returned by accept() inherits them
 * from the listening socket (features, buffer sizes). */
static struct socket *make_socket(const struct opts *o)
{
	struct socket *s;
	const int on = 1;
	const int buf = SOCK_BUF;
	struct sctp_initmsg init;
	struct sockaddr_in sin;

	/* One-to-one style socket, blocking, no upcalls: plain recvv/sendv. */
	s = usrsctp_socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
	if (s == NULL)
		fail("usrsctp_socket: %s", strerror(errno));

	set_opt(s, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf), "SO_SNDBUF");
	set_opt(s, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf), "SO_RCVBUF");

	/* Streams 0..7 are used; ask for 16 in both directions (INIT/INIT-ACK
	 * OS and MIS fields). */
	memset(&init, 0, sizeof(init));
	init.sinit_num_ostreams = NUM_STREAMS;
	init.sinit_max_instreams = NUM_STREAMS;
	set_opt(s, IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof(init), "SCTP_INITMSG");

	/* struct sctp_rcvinfo with every message (RFC 6458 8.1.22). */
	set_opt(s, IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof(on), "SCTP_RECVRCVINFO");

	/* No Nagle: the client waits for echoes of small messages. */
	set_opt(s, IPPROTO_SCTP, SCTP_NODELAY, &on, sizeof(on), "SCTP_NODELAY");

	/* Notifications that tell how the association ended. */
	subscribe(s, SCTP_FUTURE_ASSOC, SCTP_ASSOC_CHANGE, "SCTP_EVENT");
	subscribe(s, SCTP_FUTURE_ASSOC, SCTP_SHUTDOWN_EVENT, "SCTP_EVENT");

	apply_tuning(s, o);
	apply_interleave(s, o);

	/* SCTP port 5000 on both sides; on 127.0.0.1 for PROTOCOL.md's roles,
	 * on the --bind address for WORKLOAD.md's (which run in network
	 * namespaces with addresses of their own: usrsctp picks its interface
	 * addresses up in usrsctp_init()). */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(SCTP_PORT);
	if (o->role == ROLE_MSG_SEND || o->role == ROLE_MSG_RECV)
		sin.sin_addr = o->bind_addr.sin_addr;
	else
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (usrsctp_bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		char host[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &sin.sin_addr, host, sizeof(host));
		fail("usrsctp_bind %s:%d: %s", host, SCTP_PORT, strerror(errno));
	}
	return s;
}

/* Reads (and logs) the negotiated stream counts; -1 if the association is
 * already gone (e.g. aborted right after it came up). */
static int get_streams(struct socket *s, uint16_t *in, uint16_t *out)
{
	struct sctp_status st;
	socklen_t len = sizeof(st);

	memset(&st, 0, sizeof(st));
	if (usrsctp_getsockopt(s, IPPROTO_SCTP, SCTP_STATUS, &st, &len) < 0) {
		diag("getsockopt SCTP_STATUS: %s", strerror(errno));
		return -1;
	}
	*in = st.sstat_instrms;
	*out = st.sstat_outstrms;
	diag("association up: %u inbound / %u outbound streams, peer rwnd %u",
	    st.sstat_instrms, st.sstat_outstrms, st.sstat_rwnd);
	return 0;
}

/* Associates with the peer's address, SCTP port 5000, reached over UDP at
 * its --connect port (RFC 6951: set before connect(), the encapsulation
 * port applies to the association connect() creates).  Blocking: returns
 * once COOKIE-ACK has arrived. */
static void connect_peer(struct socket *s, const struct opts *o)
{
	struct sockaddr_in dst = o->connect_addr;
	struct sctp_udpencaps enc;

	dst.sin_port = htons(SCTP_PORT);
	memset(&enc, 0, sizeof(enc));
	memcpy(&enc.sue_address, &dst, sizeof(dst));
	enc.sue_assoc_id = SCTP_FUTURE_ASSOC;
	enc.sue_port = o->connect_addr.sin_port;   /* network byte order */
	set_opt(s, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &enc, sizeof(enc),
	    "SCTP_REMOTE_UDP_ENCAPS_PORT");
	if (usrsctp_connect(s, (struct sockaddr *)&dst, sizeof(dst)) < 0)
		fail("connect: %s", strerror(errno));
	g_conn = s;
}

/* Listens on lsock and accepts exactly one association (later INITs find
 * no listener); closes lsock. */
static struct socket *accept_peer(struct socket *lsock, const struct opts *o)
{
	struct socket *conn;

	if (usrsctp_listen(lsock, 1) < 0)
		fail("usrsctp_listen: %s", strerror(errno));
	diag("listening on SCTP port %d, UDP port %u", SCTP_PORT, ntohs(o->bind_addr.sin_port));
	conn = usrsctp_accept(lsock, NULL, NULL);
	if (conn == NULL)
		fail("usrsctp_accept: %s", strerror(errno));
	usrsctp_close(lsock);
	g_conn = conn;
	return conn;
}

/* CLOCK_MONOTONIC in nanoseconds (the clock WORKLOAD.md's stamps use). */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------------ */
/* Receiving whole messages                                                 */
/* ------------------------------------------------------------------------ */

struct msg {
	uint8_t *buf;                /* cap bytes */
	size_t cap;
	size_t len;
	uint64_t read_ns;            /* CLOCK_MONOTONIC right after the last read */
	int notification;            /* MSG_NOTIFICATION was set */
	struct sctp_rcvinfo info;    /* valid for data */
};

enum recv_result { RECV_MSG, RECV_EOF, RECV_ERR };

/* Reads one complete message or notification: pieces are accumulated until
 * MSG_EOR (partial delivery, RFC 6458 3.1.4 / 8.1.20).  RECV_ERR leaves the
 * reason in errno. */
static enum recv_result recv_msg(struct socket *s, struct msg *m)
{
	m->len = 0;
	m->notification = 0;
	for (;;) {
		struct sctp_rcvinfo info;
		socklen_t infolen = sizeof(info);
		unsigned int infotype = 0;
		int flags = 0;
		ssize_t n;

		if (m->len == m->cap) {
			errno = EMSGSIZE;
			return RECV_ERR;
		}
		memset(&info, 0, sizeof(info));
		n = usrsctp_recvv(s, m->buf + m->len, m->cap - m->len, NULL, NULL,
		    &info, &infolen, &infotype, &flags);
		m->read_ns = now_ns();
		if (n < 0)
			return RECV_ERR;
		if (n == 0) {
			if (m->len != 0) {
				errno = EPIPE;  /* EOF inside a message */
				return RECV_ERR;
			}
			return RECV_EOF;
		}
		if (m->len == 0) {
			m->notification = (flags & MSG_NOTIFICATION) != 0;
			if (!m->notification) {
				if (infotype != SCTP_RECVV_RCVINFO) {
					errno = EPROTO;
					return RECV_ERR;
				}
				m->info = info;
			}
		}
		m->len += (size_t)n;
		if (flags & MSG_EOR)
			return RECV_MSG;
	}
}

/* Classification of a notification. */
enum note {
	NOTE_OTHER, NOTE_SHUTDOWN_EVENT, NOTE_CLOSED_SHUTDOWN, NOTE_CLOSED_ABORT,
	NOTE_SENDER_DRY   /* only msg-send subscribes to SCTP_SENDER_DRY_EVENT */
};

/* Describes the ABORT chunk that usrsctp appends to a COMM_LOST
 * notification (sac_info), e.g. "cause 12 (User-Initiated Abort) 'interop abort'". */
static void describe_abort(const uint8_t *chunk, size_t len, char *out, size_t outlen)
{
	uint16_t clen, ctype, plen;

	snprintf(out, outlen, "no ABORT chunk (local or timeout)");
	if (len < 4 || chunk[0] != SCTP_ABORT_ASSOCIATION)
		return;
	clen = (uint16_t)(chunk[2] << 8 | chunk[3]);
	if (clen > len)
		clen = (uint16_t)len;
	if (clen < 8) {
		snprintf(out, outlen, "ABORT without cause");
		return;
	}
	ctype = (uint16_t)(chunk[4] << 8 | chunk[5]);
	plen = (uint16_t)(chunk[6] << 8 | chunk[7]);
	if (plen < 4 || plen > clen - 4)
		plen = (uint16_t)(clen - 4);
	if (ctype == 12) {
		snprintf(out, outlen, "ABORT cause 12 (User-Initiated Abort) reason '%.*s'",
		    (int)(plen - 4), (const char *)chunk + 8);
	} else {
		snprintf(out, outlen, "ABORT cause %u", ctype);
	}
}

static enum note handle_notification(const struct msg *m)
{
	const union sctp_notification *n = (const union sctp_notification *)m->buf;

	if (m->len < sizeof(n->sn_header))
		return NOTE_OTHER;
	switch (n->sn_header.sn_type) {
	case SCTP_ASSOC_CHANGE: {
		const struct sctp_assoc_change *sac = &n->sn_assoc_change;

		if (m->len < sizeof(*sac))
			return NOTE_OTHER;
		switch (sac->sac_state) {
		case SCTP_COMM_UP:
			diag("SCTP_COMM_UP (%u in / %u out streams)",
			    sac->sac_inbound_streams, sac->sac_outbound_streams);
			return NOTE_OTHER;
		case SCTP_SHUTDOWN_COMP:
			diag("SCTP_SHUTDOWN_COMP");
			return NOTE_CLOSED_SHUTDOWN;
		case SCTP_COMM_LOST: {
			char what[160];

			describe_abort(sac->sac_info, m->len - sizeof(*sac), what, sizeof(what));
			diag("SCTP_COMM_LOST (error %u): %s", sac->sac_error, what);
			return NOTE_CLOSED_ABORT;
		}
		default:
			diag("SCTP_ASSOC_CHANGE state %u", sac->sac_state);
			return NOTE_OTHER;
		}
	}
	case SCTP_SHUTDOWN_EVENT:
		diag("SCTP_SHUTDOWN_EVENT (peer sent SHUTDOWN)");
		return NOTE_SHUTDOWN_EVENT;
	case SCTP_SENDER_DRY_EVENT:
		diag("SCTP_SENDER_DRY_EVENT (everything sent has been acknowledged)");
		return NOTE_SENDER_DRY;
	default:
		diag("notification type %u", n->sn_header.sn_type);
		return NOTE_OTHER;
	}
}

static uint8_t *xmalloc(size_t n)
{
	uint8_t *p = malloc(n);

	if (p == NULL)
		fail("out of memory");
	return p;
}

static uint8_t *xcalloc(size_t n)
{
	uint8_t *p = calloc(n, 1);

	if (p == NULL)
		fail("out of memory");
	return p;
}

static void msg_alloc(struct msg *m, size_t cap)
{
	m->buf = xmalloc(cap);
	m->cap = cap;
}

/* The next message or notification, for roles whose association must end
 * gracefully: 0 at the end of the association (EOF); a receive error fails
 * the run. */
static int recv_more(struct socket *s, struct msg *m)
{
	switch (recv_msg(s, m)) {
	case RECV_EOF:
		return 0;
	case RECV_ERR:
		fail("recv: %s", strerror(errno));
	default:
		return 1;
	}
}

/* A notification, for roles whose association must end gracefully: 1 once
 * it has shut down; an abort fails the run. */
static int closed_gracefully(const struct msg *m)
{
	switch (handle_notification(m)) {
	case NOTE_CLOSED_SHUTDOWN:
		return 1;
	case NOTE_CLOSED_ABORT:
		fail("association aborted");
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------------ */
/* Server                                                                   */
/* ------------------------------------------------------------------------ */

static int run_server(const struct opts *o)
{
	struct socket *conn;
	struct msg m;
	uint64_t echoed = 0;
	int ended_abort = -1;      /* -1: still open, 0: shutdown, 1: abort */
	uint16_t in, out;

	stack_init(ntohs(o->bind_addr.sin_port));
	conn = accept_peer(make_socket(o), o);
	/* Diagnostic only: the association may already be gone, and what
	 * happened is read from the socket below. */
	if (get_streams(conn, &in, &out) == 0 && (in < USED_STREAMS || out < USED_STREAMS))
		diag("warning: fewer than %d streams negotiated", USED_STREAMS);

	msg_alloc(&m, MAX_MSG);
	while (ended_abort < 0) {
		switch (recv_msg(conn, &m)) {
		case RECV_EOF:
			/* One-to-one socket: EOF after a graceful close. */
			diag("EOF");
			ended_abort = 0;
			break;
		case RECV_ERR:
			if (errno == ECONNRESET || errno == ECONNABORTED) {
				/* One-to-one socket: the association was aborted. */
				diag("recv: %s", strerror(errno));
				ended_abort = 1;
				break;
			}
			fail("recv: %s", strerror(errno));
		case RECV_MSG:
			if (m.notification) {
				switch (handle_notification(&m)) {
				case NOTE_CLOSED_SHUTDOWN:
					ended_abort = 0;
					break;
				case NOTE_CLOSED_ABORT:
					ended_abort = 1;
					break;
				default:
					break;
				}
				break;
			}
			/* Echo: same stream, same PPID (already in network byte
			 * order, passed back untouched), unordered iff the stream
			 * is one of the unordered ones (6, 7) -- a property of
			 * the stream, not of the received message. */
			struct sctp_sndinfo snd;

			memset(&snd, 0, sizeof(snd));
			snd.snd_sid = m.info.rcv_sid;
			snd.snd_ppid = m.info.rcv_ppid;
			snd.snd_flags = m.info.rcv_sid >= 6 ? SCTP_UNORDERED : 0;
			if (usrsctp_sendv(conn, m.buf, m.len, NULL, 0, &snd, (socklen_t)sizeof(snd),
			    SCTP_SENDV_SNDINFO, 0) < 0) {
				/* The association may have just been aborted: the
				 * notification that says so is still to be read.
				 * usrsctp says ENOENT once the association is freed. */
				int err = errno;

				diag("echo of PPID %" PRIu32 " failed: %s",
				    (uint32_t)ntohl(m.info.rcv_ppid), strerror(err));
				if (err != ECONNRESET && err != ECONNABORTED &&
				    err != EPIPE && err != ENOTCONN && err != ENOENT)
					fail("send: %s", strerror(err));
			} else {
				echoed++;
			}
			break;
		}
	}
	g_conn = NULL;
	result("CLOSED %s echoed=%" PRIu64, ended_abort ? "abort" : "shutdown", echoed);
	usrsctp_close(conn);
	free(m.buf);
	stack_finish();
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Client                                                                   */
/* ------------------------------------------------------------------------ */

/* Shared between the sender thread and the receiving main thread. */
struct client {
	struct socket *sock;
	uint64_t count, seed, window;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t sent;          /* messages handed to sendv (0..sent-1) */
	uint64_t verified;      /* echoes verified */
	int stop;               /* receiver is done: sender must stop quietly */
};

/* Sends GEN(0..N-1), never more than `window` ahead of the verified echoes.
 * A separate thread, so that a blocked send can never keep the echoes from
 * being read (deadlock-free for any window). */
static void *sender(void *arg)
{
	struct client *c = arg;
	uint8_t *buf = xmalloc(65536);

	for (uint64_t i = 0; i < c->count; i++) {
		struct gen g = gen_meta(i);
		struct sctp_sndinfo snd;

		pthread_mutex_lock(&c->mu);
		while (!c->stop && i - c->verified >= c->window)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->stop) {
			pthread_mutex_unlock(&c->mu);
			break;
		}
		/* Counted before sendv: the echo may be read before it returns. */
		c->sent = i + 1;
		pthread_mutex_unlock(&c->mu);

		gen_bytes(i, c->seed, buf, g.size);
		memset(&snd, 0, sizeof(snd));
		snd.snd_sid = g.stream;
		snd.snd_ppid = htonl(g.ppid);   /* on the wire: 1000 + i */
		snd.snd_flags = g.unordered ? SCTP_UNORDERED : 0;
		if (usrsctp_sendv(c->sock, buf, g.size, NULL, 0, &snd, (socklen_t)sizeof(snd),
		    SCTP_SENDV_SNDINFO, 0) < 0) {
			int err = errno;
			int stopped;

			pthread_mutex_lock(&c->mu);
			stopped = c->stop;
			pthread_mutex_unlock(&c->mu);
			if (stopped)
				break;  /* we aborted the association ourselves */
			fail("send of message %" PRIu64 ": %s", i, strerror(err));
		}
	}
	free(buf);
	return NULL;
}

static void client_stop_sender(struct client *c)
{
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

/* Checks one echo against GEN; fails on any mismatch.  next_ordered[s] is
 * the next index expected on ordered stream s; seen[] flags echoed indices. */
static void verify_echo(struct client *c, const struct msg *m, uint8_t *expect,
    uint64_t *next_ordered, uint8_t *seen)
{
	uint32_t ppid = ntohl(m->info.rcv_ppid);
	uint64_t i, sent;
	struct gen g;

	if (ppid < 1000 || (uint64_t)(ppid - 1000) >= c->count)
		fail("echo with unexpected PPID %" PRIu32 " on stream %u", ppid, m->info.rcv_sid);
	i = ppid - 1000;
	pthread_mutex_lock(&c->mu);
	sent = c->sent;
	pthread_mutex_unlock(&c->mu);
	if (i >= sent)
		fail("echo of message %" PRIu64 " which was not sent yet", i);
	if (seen[i])
		fail("duplicate echo of message %" PRIu64, i);
	seen[i] = 1;

	g = gen_meta(i);
	if (m->info.rcv_sid != g.stream)
		fail("message %" PRIu64 ": echoed on stream %u, sent on %u", i, m->info.rcv_sid, g.stream);
	if (((m->info.rcv_flags & SCTP_UNORDERED) != 0) != g.unordered)
		fail("message %" PRIu64 ": echo is %s on stream %u", i,
		    g.unordered ? "ordered" : "unordered", g.stream);
	if (m->len != g.size)
		fail("message %" PRIu64 ": echo has %zu bytes, sent %" PRIu32, i, m->len, g.size);
	gen_bytes(i, c->seed, expect, g.size);
	if (memcmp(expect, m->buf, g.size) != 0) {
		uint32_t j = 0;

		while (expect[j] == m->buf[j])
			j++;
		fail("message %" PRIu64 ": payload differs at byte %" PRIu32 " (0x%02x, expected 0x%02x)",
		    i, j, m->buf[j], expect[j]);
	}
	if (!g.unordered) {
		if (i != next_ordered[g.stream])
			fail("ordered stream %u: echo of message %" PRIu64 " before message %" PRIu64,
			    g.stream, i, next_ordered[g.stream]);
		next_ordered[g.stream] = i + 8;
	}
}

/* Fails on anything but an echo while the association should be open. */
static void unexpected_end(const struct msg *m, enum recv_result r)
{
	if (r == RECV_EOF)
		fail("association closed unexpectedly");
	if (r == RECV_ERR)
		fail("recv: %s", strerror(errno));
	switch (handle_notification(m)) {
	case NOTE_CLOSED_ABORT:
		fail("association aborted");
	case NOTE_CLOSED_SHUTDOWN:
		fail("association shut down by peer");
	case NOTE_SHUTDOWN_EVENT:
		fail("peer sent SHUTDOWN");
	default:
		break;
	}
}

static int run_client(const struct opts *o)
{
	struct client c;
	struct msg m;
	uint64_t target, next_ordered[USED_STREAMS];
	uint8_t *seen, *expect;
	uint16_t in, out;
	pthread_t tid;

	stack_init(ntohs(o->bind_addr.sin_port));

	memset(&c, 0, sizeof(c));
	c.count = o->count;
	c.seed = o->seed;
	c.window = o->window;
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	c.sock = make_socket(o);
	connect_peer(c.sock, o);
	if (get_streams(c.sock, &in, &out) < 0)
		fail("association lost right after connect");
	if (in < USED_STREAMS || out < USED_STREAMS)
		fail("only %u inbound / %u outbound streams negotiated, need %d", in, out, USED_STREAMS);

	msg_alloc(&m, MAX_MSG);
	expect = xmalloc(65536);
	seen = xcalloc(o->count ? o->count : 1);
	for (int s = 0; s < USED_STREAMS; s++)
		next_ordered[s] = (uint64_t)s;

	target = o->end_abort ? o->abort_after : o->count;
	if (target > 0 && pthread_create(&tid, NULL, sender, &c) != 0)
		fail("pthread_create failed");

	/* Read and verify echoes until `target` of them are verified. */
	while (c.verified < target) {
		enum recv_result r = recv_msg(c.sock, &m);

		if (r != RECV_MSG || m.notification) {
			unexpected_end(&m, r);
			continue;   /* a harmless notification (e.g. COMM_UP) */
		}
		verify_echo(&c, &m, expect, next_ordered, seen);
		pthread_mutex_lock(&c.mu);
		c.verified++;
		pthread_cond_broadcast(&c.cv);
		pthread_mutex_unlock(&c.mu);
	}

	if (o->end_abort) {
		/* User-initiated abort with reason "interop abort" (RFC 9260
		 * 3.3.10.12).  Stop the sender first so that its send failing
		 * after the abort is not taken for an error. */
		struct sctp_sndinfo snd;

		client_stop_sender(&c);
		memset(&snd, 0, sizeof(snd));
		snd.snd_flags = SCTP_ABORT;
		g_conn = NULL;
		if (usrsctp_sendv(c.sock, ABORT_REASON, strlen(ABORT_REASON), NULL, 0, &snd,
		    (socklen_t)sizeof(snd), SCTP_SENDV_SNDINFO, 0) < 0)
			fail("abort: %s", strerror(errno));
		if (target > 0)
			pthread_join(tid, NULL);
		result("ABORTED verified=%" PRIu64, c.verified);
	} else {
		/* Everything has been echoed, so the sender is done. */
		int closed = 0;

		if (target > 0)
			pthread_join(tid, NULL);
		/* Graceful shutdown (RFC 9260 9.2): SHUTDOWN goes out, and the
		 * association is closed once SHUTDOWN-ACK arrives
		 * (SCTP_SHUTDOWN_COMP, then EOF). */
		if (usrsctp_shutdown(c.sock, SHUT_WR) < 0)
			fail("shutdown: %s", strerror(errno));
		while (!closed) {
			enum recv_result r = recv_msg(c.sock, &m);

			if (r == RECV_EOF)
				break;  /* one-to-one socket: the association is gone */
			if (r == RECV_ERR)
				fail("recv during shutdown: %s", strerror(errno));
			if (!m.notification)
				fail("data (PPID %" PRIu32 ") after all echoes were verified",
				    (uint32_t)ntohl(m.info.rcv_ppid));
			switch (handle_notification(&m)) {
			case NOTE_CLOSED_SHUTDOWN:
				closed = 1;
				break;
			case NOTE_CLOSED_ABORT:
				fail("association aborted during shutdown");
			default:
				break;
			}
		}
		g_conn = NULL;
		result("OK verified=%" PRIu64, c.verified);
	}
	usrsctp_close(c.sock);
	free(m.buf);
	free(expect);
	free(seen);
	stack_finish();
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The message workload: msg-send and msg-recv (../WORKLOAD.md)             */
/* ------------------------------------------------------------------------ */

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int k = 3; k >= 0; k--, v >>= 8)
		p[k] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int k = 7; k >= 0; k--, v >>= 8)
		p[k] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int k = 0; k < n; k++)
		v = v << 8 | p[k];
	return v;
}

/* Byte j (12 <= j < size) of message seq: (seq * 131 + j * 7) mod 256. */
static uint8_t filler(uint32_t seq, size_t j)
{
	return (uint8_t)((uint64_t)seq * 131u + (uint64_t)j * 7u);
}

static uint64_t ms_to_ns(double ms)
{
	return (uint64_t)(ms * 1e6 + 0.5);
}

static uint64_t msg_total(const struct opts *o)
{
	return o->have_every ? o->count : o->bursts * o->burst_size;
}

/* When message seq is due, in ns after t0. */
static uint64_t msg_offset_ns(const struct opts *o, uint64_t seq)
{
	if (o->have_every)
		return ms_to_ns((double)seq * o->every_ms);
	return ms_to_ns((double)(seq / o->burst_size) * o->gap_ms);
}

static void sleep_until_ns(uint64_t t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(t / 1000000000u);
	ts.tv_nsec = (long)(t % 1000000000u);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Re-arms the overall limit (SIGALRM, on_alarm: FAIL timeout) to `ns` from now. */
static void arm_timeout_ns(uint64_t ns)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)(ns / 1000000000u);
	it.it_value.tv_usec = (suseconds_t)(ns % 1000000000u / 1000u);
	if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		it.it_value.tv_usec = 1;
	if (setitimer(ITIMER_REAL, &it, NULL) != 0)
		fail("setitimer: %s", strerror(errno));
}

/* msg-send: reads from the association (the receiver sends no data, only
 * the stack's notifications come) until the notification `want`; `phase`
 * completes the failure reasons.  With want == NOTE_CLOSED_SHUTDOWN an EOF
 * counts too (one-to-one socket: the association is gone). */
static void wait_for(struct socket *s, struct msg *m, enum note want, const char *phase)
{
	for (;;) {
		enum recv_result r = recv_msg(s, m);
		enum note n;

		if (r == RECV_EOF) {
			if (want == NOTE_CLOSED_SHUTDOWN)
				return;
			fail("association closed %s", phase);
		}
		if (r == RECV_ERR) {
			if (errno == ECONNRESET || errno == ECONNABORTED)
				fail("association aborted %s (%s)", phase, strerror(errno));
			fail("recv %s: %s", phase, strerror(errno));
		}
		if (!m->notification) {
			diag("ignoring %zu bytes of data from the receiver", m->len);
			continue;
		}
		n = handle_notification(m);
		if (n == want)
			return;
		if (n == NOTE_CLOSED_ABORT)
			fail("association aborted %s", phase);
		if (n == NOTE_CLOSED_SHUTDOWN)
			fail("association shut down by the receiver %s", phase);
		if (n == NOTE_SHUTDOWN_EVENT && want != NOTE_CLOSED_SHUTDOWN)
			fail("receiver sent SHUTDOWN %s", phase);
	}
}

static int run_msg_send(const struct opts *o)
{
	struct socket *sock;
	struct sctp_sndinfo snd;
	struct sctpstat st;
	struct msg m;
	uint64_t total = msg_total(o), schedule_ns, t0;
	uint16_t in, out;
	uint8_t *buf;

	stack_init(ntohs(o->bind_addr.sin_port));
	sock = make_socket(o);
	connect_peer(sock, o);
	if (get_streams(sock, &in, &out) < 0)
		fail("association lost right after connect");
	if (out < 1)
		fail("no outbound stream negotiated");
	log_tuning(sock);

	/* t0 = --start-delay after the association is up; the whole run ends
	 * by t0 + schedule + 60 s (WORKLOAD.md). */
	schedule_ns = total > 0 ? msg_offset_ns(o, total - 1) : 0;
	t0 = now_ns() + ms_to_ns(o->start_delay_ms);
	arm_timeout_ns(t0 - now_ns() + schedule_ns + (uint64_t)TIMEOUT_S * 1000000000u);
	diag("sending %" PRIu64 " messages of %" PRIu64 " bytes over %.3f ms after a %.3f ms start delay",
	    total, o->size, (double)schedule_ns / 1e6, o->start_delay_ms);

	/* Stream 0, ordered, PPID 0. */
	memset(&snd, 0, sizeof(snd));
	buf = xmalloc(o->size);
	for (uint64_t seq = 0; seq < total; seq++) {
		uint64_t written;

		/* Everything but the stamp is ready before the message is due. */
		put_be32(buf, (uint32_t)seq);
		for (size_t j = 12; j < o->size; j++)
			buf[j] = filler((uint32_t)seq, j);
		sleep_until_ns(t0 + msg_offset_ns(o, seq));
		/* The stamp is taken just before the write call; a write that
		 * blocks (full send buffer) counts in the MTT. */
		written = now_ns();
		put_be64(buf + 4, written);
		if (usrsctp_sendv(sock, buf, o->size, NULL, 0, &snd, (socklen_t)sizeof(snd),
		    SCTP_SENDV_SNDINFO, 0) < 0)
			fail("send of message %" PRIu64 ": %s", seq, strerror(errno));
	}
	free(buf);

	/* Wait until every message is acknowledged.  Subscribing to
	 * SCTP_SENDER_DRY_EVENT on an association that is already dry queues
	 * the event at once (sctp_usrreq.c); otherwise it comes with the SACK
	 * that empties the queues (sctp_input.c). */
	msg_alloc(&m, MAX_MSG);
	subscribe(sock, 0, SCTP_SENDER_DRY_EVENT, "SCTP_EVENT SENDER_DRY");
	wait_for(sock, &m, NOTE_SENDER_DRY, "before every message was acknowledged");

	/* Graceful shutdown (RFC 9260 9.2), closed with SHUTDOWN-ACK. */
	if (usrsctp_shutdown(sock, SHUT_WR) < 0)
		fail("shutdown: %s", strerror(errno));
	wait_for(sock, &m, NOTE_CLOSED_SHUTDOWN, "during shutdown");
	g_conn = NULL;
	result("SENT count=%" PRIu64, total);

	/* Retransmitted DATA chunks: usrsctp counts them stack-wide only
	 * (sctp_chunk_retransmit, one per chunk sent again); this process has
	 * had one association. */
	memset(&st, 0, sizeof(st));
	usrsctp_get_stat(&st);
	printf("STATS rtx=%" PRIu32 "\n", st.sctps_sendretransdata);
	fflush(stdout);

	usrsctp_close(sock);
	free(m.buf);
	stack_finish();
	return 0;
}

/* Checks a received message (size, filler); returns its seq and stamp. */
static void check_message(const struct msg *m, uint32_t *seq, uint64_t *written)
{
	if (m->len < 12)
		fail("message of %zu bytes (at least 12 expected)", m->len);
	*seq = (uint32_t)get_be(m->buf, 4);
	*written = get_be(m->buf + 4, 8);
	for (size_t j = 12; j < m->len; j++) {
		if (m->buf[j] != filler(*seq, j))
			fail("message %" PRIu32 " (%zu bytes): byte %zu is 0x%02x, expected 0x%02x",
			    *seq, m->len, j, m->buf[j], filler(*seq, j));
	}
}

static int run_msg_recv(const struct opts *o)
{
	struct socket *conn;
	struct msg m;
	uint64_t received = 0;
	int closed = 0;
	uint16_t in, out;
	FILE *rec = stdout;

	/* WORKLOAD.md sets the receiver no time limit: whoever runs it does. */
	alarm(0);
	if (o->records != NULL) {
		rec = fopen(o->records, "w");
		if (rec == NULL)
			fail("--records %s: %s", o->records, strerror(errno));
	}
	if (fprintf(rec, "seq,written_ns,read_ns,size\n") < 0 || fflush(rec) != 0)
		fail("writing records: %s", strerror(errno));

	stack_init(ntohs(o->bind_addr.sin_port));
	conn = accept_peer(make_socket(o), o);
	if (get_streams(conn, &in, &out) == 0)
		log_tuning(conn);

	/* Messages up to SOCK_BUF bytes, msg-send's limit. */
	msg_alloc(&m, SOCK_BUF);
	while (!closed) {
		uint32_t seq;
		uint64_t written;

		switch (recv_msg(conn, &m)) {
		case RECV_EOF:
			/* One-to-one socket: EOF after a graceful close. */
			diag("EOF");
			closed = 1;
			break;
		case RECV_ERR:
			if (errno == ECONNRESET || errno == ECONNABORTED)
				fail("association aborted (%s)", strerror(errno));
			fail("recv: %s", strerror(errno));
		case RECV_MSG:
			if (m.notification) {
				closed = closed_gracefully(&m);
				break;
			}
			/* m.read_ns: taken right after the read that returned
			 * the message's last piece (MSG_EOR). */
			check_message(&m, &seq, &written);
			if (fprintf(rec, "%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%zu\n",
			    seq, written, m.read_ns, m.len) < 0 || fflush(rec) != 0)
				fail("writing records: %s", strerror(errno));
			received++;
			break;
		}
	}
	g_conn = NULL;
	if (rec != stdout && fclose(rec) != 0)
		fail("closing %s: %s", o->records, strerror(errno));
	result_stderr("CLOSED received=%" PRIu64, received);
	usrsctp_close(conn);
	free(m.buf);
	stack_finish();
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Partial reliability under loss: pr-send and pr-recv (../PROTOCOL.md)     */
/* ------------------------------------------------------------------------ */

/*
 *   peer pr-recv --bind 127.0.0.1:UDP --count N [--order unordered|ordered]
 *                [--size BYTES]
 *   peer pr-send --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --count N
 *                --pr rtx:R|ttl:MS [--every MS] [--order unordered|ordered]
 *                [--size BYTES]
 *   (both also take --rto-min/--rto-initial/--rto-max MS, and --interleave:
 *   offer and require I-DATA, so that PR-SCTP uses I-FORWARD-TSN)
 *
 * PRGEN(i): stream 0, unordered (or ordered with --order ordered), PPID
 * 1000 + i, --size bytes (default 100), byte j = (i*131 + j*7) mod 256.  Both roles require PR-SCTP to be negotiated
 * (SCTP_PR_SUPPORTED, which usrsctp offers by default, is also set here).
 * The association is always ended by the other side (graceful shutdown).
 */

#define PR_SIZE 100        /* default --size */
#define PR_MAX_SIZE 65536

struct pr_opts {
	struct opts base;        /* bind/connect/count/rto for make_socket */
	uint16_t policy;         /* SCTP_PR_SCTP_RTX or SCTP_PR_SCTP_TTL */
	uint32_t value;          /* retransmissions, or lifetime in ms */
	double every_ms;
	int ordered;             /* --order ordered */
	uint64_t size;           /* --size */
};

static void pr_parse(int argc, char **argv, struct pr_opts *p, int sender)
{
	memset(p, 0, sizeof(*p));
	p->base.role = sender ? ROLE_CLIENT : ROLE_SERVER;
	p->size = PR_SIZE;
	for (int k = 2; k < argc; k += 2) {
		const char *name = argv[k], *val = k + 1 < argc ? argv[k + 1] : NULL;
		uint64_t v;

		/* --interleave takes no value: offer I-DATA and, with PR-SCTP,
		 * I-FORWARD-TSN (RFC 8260), and require them (pr_check_negotiated). */
		if (strcmp(name, "--interleave") == 0) {
			p->base.interleave = 1;
			k--;
			continue;
		}
		if (val == NULL)
			usage("option without value");
		if (strcmp(name, "--bind") == 0) {
			if (parse_addr(val, &p->base.bind_addr) != 0)
				usage("bad --bind");
			p->base.have_bind = 1;
		} else if (strcmp(name, "--connect") == 0 && sender) {
			if (parse_addr(val, &p->base.connect_addr) != 0)
				usage("bad --connect");
			p->base.have_connect = 1;
		} else if (strcmp(name, "--count") == 0) {
			if (parse_u64(val, &p->base.count) != 0 || p->base.count == 0 ||
			    p->base.count > 100000)
				usage("bad --count (1 .. 100000)");
			p->base.have_count = 1;
		} else if (strcmp(name, "--pr") == 0 && sender) {
			if (strncmp(val, "rtx:", 4) == 0 && parse_u64(val + 4, &v) == 0 &&
			    v <= UINT32_MAX)
				p->policy = SCTP_PR_SCTP_RTX;
			else if (strncmp(val, "ttl:", 4) == 0 && parse_u64(val + 4, &v) == 0 &&
			    v > 0 && v <= UINT32_MAX)
				p->policy = SCTP_PR_SCTP_TTL;
			else
				usage("bad --pr (rtx:R or ttl:MS)");
			p->value = (uint32_t)v;
		} else if (strcmp(name, "--size") == 0) {
			if (parse_u64(val, &p->size) != 0 || p->size == 0 || p->size > PR_MAX_SIZE)
				usage("bad --size (1 .. 65536)");
		} else if (strcmp(name, "--order") == 0) {
			if (strcmp(val, "ordered") == 0)
				p->ordered = 1;
			else if (strcmp(val, "unordered") != 0)
				usage("bad --order (unordered or ordered)");
		} else if (strcmp(name, "--every") == 0 && sender) {
			if (parse_ms(val, &p->every_ms) != 0)
				usage("bad --every");
		} else if (strcmp(name, "--rto-min") == 0) {
			parse_rto(name, val, &p->base.rto_min, &p->base.have_rto_min);
		} else if (strcmp(name, "--rto-initial") == 0) {
			parse_rto(name, val, &p->base.rto_initial, &p->base.have_rto_initial);
		} else if (strcmp(name, "--rto-max") == 0) {
			parse_rto(name, val, &p->base.rto_max, &p->base.have_rto_max);
		} else {
			usage("unknown option");
		}
	}
	if (!p->base.have_bind || !p->base.have_count)
		usage("pr-send and pr-recv need --bind and --count");
	if (sender && (!p->base.have_connect || p->policy == 0))
		usage("pr-send needs --connect and --pr");
}

/* PR-SCTP on the endpoint (before the association exists), and after it is
 * up, that the peer agreed: usrsctp reports the negotiated value. */
static void pr_enable(struct socket *s)
{
	set_future_value(s, SCTP_PR_SUPPORTED, 1, "SCTP_PR_SUPPORTED");
}

static void pr_check_negotiated(struct socket *s, int interleave)
{
	struct sctp_assoc_value av;
	socklen_t len = sizeof(av);

	memset(&av, 0, sizeof(av));
	av.assoc_id = 0;   /* one-to-one socket: its association */
	if (usrsctp_getsockopt(s, IPPROTO_SCTP, SCTP_PR_SUPPORTED, &av, &len) < 0)
		fail("getsockopt SCTP_PR_SUPPORTED: %s", strerror(errno));
	if (!av.assoc_value)
		fail("PR-SCTP was not negotiated");
	/* --interleave: usrsctp reports the association's idata_supported
	 * (both sides listed I-DATA). */
	memset(&av, 0, sizeof(av));
	len = sizeof(av);
	if (usrsctp_getsockopt(s, IPPROTO_SCTP, SCTP_INTERLEAVING_SUPPORTED, &av, &len) < 0)
		fail("getsockopt SCTP_INTERLEAVING_SUPPORTED: %s", strerror(errno));
	diag("I-DATA %snegotiated", av.assoc_value ? "" : "not ");
	if (interleave && !av.assoc_value)
		fail("I-DATA was not negotiated (--interleave)");
	if (!interleave && av.assoc_value)
		fail("I-DATA negotiated without --interleave");
}

/* Prints "<prefix><i,j,...>" (or "-" for none) for the flagged indices. */
static void pr_print_ids(const char *prefix, const uint8_t *flags, uint64_t n)
{
	int first = 1;

	fputs(prefix, stdout);
	for (uint64_t i = 0; i < n; i++) {
		if (!flags[i])
			continue;
		printf("%s%" PRIu64, first ? "" : ",", i);
		first = 0;
	}
	if (first)
		fputs("-", stdout);
}

static int run_pr_send(const struct pr_opts *p)
{
	const struct opts *o = &p->base;
	struct socket *sock;
	struct msg m;
	uint8_t *buf = xmalloc(p->size), *abandoned;
	uint64_t t0 = 0;
	int closed = 0;

	stack_init(ntohs(o->bind_addr.sin_port));
	sock = make_socket(o);
	pr_enable(sock);
	/* Abandoned messages are reported with SCTP_SEND_FAILED_EVENT
	 * (sctp_release_pr_sctp_chunk -> SCTP_NOTIFY_SENT_DG_FAIL /
	 * SCTP_NOTIFY_UNSENT_DG_FAIL), carrying the message's sndinfo. */
	subscribe(sock, SCTP_FUTURE_ASSOC, SCTP_SEND_FAILED_EVENT, "SCTP_EVENT SEND_FAILED");
	connect_peer(sock, o);
	pr_check_negotiated(sock, o->interleave);
	log_tuning(sock);

	t0 = now_ns();
	for (uint64_t i = 0; i < o->count; i++) {
		struct sctp_sendv_spa spa;

		sleep_until_ns(t0 + ms_to_ns((double)i * p->every_ms));
		gen_bytes(i, 0, buf, (uint32_t)p->size);
		memset(&spa, 0, sizeof(spa));
		spa.sendv_flags = SCTP_SEND_SNDINFO_VALID | SCTP_SEND_PRINFO_VALID;
		spa.sendv_sndinfo.snd_sid = 0;
		spa.sendv_sndinfo.snd_flags = p->ordered ? 0 : SCTP_UNORDERED;
		spa.sendv_sndinfo.snd_ppid = htonl((uint32_t)(1000 + i));
		spa.sendv_prinfo.pr_policy = p->policy;
		spa.sendv_prinfo.pr_value = p->value;
		if (usrsctp_sendv(sock, buf, p->size, NULL, 0, &spa, (socklen_t)sizeof(spa),
		    SCTP_SENDV_SPA, 0) < 0)
			fail("send of message %" PRIu64 ": %s", i, strerror(errno));
	}

	/* Until the peer shuts the association down: note abandoned messages. */
	abandoned = xcalloc(o->count);
	msg_alloc(&m, MAX_MSG);
	while (!closed && recv_more(sock, &m)) {
		const union sctp_notification *n = (const union sctp_notification *)m.buf;

		if (!m.notification)
			fail("data from the receiver");
		if (m.len >= sizeof(n->sn_send_failed_event) &&
		    n->sn_header.sn_type == SCTP_SEND_FAILED_EVENT) {
			uint32_t ppid = ntohl(n->sn_send_failed_event.ssfe_info.snd_ppid);

			diag("abandoned: PPID %" PRIu32 " (%s)", ppid,
			    n->sn_send_failed_event.ssfe_flags & SCTP_DATA_SENT ?
			    "sent" : "unsent");
			if (ppid < 1000 || ppid - 1000 >= o->count)
				fail("SEND_FAILED for unknown PPID %" PRIu32, ppid);
			abandoned[ppid - 1000] = 1;
			continue;
		}
		closed = closed_gracefully(&m);
	}
	g_conn = NULL;
	if (!claim_report(REPORT_OK))
		return 1;
	printf("SENT count=%" PRIu64, o->count);
	pr_print_ids(" abandoned=", abandoned, o->count);
	putchar('\n');
	fflush(stdout);
	usrsctp_close(sock);
	free(m.buf);
	free(abandoned);
	free(buf);
	stack_finish();
	return 0;
}

static int run_pr_recv(const struct pr_opts *p)
{
	const struct opts *o = &p->base;
	struct socket *lsock, *conn;
	struct msg m;
	uint8_t *expect = xmalloc(p->size), *seen;
	uint64_t received = 0, next = 0;
	int closed = 0;

	stack_init(ntohs(o->bind_addr.sin_port));
	lsock = make_socket(o);
	pr_enable(lsock);
	conn = accept_peer(lsock, o);
	pr_check_negotiated(conn, o->interleave);

	seen = xcalloc(o->count);
	msg_alloc(&m, MAX_MSG);
	while (!closed && recv_more(conn, &m)) {
		uint32_t ppid;
		uint64_t i;

		if (m.notification) {
			closed = closed_gracefully(&m);
			continue;
		}
		ppid = ntohl(m.info.rcv_ppid);
		if (ppid < 1000 || ppid - 1000 >= o->count)
			fail("message with unexpected PPID %" PRIu32, ppid);
		i = ppid - 1000;
		if (seen[i])
			fail("message %" PRIu64 " received twice", i);
		if (m.info.rcv_sid != 0 || ((m.info.rcv_flags & SCTP_UNORDERED) == 0) != p->ordered)
			fail("message %" PRIu64 ": stream %u, %s (expected 0, %s)", i,
			    m.info.rcv_sid, m.info.rcv_flags & SCTP_UNORDERED ? "unordered" : "ordered",
			    p->ordered ? "ordered" : "unordered");
		/* Ordered: skipped messages leave gaps, never reorderings. */
		if (p->ordered && i < next)
			fail("message %" PRIu64 " after message %" PRIu64 " on an ordered stream",
			    i, next - 1);
		next = i + 1;
		gen_bytes(i, 0, expect, (uint32_t)p->size);
		if (m.len != p->size || memcmp(m.buf, expect, p->size) != 0)
			fail("message %" PRIu64 ": %zu bytes, differing from PRGEN", i, m.len);
		seen[i] = 1;
		received++;
	}
	g_conn = NULL;
	if (!claim_report(REPORT_OK))
		return 1;
	printf("RECEIVED count=%" PRIu64, received);
	pr_print_ids(" ids=", seen, o->count);
	putchar('\n');
	fflush(stdout);
	usrsctp_close(conn);
	free(m.buf);
	free(seen);
	free(expect);
	stack_finish();
	return 0;
}

/* pr-send / pr-recv: their own options (above), then their run function. */
static int pr_main(int argc, char **argv)
{
	struct pr_opts p;
	int sender = strcmp(argv[1], "pr-send") == 0;

	g_role = argv[1];
	pr_parse(argc, argv, &p, sender);
	return sender ? run_pr_send(&p) : run_pr_recv(&p);
}

/* ------------------------------------------------------------------------ */
/* Stream reconfiguration roles (RFC 6525), not part of PROTOCOL.md         */
/* ------------------------------------------------------------------------ */

/*
 *   peer reconfig-server --bind 127.0.0.1:UDP
 *   peer reconfig-client --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP
 *                        --count K [--add N]
 *
 * The initiator sends K messages "before-<i>" (PPID 1001) on stream 1,
 * resets its outgoing stream 1 at once (data in flight), then sends K
 * messages "after-<i>" (PPID 1002) on stream 1, which must arrive with SSNs
 * from 0 again.  With --add N it then adds N streams each way and sends
 * "added" (PPID 1009) on its last outgoing stream; the other side answers on
 * its own last outgoing stream once it has it.  (PPIDs tshark does not
 * dissect.)  The server also takes an SSN/TSN reset (RFC 6525 5.2.4) and
 * then messages "assoc-<i>" (PPID 1003) on stream 1, numbered from 0, and
 * resets its own outgoing stream 1 when asked to (5.2.3).  The server checks what it gets (order, SSNs, the reset and
 * change notifications) and, at the end of the association, prints
 *
 *   RECONFIG before=<b> reset=<0|1> after=<a> ssn=<ok|bad> instreams=<n>
 *            outstreams=<n> added=<m> assoc=<k> out_reset=<0|1>
 *
 * The client prints "OK reconfig before=K after=K added=N" once shut down.
 */

#define RC_STREAM 1

struct rc_state {
	uint64_t before, after, added, assoc;
	int reset_in, reset_out, ssn_bad, assoc_reset;
	uint16_t in, out;
	int answered;
};

/* Enables every RE-CONFIG request, subscribes to its notifications, and
 * accepts up to 64 inbound streams (16 outbound), so that streams can be
 * added.  On the listening socket the settings carry over to the
 * accepted association. */
static void rc_enable(struct socket *s)
{
	struct sctp_initmsg init;

	set_future_value(s, SCTP_ENABLE_STREAM_RESET, SCTP_ENABLE_RESET_STREAM_REQ |
	    SCTP_ENABLE_RESET_ASSOC_REQ | SCTP_ENABLE_CHANGE_ASSOC_REQ, "SCTP_ENABLE_STREAM_RESET");
	subscribe(s, SCTP_FUTURE_ASSOC, SCTP_STREAM_RESET_EVENT, "SCTP_EVENT");
	subscribe(s, SCTP_FUTURE_ASSOC, SCTP_STREAM_CHANGE_EVENT, "SCTP_EVENT");
	subscribe(s, SCTP_FUTURE_ASSOC, SCTP_ASSOC_RESET_EVENT, "SCTP_EVENT");
	memset(&init, 0, sizeof(init));
	init.sinit_num_ostreams = NUM_STREAMS;
	init.sinit_max_instreams = 64;
	set_opt(s, IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof(init), "SCTP_INITMSG");
}

static void rc_send(struct socket *s, uint16_t sid, uint32_t ppid, const char *text)
{
	struct sctp_sndinfo snd;

	memset(&snd, 0, sizeof(snd));
	snd.snd_sid = sid;
	snd.snd_ppid = htonl(ppid);
	if (usrsctp_sendv(s, text, strlen(text), NULL, 0, &snd, (socklen_t)sizeof(snd),
	    SCTP_SENDV_SNDINFO, 0) < 0)
		fail("send '%s' on stream %u: %s", text, sid, strerror(errno));
}

/* Handles a RE-CONFIG notification; returns 1 if it was one. */
static int rc_notification(struct socket *s, const struct msg *m, struct rc_state *st)
{
	const union sctp_notification *n = (const union sctp_notification *)m->buf;

	if (m->len < sizeof(n->sn_header))
		return 0;
	if (n->sn_header.sn_type == SCTP_STREAM_RESET_EVENT) {
		const struct sctp_stream_reset_event *e = &n->sn_strreset_event;
		size_t count = (m->len - sizeof(*e)) / sizeof(uint16_t);
		int has = count == 0;

		for (size_t k = 0; k < count; k++)
			has |= e->strreset_stream_list[k] == RC_STREAM;
		diag("SCTP_STREAM_RESET_EVENT flags 0x%x, %zu streams", e->strreset_flags, count);
		if (e->strreset_flags & (SCTP_STREAM_RESET_DENIED | SCTP_STREAM_RESET_FAILED))
			fail("stream reset denied or failed (flags 0x%x)", e->strreset_flags);
		if (has && (e->strreset_flags & SCTP_STREAM_RESET_INCOMING_SSN))
			st->reset_in = 1;
		if (has && (e->strreset_flags & SCTP_STREAM_RESET_OUTGOING_SSN))
			st->reset_out = 1;
		return 1;
	}
	if (n->sn_header.sn_type == SCTP_ASSOC_RESET_EVENT) {
		const struct sctp_assoc_reset_event *e = &n->sn_assocreset_event;

		diag("SCTP_ASSOC_RESET_EVENT flags 0x%x: local TSN %u, remote TSN %u",
		    e->assocreset_flags, e->assocreset_local_tsn, e->assocreset_remote_tsn);
		if (e->assocreset_flags & (SCTP_ASSOC_RESET_DENIED | SCTP_ASSOC_RESET_FAILED))
			fail("SSN/TSN reset denied or failed (flags 0x%x)", e->assocreset_flags);
		st->assoc_reset = 1;
		return 1;
	}
	if (n->sn_header.sn_type == SCTP_STREAM_CHANGE_EVENT) {
		const struct sctp_stream_change_event *e = &n->sn_strchange_event;

		diag("SCTP_STREAM_CHANGE_EVENT flags 0x%x: %u in / %u out", e->strchange_flags,
		    e->strchange_instrms, e->strchange_outstrms);
		if (e->strchange_flags & (SCTP_STREAM_CHANGE_DENIED | SCTP_STREAM_CHANGE_FAILED))
			fail("adding streams denied or failed (flags 0x%x)", e->strchange_flags);
		if (get_streams(s, &st->in, &st->out) < 0)
			fail("association lost");
		return 1;
	}
	return 0;
}

/* One data message: checks the stream-1 phases and their SSNs, answers an
 * "added" message once an added outgoing stream exists. */
static void rc_data(struct socket *s, const struct msg *m, struct rc_state *st)
{
	uint32_t ppid = ntohl(m->info.rcv_ppid);
	char want[32];

	if (ppid == 1009) {
		st->added++;
		diag("'added' on stream %u", m->info.rcv_sid);
		return;
	}
	if (ppid == 1003) {
		/* After the SSN/TSN reset: numbered from 0 again. */
		snprintf(want, sizeof(want), "assoc-%" PRIu64, st->assoc);
		if (m->len != strlen(want) || memcmp(m->buf, want, m->len) != 0)
			fail("expected '%s', got %zu bytes", want, m->len);
		if (!st->assoc_reset || m->info.rcv_ssn != (uint16_t)st->assoc) {
			diag("'%s' has SSN %u (SSN/TSN reset seen: %d)", want, m->info.rcv_ssn,
			    st->assoc_reset);
			st->ssn_bad = 1;
		}
		st->assoc++;
		return;
	}
	if (m->info.rcv_sid != RC_STREAM || (ppid != 1001 && ppid != 1002))
		fail("unexpected message: stream %u PPID %u", m->info.rcv_sid, ppid);
	uint64_t *k = ppid == 1001 ? &st->before : &st->after;
	snprintf(want, sizeof(want), "%s-%" PRIu64, ppid == 1001 ? "before" : "after", *k);
	if (m->len != strlen(want) || memcmp(m->buf, want, m->len) != 0)
		fail("expected '%s', got %zu bytes", want, m->len);
	/* RFC 6525: numbered from 0 before the reset, and from 0 again after. */
	if (m->info.rcv_ssn != (uint16_t)*k || (ppid == 1002 && !st->reset_in)) {
		diag("'%s' has SSN %u (reset seen: %d)", want, m->info.rcv_ssn, st->reset_in);
		st->ssn_bad = 1;
	}
	(*k)++;
	(void)s;
}

static int run_reconfig(int argc, char **argv)
{
	struct opts o;
	struct msg m;
	struct rc_state st;
	uint64_t count = 0, add = 0;
	int client;
	struct socket *sock;
	char text[32];

	memset(&o, 0, sizeof(o));
	memset(&st, 0, sizeof(st));
	client = strcmp(argv[1], "reconfig-client") == 0;
	if (!client && strcmp(argv[1], "reconfig-server") != 0)
		usage("role must be reconfig-server or reconfig-client");
	g_role = argv[1];
	o.role = client ? ROLE_CLIENT : ROLE_SERVER;
	for (int k = 2; k + 1 < argc; k += 2) {
		if (strcmp(argv[k], "--bind") == 0 && parse_addr(argv[k + 1], &o.bind_addr) == 0)
			o.have_bind = 1;
		else if (strcmp(argv[k], "--connect") == 0 &&
		    parse_addr(argv[k + 1], &o.connect_addr) == 0)
			o.have_connect = 1;
		else if (strcmp(argv[k], "--count") == 0 && parse_u64(argv[k + 1], &count) == 0)
			;
		else if (strcmp(argv[k], "--add") == 0 && parse_u64(argv[k + 1], &add) == 0)
			;
		else
			usage("bad reconfig option");
	}
	if (!o.have_bind || (client && (!o.have_connect || count == 0)) || add > 16)
		usage("reconfig roles need --bind (and, for the client, --connect and --count)");
	stack_init(ntohs(o.bind_addr.sin_port));
	msg_alloc(&m, MAX_MSG);

	if (!client) {
		struct socket *lsock = make_socket(&o);

		rc_enable(lsock);
		sock = accept_peer(lsock, &o);
		if (get_streams(sock, &st.in, &st.out) < 0)
			fail("association lost at once");
		for (;;) {
			enum recv_result r = recv_msg(sock, &m);

			if (r == RECV_EOF)
				break;
			if (r == RECV_ERR)
				fail("recv: %s", strerror(errno));
			if (m.notification) {
				if (!rc_notification(sock, &m, &st) && closed_gracefully(&m))
					break;
			} else {
				rc_data(sock, &m, &st);
			}
			if (st.added > 0 && !st.answered && st.out > NUM_STREAMS) {
				rc_send(sock, (uint16_t)(st.out - 1), 1009, "added");
				st.answered = 1;
			}
		}
		g_conn = NULL;
		result("RECONFIG before=%" PRIu64 " reset=%d after=%" PRIu64 " ssn=%s instreams=%u "
		    "outstreams=%u added=%" PRIu64 " assoc=%" PRIu64 " out_reset=%d", st.before,
		    st.reset_in, st.after, st.ssn_bad ? "bad" : "ok", st.in, st.out, st.added, st.assoc,
		    st.reset_out);
	} else {
		struct {
			struct sctp_reset_streams r;
			uint16_t list[1];
		} rs;

		sock = make_socket(&o);
		rc_enable(sock);
		connect_peer(sock, &o);
		if (get_streams(sock, &st.in, &st.out) < 0)
			fail("association lost right after connect");
		for (uint64_t i = 0; i < count; i++) {
			snprintf(text, sizeof(text), "before-%" PRIu64, i);
			rc_send(sock, RC_STREAM, 1001, text);
		}
		/* At once, with the messages still in flight: usrsctp sends the
		 * request once the stream's queue has drained. */
		memset(&rs, 0, sizeof(rs));
		rs.r.srs_assoc_id = SCTP_FUTURE_ASSOC;
		rs.r.srs_flags = SCTP_STREAM_RESET_OUTGOING;
		rs.r.srs_number_streams = 1;
		rs.list[0] = RC_STREAM;
		set_opt(sock, IPPROTO_SCTP, SCTP_RESET_STREAMS, &rs, sizeof(rs), "SCTP_RESET_STREAMS");
		while (!st.reset_out) {
			if (recv_msg(sock, &m) != RECV_MSG)
				fail("association lost waiting for the reset");
			if (!m.notification || !rc_notification(sock, &m, &st))
				diag("ignored a message or notification while resetting");
		}
		for (uint64_t i = 0; i < count; i++) {
			snprintf(text, sizeof(text), "after-%" PRIu64, i);
			rc_send(sock, RC_STREAM, 1002, text);
		}
		if (add > 0) {
			struct sctp_add_streams as;
			uint16_t in0 = st.in, out0 = st.out;

			memset(&as, 0, sizeof(as));
			as.sas_assoc_id = SCTP_FUTURE_ASSOC;
			as.sas_instrms = (uint16_t)add;
			as.sas_outstrms = (uint16_t)add;
			set_opt(sock, IPPROTO_SCTP, SCTP_ADD_STREAMS, &as, sizeof(as), "SCTP_ADD_STREAMS");
			while (st.in < in0 + add || st.out < out0 + add) {
				if (recv_msg(sock, &m) != RECV_MSG)
					fail("association lost waiting for the added streams");
				if (!m.notification)
					rc_data(sock, &m, &st);
				else
					rc_notification(sock, &m, &st);
			}
			rc_send(sock, (uint16_t)(st.out - 1), 1009, "added");
			while (st.added == 0) {
				if (recv_msg(sock, &m) != RECV_MSG)
					fail("association lost waiting for the peer's 'added'");
				if (!m.notification)
					rc_data(sock, &m, &st);
			}
		}
		/* Graceful end: SHUTDOWN once everything is acknowledged. */
		if (usrsctp_shutdown(sock, SHUT_WR) < 0)
			fail("shutdown: %s", strerror(errno));
		for (;;) {
			enum recv_result r = recv_msg(sock, &m);

			if (r != RECV_MSG)
				break;
			if (m.notification && !rc_notification(sock, &m, &st) &&
			    handle_notification(&m) == NOTE_CLOSED_SHUTDOWN)
				break;
		}
		g_conn = NULL;
		result("OK reconfig before=%" PRIu64 " after=%" PRIu64 " added=%" PRIu64, count, count,
		    add);
	}
	usrsctp_close(sock);
	free(m.buf);
	stack_finish();
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Multi-homing roles: mh-send and mh-recv, not part of PROTOCOL.md         */
/* ------------------------------------------------------------------------ */

/*
 *   peer mh-recv --bind IP:UDP [--bind IP:UDP] --count N [tuning]
 *   peer mh-send --bind IP:UDP [--bind IP:UDP] --connect IP:UDP
 *                [--connect IP:UDP] --count N --every MS [--size BYTES]
 *                [--primary IP] [--start-delay MS] [tuning]
 *   tuning (each role): --rto-min/--rto-initial/--rto-max MS,
 *     --hb-interval MS, --path-max-retrans K, --pf-threshold K
 *
 * The endpoint is bound (usrsctp_bindx) to every --bind address, all on
 * SCTP port 5000 and one UDP encapsulation port (RFC 6951; usrsctp has one
 * per stack, so the --bind ports must agree); mh-send associates with every
 * --connect address at once (usrsctp_connectx; the ports must agree too).
 * With two addresses each, INIT and INIT ACK list both, and the association
 * has two paths.  --primary sets the sender's primary path (SCTP_PRIMARY_ADDR)
 * once the association is up.  The tuning options are usrsctp's stack-wide
 * defaults (sysctls) for every association: heartbeat interval, Path.Max.Retrans
 * and the potentially-failed threshold (RFC 7829; usrsctp's default 65535
 * leaves PF off); the RTO ones are SCTP_RTOINFO as for the other roles.
 *
 * mh-send waits (at most 10 s) until every peer address is confirmed by a
 * heartbeat (RFC 9260 5.4: data goes to confirmed addresses only), then
 * sends N messages of WORKLOAD.md's form (seq, CLOCK_MONOTONIC stamp, filler;
 * stream 0, ordered), one every --every ms after --start-delay (default 0),
 * waits until all are acknowledged and shuts down.  mh-recv accepts one
 * association and reads until it ends.
 *
 * Both print on stdout, as they happen (t_ms: milliseconds since the
 * association came up):
 *
 *   PEERS <ip>[,<ip>]                        the peer's addresses
 *   LOCALS <ip>[,<ip>]                       our addresses in the association
 *   PATH t_ms=<t> addr=<ip> state=<ADDR_AVAILABLE|ADDR_UNREACHABLE|
 *        ADDR_REMOVED|ADDR_ADDED|ADDR_MADE_PRIM|ADDR_CONFIRMED|<n>>
 *        error=<e>                           each SCTP_PEER_ADDR_CHANGE
 *        (usrsctp 0.9.5 reports no change into or out of the
 *        potentially-failed state: sctp_timer.c sets SCTP_ADDR_PF silently)
 *   PRIMARY <ip>                             (mh-send) the primary path when sending starts
 *
 * and at the end, mh-send:
 *
 *   SENT count=<N> rtx=<retransmitted DATA chunks> t3=<T3 expiries>
 *
 * and mh-recv, one FROM line per source address messages came from (the
 * address of the path the message's DATA arrived on; first/last: the
 * smallest and largest seq that came that way), then
 *
 *   FROM addr=<ip> count=<k> first=<seq> last=<seq>
 *   RECEIVED count=<n> unique=<u> duplicates=<d> reordered=<r> missing=<m>
 *            max_latency_ms=<ms>
 *
 * reordered counts messages with a seq below one received before it; the
 * latency is from the sender's stamp to the read (one host, one clock).
 * A failure prints "FAIL <reason>" and exits 1.
 */

#ifndef SCTP_PEER_ADDR_THLDS
#define SCTP_PEER_ADDR_THLDS 0x00000023
#endif
#define MH_MAX_ADDRS 2
#define MH_MAX_FROM 8
#define MH_MAX_COUNT 1000000

struct mh_opts {
	struct opts base;                 /* base.bind_addr: first --bind (its port: UDP) */
	struct sockaddr_in binds[MH_MAX_ADDRS], connects[MH_MAX_ADDRS];
	int nbind, nconnect;
	struct in_addr primary;
	int have_primary;
	uint64_t hb_interval, path_max_retrans, pf_threshold;
	int have_hb_interval, have_path_max_retrans, have_pf_threshold;
};

static uint64_t g_mh_up_ns;

static uint64_t mh_t_ms(void)
{
	return g_mh_up_ns == 0 ? 0 : (now_ns() - g_mh_up_ns) / 1000000u;
}

static void mh_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mh_out(const char *fmt, ...)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	va_list ap;

	pthread_mutex_lock(&mu);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&mu);
}

static const char *mh_ip(const struct sockaddr *sa, char *buf, size_t len)
{
	if (sa->sa_family == AF_INET)
		return inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf,
		    (socklen_t)len);
	snprintf(buf, len, "(family %d)", sa->sa_family);
	return buf;
}

static void mh_parse(int argc, char **argv, struct mh_opts *p, int sender)
{
	memset(p, 0, sizeof(*p));
	p->base.role = sender ? ROLE_MSG_SEND : ROLE_MSG_RECV;
	p->base.size = 100;
	for (int k = 2; k < argc; k += 2) {
		const char *name = argv[k], *val = k + 1 < argc ? argv[k + 1] : NULL;
		uint64_t v;

		if (val == NULL)
			usage("option without a value");
		if (strcmp(name, "--bind") == 0) {
			if (p->nbind == MH_MAX_ADDRS || parse_addr(val, &p->binds[p->nbind]) != 0)
				usage("bad or third --bind");
			p->nbind++;
		} else if (strcmp(name, "--connect") == 0 && sender) {
			if (p->nconnect == MH_MAX_ADDRS ||
			    parse_addr(val, &p->connects[p->nconnect]) != 0)
				usage("bad or third --connect");
			p->nconnect++;
		} else if (strcmp(name, "--count") == 0 && parse_u64(val, &v) == 0 &&
		    v <= MH_MAX_COUNT) {
			p->base.count = v;
			p->base.have_count = 1;
		} else if (strcmp(name, "--every") == 0 && sender &&
		    parse_ms(val, &p->base.every_ms) == 0) {
			p->base.have_every = 1;
		} else if (strcmp(name, "--size") == 0 && sender && parse_u64(val, &v) == 0 &&
		    v >= 12 && v <= 65536) {
			p->base.size = v;
		} else if (strcmp(name, "--start-delay") == 0 && sender &&
		    parse_ms(val, &p->base.start_delay_ms) == 0) {
		} else if (strcmp(name, "--primary") == 0 && sender &&
		    inet_pton(AF_INET, val, &p->primary) == 1) {
			p->have_primary = 1;
		} else if (strcmp(name, "--rto-min") == 0) {
			parse_rto(name, val, &p->base.rto_min, &p->base.have_rto_min);
		} else if (strcmp(name, "--rto-initial") == 0) {
			parse_rto(name, val, &p->base.rto_initial, &p->base.have_rto_initial);
		} else if (strcmp(name, "--rto-max") == 0) {
			parse_rto(name, val, &p->base.rto_max, &p->base.have_rto_max);
		} else if (strcmp(name, "--hb-interval") == 0 && parse_u64(val, &v) == 0 &&
		    v <= UINT32_MAX) {
			p->hb_interval = v;
			p->have_hb_interval = 1;
		} else if (strcmp(name, "--path-max-retrans") == 0 && parse_u64(val, &v) == 0 &&
		    v <= 65535) {
			p->path_max_retrans = v;
			p->have_path_max_retrans = 1;
		} else if (strcmp(name, "--pf-threshold") == 0 && parse_u64(val, &v) == 0 &&
		    v <= 65535) {
			p->pf_threshold = v;
			p->have_pf_threshold = 1;
		} else {
			usage("unknown or bad option for this role");
		}
	}
	if (p->nbind == 0 || !p->base.have_count)
		usage("mh roles need --bind and --count");
	if (sender && (p->nconnect == 0 || !p->base.have_every))
		usage("mh-send needs --connect and --every");
	for (int i = 1; i < p->nbind; i++)
		if (p->binds[i].sin_port != p->binds[0].sin_port)
			usage("every --bind has the same UDP port (usrsctp has one per stack)");
	for (int i = 1; i < p->nconnect; i++)
		if (p->connects[i].sin_port != p->connects[0].sin_port)
			usage("every --connect has the same UDP port");
	p->base.bind_addr = p->binds[0];
	p->base.connect_addr = p->connects[0];
}

/* Stack-wide defaults, set before any socket exists. */
static void mh_sysctls(const struct mh_opts *p)
{
	if (p->have_hb_interval && usrsctp_sysctl_set_sctp_heartbeat_interval_default(
	    (uint32_t)p->hb_interval) != 0)
		fail("sysctl heartbeat_interval_default %" PRIu64 " refused", p->hb_interval);
	if (p->have_path_max_retrans && usrsctp_sysctl_set_sctp_path_rtx_max_default(
	    (uint32_t)p->path_max_retrans) != 0)
		fail("sysctl path_rtx_max_default %" PRIu64 " refused", p->path_max_retrans);
	if (p->have_pf_threshold && usrsctp_sysctl_set_sctp_path_pf_threshold(
	    (uint32_t)p->pf_threshold) != 0)
		fail("sysctl path_pf_threshold %" PRIu64 " refused", p->pf_threshold);
}

/* The socket, bound to every --bind address on SCTP port 5000, with
 * peer-address notifications. */
static struct socket *mh_socket(const struct mh_opts *p)
{
	struct socket *s;

	stack_init(ntohs(p->binds[0].sin_port));
	mh_sysctls(p);
	s = make_socket(&p->base);   /* binds the first address */
	for (int i = 1; i < p->nbind; i++) {
		struct sockaddr_in sin = p->binds[i];
		char ip[INET_ADDRSTRLEN];

		sin.sin_port = htons(SCTP_PORT);
		if (usrsctp_bindx(s, (struct sockaddr *)&sin, 1, SCTP_BINDX_ADD_ADDR) < 0)
			fail("usrsctp_bindx %s: %s (usrsctp knows the interface addresses "
			    "present at usrsctp_init)", mh_ip((struct sockaddr *)&sin, ip, sizeof(ip)),
			    strerror(errno));
	}
	subscribe(s, SCTP_FUTURE_ASSOC, SCTP_PEER_ADDR_CHANGE, "SCTP_EVENT PEER_ADDR_CHANGE");
	return s;
}

/* PEERS and LOCALS lines. */
static void mh_print_addrs(struct socket *s)
{
	struct sockaddr *addrs;
	char line[256], ip[INET6_ADDRSTRLEN];
	int n;

	for (int local = 0; local < 2; local++) {
		n = local ? usrsctp_getladdrs(s, 0, &addrs) : usrsctp_getpaddrs(s, 0, &addrs);
		if (n < 0)
			fail("usrsctp_get%saddrs: %s", local ? "l" : "p", strerror(errno));
		line[0] = '\0';
		for (int i = 0; i < n; i++) {
			const struct sockaddr *sa = (const struct sockaddr *)((const char *)addrs +
			    (size_t)i * sizeof(struct sockaddr_in));

			if (strlen(line) + INET6_ADDRSTRLEN + 2 < sizeof(line)) {
				if (i > 0)
					strcat(line, ",");
				strcat(line, mh_ip(sa, ip, sizeof(ip)));
			}
		}
		if (n > 0) {
			if (local)
				usrsctp_freeladdrs(addrs);
			else
				usrsctp_freepaddrs(addrs);
		}
		mh_out("%s %s", local ? "LOCALS" : "PEERS", line);
	}
}

/* A notification: PATH lines; returns its classification. */
static enum note mh_notification(const struct msg *m)
{
	const union sctp_notification *n = (const union sctp_notification *)m->buf;

	if (m->len >= sizeof(n->sn_header) && n->sn_header.sn_type == SCTP_PEER_ADDR_CHANGE &&
	    m->len >= sizeof(n->sn_paddr_change)) {
		const struct sctp_paddr_change *pc = &n->sn_paddr_change;
		static const char *names[] = {NULL, "ADDR_AVAILABLE", "ADDR_UNREACHABLE",
		    "ADDR_REMOVED", "ADDR_ADDED", "ADDR_MADE_PRIM", "ADDR_CONFIRMED"};
		char ip[INET6_ADDRSTRLEN], state[16];
		const char *name = pc->spc_state < sizeof(names) / sizeof(names[0]) ?
		    names[pc->spc_state] : NULL;

		if (name == NULL) {
			snprintf(state, sizeof(state), "%u", pc->spc_state);
			name = state;
		}
		mh_out("PATH t_ms=%" PRIu64 " addr=%s state=%s error=%u", mh_t_ms(),
		    mh_ip((const struct sockaddr *)&pc->spc_aaddr, ip, sizeof(ip)), name,
		    pc->spc_error);
		return NOTE_OTHER;
	}
	return handle_notification(m);
}

/* mh-send: the primary path's address. */
static void mh_primary(struct socket *s, const struct mh_opts *p)
{
	struct sctp_setprim prim;
	socklen_t len = sizeof(prim);
	char ip[INET6_ADDRSTRLEN];

	if (p->have_primary) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&prim.ssp_addr;

		memset(&prim, 0, sizeof(prim));
		sin->sin_family = AF_INET;
		sin->sin_port = htons(SCTP_PORT);
		sin->sin_addr = p->primary;
		set_opt(s, IPPROTO_SCTP, SCTP_PRIMARY_ADDR, &prim, sizeof(prim),
		    "SCTP_PRIMARY_ADDR");
	}
	memset(&prim, 0, sizeof(prim));
	if (usrsctp_getsockopt(s, IPPROTO_SCTP, SCTP_PRIMARY_ADDR, &prim, &len) < 0)
		fail("getsockopt SCTP_PRIMARY_ADDR: %s", strerror(errno));
	mh_out("PRIMARY %s", mh_ip((struct sockaddr *)&prim.ssp_addr, ip, sizeof(ip)));
}

/* mh-send: 1 once no peer address is unconfirmed. */
static int mh_all_confirmed(struct socket *s)
{
	struct sockaddr *addrs;
	int n = usrsctp_getpaddrs(s, 0, &addrs), unconfirmed = 0;

	if (n <= 0)
		fail("usrsctp_getpaddrs: %s", n < 0 ? strerror(errno) : "no address");
	for (int i = 0; i < n; i++) {
		struct sctp_paddrinfo info;
		socklen_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		memcpy(&info.spinfo_address, (const char *)addrs + (size_t)i * sizeof(struct sockaddr_in),
		    sizeof(struct sockaddr_in));
		if (usrsctp_getsockopt(s, IPPROTO_SCTP, SCTP_GET_PEER_ADDR_INFO, &info, &len) < 0)
			fail("getsockopt SCTP_GET_PEER_ADDR_INFO: %s", strerror(errno));
		if (info.spinfo_state & SCTP_UNCONFIRMED)
			unconfirmed++;
	}
	usrsctp_freepaddrs(addrs);
	return unconfirmed == 0;
}

struct mh_reader {
	struct socket *sock;
	struct msg m;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int up, closed;
};

/* mh-send's reader: notifications as they come; shuts down once the
 * sender is dry (subscribed only after the last message is queued). */
static void *mh_read(void *arg)
{
	struct mh_reader *r = arg;

	for (;;) {
		enum recv_result res = recv_msg(r->sock, &r->m);
		enum note n;

		if (res == RECV_EOF)
			break;
		if (res == RECV_ERR)
			fail("recv: %s", strerror(errno));
		if (!r->m.notification)
			continue;
		if (r->m.len >= 8 && ((const union sctp_notification *)r->m.buf)->sn_header.sn_type ==
		    SCTP_ASSOC_CHANGE &&
		    ((const union sctp_notification *)r->m.buf)->sn_assoc_change.sac_state ==
		    SCTP_COMM_UP) {
			pthread_mutex_lock(&r->mu);
			g_mh_up_ns = now_ns();
			r->up = 1;
			pthread_cond_broadcast(&r->cv);
			pthread_mutex_unlock(&r->mu);
		}
		n = mh_notification(&r->m);
		if (n == NOTE_SENDER_DRY) {
			if (usrsctp_shutdown(r->sock, SHUT_WR) < 0)
				fail("shutdown: %s", strerror(errno));
		} else if (n == NOTE_CLOSED_ABORT) {
			fail("association aborted");
		} else if (n == NOTE_CLOSED_SHUTDOWN) {
			break;
		}
	}
	pthread_mutex_lock(&r->mu);
	r->closed = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static int run_mh_send(const struct mh_opts *p)
{
	struct mh_reader r;
	struct sockaddr_in dst[MH_MAX_ADDRS];
	struct sctp_udpencaps enc;
	struct sctp_sndinfo snd;
	struct sctpstat st;
	pthread_t tid;
	uint64_t t0, total = p->base.count;
	uint8_t *buf;

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	r.sock = mh_socket(p);
	msg_alloc(&r.m, MAX_MSG);

	/* RFC 6951: the peer's UDP port, for every path of the association. */
	for (int i = 0; i < p->nconnect; i++) {
		dst[i] = p->connects[i];
		dst[i].sin_port = htons(SCTP_PORT);
	}
	memset(&enc, 0, sizeof(enc));
	memcpy(&enc.sue_address, &dst[0], sizeof(dst[0]));
	enc.sue_assoc_id = SCTP_FUTURE_ASSOC;
	enc.sue_port = p->connects[0].sin_port;
	set_opt(r.sock, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &enc, sizeof(enc),
	    "SCTP_REMOTE_UDP_ENCAPS_PORT");
	g_conn = r.sock;
	if (usrsctp_connectx(r.sock, (struct sockaddr *)dst, p->nconnect, NULL) < 0)
		fail("usrsctp_connectx: %s", strerror(errno));
	if (pthread_create(&tid, NULL, mh_read, &r) != 0)
		fail("pthread_create");
	pthread_mutex_lock(&r.mu);
	while (!r.up && !r.closed)
		pthread_cond_wait(&r.cv, &r.mu);
	pthread_mutex_unlock(&r.mu);
	if (!r.up)
		fail("association did not come up");
	mh_print_addrs(r.sock);
	for (int k = 0; k < 1000 && !mh_all_confirmed(r.sock); k++)
		sleep_until_ns(now_ns() + 10000000u);
	if (!mh_all_confirmed(r.sock))
		fail("a peer address stayed unconfirmed for 10 s");
	mh_primary(r.sock, p);

	memset(&snd, 0, sizeof(snd));
	buf = xmalloc(p->base.size);
	t0 = now_ns() + ms_to_ns(p->base.start_delay_ms);
	arm_timeout_ns(t0 - now_ns() + ms_to_ns(p->base.every_ms * (double)total) +
	    (uint64_t)TIMEOUT_S * 1000000000u);
	for (uint64_t seq = 0; seq < total; seq++) {
		put_be32(buf, (uint32_t)seq);
		for (size_t j = 12; j < p->base.size; j++)
			buf[j] = filler((uint32_t)seq, j);
		sleep_until_ns(t0 + ms_to_ns(p->base.every_ms * (double)seq));
		put_be64(buf + 4, now_ns());
		if (usrsctp_sendv(r.sock, buf, p->base.size, NULL, 0, &snd, (socklen_t)sizeof(snd),
		    SCTP_SENDV_SNDINFO, 0) < 0)
			fail("send of message %" PRIu64 ": %s", seq, strerror(errno));
	}
	free(buf);
	subscribe(r.sock, 0, SCTP_SENDER_DRY_EVENT, "SCTP_EVENT SENDER_DRY");
	pthread_join(tid, NULL);
	g_conn = NULL;
	memset(&st, 0, sizeof(st));
	usrsctp_get_stat(&st);
	mh_out("SENT count=%" PRIu64 " rtx=%" PRIu32 " t3=%" PRIu32, total,
	    st.sctps_sendretransdata, st.sctps_timodata);
	usrsctp_close(r.sock);
	free(r.m.buf);
	stack_finish();
	return 0;
}

struct mh_from {
	struct in_addr addr;
	uint64_t count, first, last;
};

static int run_mh_recv(const struct mh_opts *p)
{
	struct socket *lsock, *conn;
	struct msg m;
	struct mh_from from[MH_MAX_FROM];
	int nfrom = 0;
	uint8_t *seen = xcalloc(p->base.count ? p->base.count : 1);
	uint64_t received = 0, unique = 0, dups = 0, reordered = 0, max_lat_ns = 0;
	int64_t highest = -1;

	alarm(0);   /* whoever runs it bounds it */
	lsock = mh_socket(p);
	if (usrsctp_listen(lsock, 1) < 0)
		fail("usrsctp_listen: %s", strerror(errno));
	conn = usrsctp_accept(lsock, NULL, NULL);
	if (conn == NULL)
		fail("usrsctp_accept: %s", strerror(errno));
	usrsctp_close(lsock);
	g_conn = conn;
	g_mh_up_ns = now_ns();
	mh_print_addrs(conn);
	msg_alloc(&m, MAX_MSG);
	for (;;) {
		struct sockaddr_in src;
		socklen_t srclen = sizeof(src);
		struct sctp_rcvinfo info;
		socklen_t infolen = sizeof(info);
		unsigned int infotype = 0;
		int flags = 0;
		ssize_t n;
		uint32_t seq;
		uint64_t written, lat;
		int f;

		/* One read per message: WORKLOAD messages are far below the
		 * partial delivery point. */
		memset(&src, 0, sizeof(src));
		n = usrsctp_recvv(conn, m.buf, m.cap, (struct sockaddr *)&src, &srclen, &info,
		    &infolen, &infotype, &flags);
		m.read_ns = now_ns();
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == ECONNRESET || errno == ECONNABORTED)
				fail("association aborted (%s)", strerror(errno));
			fail("recv: %s", strerror(errno));
		}
		m.len = (size_t)n;
		m.notification = (flags & MSG_NOTIFICATION) != 0;
		if (m.notification) {
			enum note note = mh_notification(&m);

			if (note == NOTE_CLOSED_ABORT)
				fail("association aborted");
			if (note == NOTE_CLOSED_SHUTDOWN)
				break;
			continue;
		}
		if (!(flags & MSG_EOR))
			fail("message larger than %zu bytes", m.cap);
		check_message(&m, &seq, &written);
		if (seq >= p->base.count)
			fail("message seq %" PRIu32 " beyond --count %" PRIu64, seq, p->base.count);
		received++;
		if (seen[seq]) {
			dups++;
		} else {
			seen[seq] = 1;
			unique++;
		}
		if ((int64_t)seq < highest)
			reordered++;
		else
			highest = seq;
		lat = m.read_ns > written ? m.read_ns - written : 0;
		if (lat > max_lat_ns)
			max_lat_ns = lat;
		for (f = 0; f < nfrom; f++)
			if (from[f].addr.s_addr == src.sin_addr.s_addr)
				break;
		if (f == nfrom && nfrom < MH_MAX_FROM) {
			from[nfrom].addr = src.sin_addr;
			from[nfrom].count = 0;
			from[nfrom].first = seq;
			from[nfrom].last = seq;
			nfrom++;
		}
		if (f < nfrom) {
			from[f].count++;
			if (seq < from[f].first)
				from[f].first = seq;
			if (seq > from[f].last)
				from[f].last = seq;
		}
	}
	g_conn = NULL;
	for (int f = 0; f < nfrom; f++) {
		char ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &from[f].addr, ip, sizeof(ip));
		mh_out("FROM addr=%s count=%" PRIu64 " first=%" PRIu64 " last=%" PRIu64, ip,
		    from[f].count, from[f].first, from[f].last);
	}
	mh_out("RECEIVED count=%" PRIu64 " unique=%" PRIu64 " duplicates=%" PRIu64
	    " reordered=%" PRIu64 " missing=%" PRIu64 " max_latency_ms=%.1f", received, unique,
	    dups, reordered, p->base.count - unique, (double)max_lat_ns / 1e6);
	usrsctp_close(conn);
	free(m.buf);
	free(seen);
	stack_finish();
	return 0;
}

static int mh_main(int argc, char **argv)
{
	struct mh_opts p;
	int sender = strcmp(argv[1], "mh-send") == 0;

	g_role = argv[1];
	mh_parse(argc, argv, &p, sender);
	return sender ? run_mh_send(&p) : run_mh_recv(&p);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(TIMEOUT_S);
	signal(SIGPIPE, SIG_IGN);

	if (argc >= 2 && (strcmp(argv[1], "pr-send") == 0 || strcmp(argv[1], "pr-recv") == 0))
		return pr_main(argc, argv);

	/* Multi-homing: roles of their own, above. */
	if (argc >= 2 && strncmp(argv[1], "mh-", 3) == 0)
		return mh_main(argc, argv);

	/* Stream reconfiguration (RFC 6525): roles of their own, above. */
	if (argc >= 2 && strncmp(argv[1], "reconfig-", 9) == 0)
		return run_reconfig(argc, argv);
	parse_args(argc, argv, &o);
	switch (o.role) {
	case ROLE_CLIENT:
		return run_client(&o);
	case ROLE_MSG_SEND:
		return run_msg_send(&o);
	case ROLE_MSG_RECV:
		return run_msg_recv(&o);
	case ROLE_SERVER:
	default:
		return run_server(&o);
	}
}
