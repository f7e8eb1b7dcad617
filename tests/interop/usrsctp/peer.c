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

/* Writes the success result line to stdout (the only thing written there
 * besides a FAIL line). */
static void result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void result(const char *fmt, ...)
{
	va_list ap;

	if (!claim_report(REPORT_OK))
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
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

struct opts {
	int is_client;
	struct sockaddr_in bind_addr;     /* UDP address; only the port is used by usrsctp */
	struct sockaddr_in connect_addr;  /* peer's UDP address */
	int have_bind, have_connect, have_count;
	uint64_t count, seed, abort_after, window;
	int have_abort_after;
	int end_abort;
};

static void usage(const char *why) __attribute__((noreturn));
static void usage(const char *why)
{
	fprintf(stderr,
	    "usage: peer server --bind 127.0.0.1:UDP\n"
	    "       peer client --bind 127.0.0.1:UDP --connect 127.0.0.1:UDP --count N\n"
	    "                   [--seed S] [--end shutdown|abort] [--abort-after K] [--window W]\n");
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

static void parse_args(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->window = 32;
	if (argc < 2)
		usage("missing role");
	if (strcmp(argv[1], "server") == 0) {
		o->is_client = 0;
	} else if (strcmp(argv[1], "client") == 0) {
		o->is_client = 1;
	} else {
		usage("role must be server or client");
	}
	g_role = argv[1];
	for (int k = 2; k < argc; k += 2) {
		const char *name = argv[k], *val = k + 1 < argc ? argv[k + 1] : NULL;

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
		} else if (strcmp(name, "--count") == 0) {
			if (parse_u64(val, &o->count) != 0 || o->count > UINT32_MAX - 1000)
				usage("bad --count");
			o->have_count = 1;
		} else if (strcmp(name, "--seed") == 0) {
			if (parse_u64(val, &o->seed) != 0)
				usage("bad --seed");
		} else if (strcmp(name, "--end") == 0) {
			if (strcmp(val, "shutdown") == 0)
				o->end_abort = 0;
			else if (strcmp(val, "abort") == 0)
				o->end_abort = 1;
			else
				usage("bad --end");
		} else if (strcmp(name, "--abort-after") == 0) {
			if (parse_u64(val, &o->abort_after) != 0)
				usage("bad --abort-after");
			o->have_abort_after = 1;
		} else if (strcmp(name, "--window") == 0) {
			if (parse_u64(val, &o->window) != 0 || o->window == 0)
				usage("bad --window");
		} else {
			usage("unknown option");
		}
	}
	if (!o->have_bind)
		usage("--bind is required");
	if (o->is_client) {
		if (!o->have_connect || !o->have_count)
			usage("client needs --connect and --count");
		if (!o->have_abort_after)
			o->abort_after = o->count / 2;
		if (o->end_abort && o->abort_after > o->count)
			usage("--abort-after exceeds --count");
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
	    "out %u pkts (crc set %u, unset %u), retransmitted DATA %u",
	    st.sctps_inpackets, st.sctps_recvswcrc, st.sctps_recvhwcrc, st.sctps_badsum,
	    st.sctps_outpackets, st.sctps_sendswcrc, st.sctps_sendhwcrc,
	    st.sctps_sendretransdata);
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

/* Options common to both roles; a socket returned by accept() inherits them
 * from the listening socket (features, buffer sizes). */
static struct socket *make_socket(void)
{
	struct socket *s;
	const int on = 1;
	const int buf = SOCK_BUF;
	struct sctp_initmsg init;
	struct sctp_event ev;
	const uint16_t events[] = {SCTP_ASSOC_CHANGE, SCTP_SHUTDOWN_EVENT};
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
	memset(&ev, 0, sizeof(ev));
	ev.se_assoc_id = SCTP_FUTURE_ASSOC;
	ev.se_on = 1;
	for (size_t k = 0; k < sizeof(events) / sizeof(events[0]); k++) {
		ev.se_type = events[k];
		set_opt(s, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof(ev), "SCTP_EVENT");
	}

	/* SCTP port 5000 on 127.0.0.1 on both sides. */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(SCTP_PORT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (usrsctp_bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		fail("usrsctp_bind 127.0.0.1:%d: %s", SCTP_PORT, strerror(errno));
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

/* ------------------------------------------------------------------------ */
/* Receiving whole messages                                                 */
/* ------------------------------------------------------------------------ */

struct msg {
	uint8_t *buf;                /* MAX_MSG bytes */
	size_t len;
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

		if (m->len == MAX_MSG) {
			errno = EMSGSIZE;
			return RECV_ERR;
		}
		memset(&info, 0, sizeof(info));
		n = usrsctp_recvv(s, m->buf + m->len, MAX_MSG - m->len, NULL, NULL,
		    &info, &infolen, &infotype, &flags);
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
enum note { NOTE_OTHER, NOTE_SHUTDOWN_EVENT, NOTE_CLOSED_SHUTDOWN, NOTE_CLOSED_ABORT };

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

/* ------------------------------------------------------------------------ */
/* Server                                                                   */
/* ------------------------------------------------------------------------ */

static int run_server(const struct opts *o)
{
	struct socket *lsock, *conn;
	struct msg m;
	uint64_t echoed = 0;
	int ended_abort = -1;      /* -1: still open, 0: shutdown, 1: abort */
	uint16_t in, out;

	stack_init(ntohs(o->bind_addr.sin_port));
	lsock = make_socket();
	if (usrsctp_listen(lsock, 1) < 0)
		fail("usrsctp_listen: %s", strerror(errno));
	diag("listening on SCTP port %d, UDP port %u", SCTP_PORT, ntohs(o->bind_addr.sin_port));

	/* Exactly one association; later INITs find no listener. */
	conn = usrsctp_accept(lsock, NULL, NULL);
	if (conn == NULL)
		fail("usrsctp_accept: %s", strerror(errno));
	usrsctp_close(lsock);
	g_conn = conn;
	/* Diagnostic only: the association may already be gone, and what
	 * happened is read from the socket below. */
	if (get_streams(conn, &in, &out) == 0 && (in < USED_STREAMS || out < USED_STREAMS))
		diag("warning: fewer than %d streams negotiated", USED_STREAMS);

	m.buf = xmalloc(MAX_MSG);
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
	struct sockaddr_in dst;
	struct sctp_udpencaps enc;
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
	c.sock = make_socket();

	/* SCTP destination: the peer's address, SCTP port 5000. */
	dst = o->connect_addr;
	dst.sin_port = htons(SCTP_PORT);

	/* RFC 6951: reach the peer over UDP at its --connect port.  Set before
	 * connect(), it applies to the association connect() creates. */
	memset(&enc, 0, sizeof(enc));
	memcpy(&enc.sue_address, &dst, sizeof(dst));
	enc.sue_assoc_id = SCTP_FUTURE_ASSOC;
	enc.sue_port = o->connect_addr.sin_port;   /* network byte order */
	set_opt(c.sock, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &enc, sizeof(enc),
	    "SCTP_REMOTE_UDP_ENCAPS_PORT");

	/* Blocking connect: returns once COOKIE-ACK has arrived. */
	if (usrsctp_connect(c.sock, (struct sockaddr *)&dst, sizeof(dst)) < 0)
		fail("connect: %s", strerror(errno));
	g_conn = c.sock;
	if (get_streams(c.sock, &in, &out) < 0)
		fail("association lost right after connect");
	if (in < USED_STREAMS || out < USED_STREAMS)
		fail("only %u inbound / %u outbound streams negotiated, need %d", in, out, USED_STREAMS);

	m.buf = xmalloc(MAX_MSG);
	expect = xmalloc(65536);
	seen = calloc(o->count ? o->count : 1, 1);
	if (seen == NULL)
		fail("out of memory");
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

	parse_args(argc, argv, &o);
	return o.is_client ? run_client(&o) : run_server(&o);
}
