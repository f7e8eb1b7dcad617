#!/usr/bin/env python3
"""Expected-timeline model of seed 000, Fig. 9 (experiments/seed000-fig09.toml):
the Standard (preset signaling-lksctp: lksctp 2.6.15, RTO.Initial 200 ms,
RTO.Min 100, RTO.Max 400, SACK delay 40 ms, every 2nd packet, fast retransmit
on the 4th miss indication) MTT of a lost message, 2000 kbit/s, 15 ms one way,
burst sizes uniform in 1..7, 200 ms gaps, 12 bursts of which the first 2 are
warm-up, 40 replications.

Per run (exactly one loss: the first transmission of message j of a burst of n;
times in ms from the burst start):
  * 0.992 a DATA packet on the link, 0.192 a SACK (0.208 with a gap block), a
    dropped packet takes no link time, 15 one way.
  * n - j >= 4: fast retransmission on the SACK of packet j+4, arriving at
    15 + (j+3)*0.992 + 15.208 + 15.992.
  * otherwise T3: from the send (j = 1, time 0), or restarted by the SACK that
    first acknowledges j-1, which leaves the receiver when j-1 arrives
    (15 + (j-1)*0.992) if j-1 closes a SACK pair, or when j+1 arrives out of
    order (15 + j*0.992) if j < n, else 40 ms after j-1 arrived; it takes
    15.192 (no gap block yet) or 15.208 (the out-of-order one) back.  T3 expires
    one RTO later and the retransmission arrives 15.992 after that.
Assumptions (where the TOML comment is silent):
  * All messages of a burst are written at the burst start (the simulator's
    plan gives them one offset), so the MTT is counted from the burst start,
    as in Fig. 2's timeline (148.184 for the 2nd of four).
  * One RTT sample a burst, on packet 1 (every packet of a burst leaves the
    sender at the burst start, before any SACK is back): in a loss-free burst
    32.176 (at-once SACK of packet 2) or, for a burst of one, 71.184 (delayed
    SACK).  No sample from the handshake (the receiver initiates, so the
    sender times nothing before the first DATA).
  * RFC 6298: first sample R gives SRTT = R, RTTVAR = R/2; then
    RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, SRTT = 7/8 SRTT + 1/8 R;
    RTO = SRTT + 4 RTTVAR clamped to [100, 400]; no clock granularity.
  * The RTO a T3 uses comes from the loss-free samples of bursts 1..b-1 and,
    for j >= 2, also from the loss burst's own sample, since the SACK that
    restarts T3 acknowledges packet 1 too (or came after the one that did),
    and the RTT is measured before T3 is restarted (as brisk-proto's
    retransmission_queue.rs does): 32.176 for j >= 3, and for j = 2 the
    restarting SACK's own arrival time (32.192 out of order, or 71.184
    delayed when n = 2).  For j = 1 packet 1 is the lost one: no sample.
    --history-only leaves the loss burst's sample out (the brief's literal
    reading); it does not reproduce the TOML's 135.49 / 2.77.
  * The recovery ends the run's interest: a recovery past 200 ms is not
    shortened by the next burst's SACKs (the model ignores the next burst).
  * Each loss position of each measured burst weighs the same: a set's
    statistic is the mean over every (replication, burst, j) of its 40
    replications.  --per-replication instead averages the 40 replications'
    own means, as the lab's mean:standard does (figures.rs point_mean).
  * --first-sack (RFC 9260 5.1): the association's first DATA packet is
    SACKed at once, so burst 1's sample is 0.992 + 15 + 15.192 = 31.184 for
    any burst size; the pairing restarts after it (packet 1 alone, then (2,3),
    ...), which only moves SACKs of burst 1 that take no sample.  Later bursts
    are unchanged (each starts its pairing afresh: a burst of odd size ends
    with a delayed SACK 40 ms after its last packet, long before the next).
The standard error is the standard deviation, over many independent sets of
40 replications, of the set's mean (Monte Carlo over the burst-size draws).

Run: python3 experiments/models/seed000_fig09_timeline.py [--first-sack] [--sets N] [--seed S]   (~90 s)
With 20,000 sets, seed 1: 135.54 +- 2.78 ms (seeds 2, 3: 135.52, 135.50;
the TOML states 135.49 +- 2.77); with --first-sack 128.84 +- 0.89 ms.
"""
import argparse
import random
import statistics

PKT, SACK, SACK_GAP, OWD, DELAY = 0.992, 0.192, 0.208, 15.0, 40.0
RTO_INIT, RTO_MIN, RTO_MAX = 200.0, 100.0, 400.0
BURSTS, WARMUP, REPS, THRESH = 12, 2, 40, 4
RETX = PKT + OWD  # 15.992: a retransmission on the link and across


def sample(n, first_burst, first_sack):
    """The RTT sample of packet 1 of a loss-free burst of n."""
    if first_burst and first_sack:
        return PKT + OWD + OWD + SACK                   # 31.184
    if n == 1:
        return PKT + OWD + DELAY + OWD + SACK           # 71.184
    return 2 * PKT + OWD + OWD + SACK                   # 32.176


class Rto:
    """RFC 6298's estimator, clamped to RTO.Min and RTO.Max."""

    def __init__(self, srtt=None, rttvar=None):
        self.srtt, self.rttvar = srtt, rttvar

    def update(self, r):
        if self.srtt is None:
            self.srtt, self.rttvar = r, r / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - r)
            self.srtt = 0.875 * self.srtt + 0.125 * r

    def rto(self):
        if self.srtt is None:
            return RTO_INIT
        return min(RTO_MAX, max(RTO_MIN, self.srtt + 4 * self.rttvar))


def mtt(n, j, est, history_only=False):
    """MTT of message j (1-based) lost in a burst of n; est: RTO state
    after the earlier bursts."""
    if n - j >= THRESH:                     # fast retransmit, SACK of j+4
        return OWD + (j + 3) * PKT + OWD + SACK_GAP + RETX
    if j == 1:                              # T3 from the send
        restart = 0.0
    elif (j - 1) % 2 == 0:                  # j-1 closes a pair: at once
        restart = OWD + (j - 1) * PKT + OWD + SACK
    elif j < n:                             # j+1 arrives out of order
        restart = OWD + j * PKT + OWD + SACK_GAP
    else:                                   # j-1's SACK delayed
        restart = OWD + (j - 1) * PKT + DELAY + OWD + SACK
    rto = Rto(est.srtt, est.rttvar)
    if j >= 2 and not history_only:         # this burst's sample, packet 1
        rto.update(restart if j == 2 else 2 * PKT + OWD + OWD + SACK)
    return restart + rto.rto() + RETX


def set_mean(rng, args):
    """Mean MTT over the loss positions of one set of 40 replications."""
    total = count = 0
    rep_means = []
    for _ in range(REPS):
        est, rep = Rto(), []
        for b in range(BURSTS):
            n = rng.randint(1, 7)
            if b >= WARMUP:
                rep += [mtt(n, j, est, args.history_only) for j in range(1, n + 1)]
            est.update(sample(n, b == 0, args.first_sack))
        total, count = total + sum(rep), count + len(rep)
        rep_means.append(sum(rep) / len(rep))
    return statistics.fmean(rep_means) if args.per_replication else total / count


def main():
    p = argparse.ArgumentParser(description="Seed 000 Fig. 9 expected-timeline model")
    p.add_argument("--sets", type=int, default=20000, help="sets of 40 replications")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--first-sack", action="store_true",
                   help="RFC 9260 5.1: the association's first DATA is SACKed at once")
    p.add_argument("--history-only", action="store_true",
                   help="T3 uses only earlier bursts' samples (see docstring)")
    p.add_argument("--per-replication", action="store_true",
                   help="mean of the replications' means (see docstring)")
    args = p.parse_args()
    rng = random.Random(args.seed)
    means = [set_mean(rng, args) for _ in range(args.sets)]
    m, sd = statistics.fmean(means), statistics.stdev(means)
    print(f"mean {m:.2f} ms, SE {sd:.2f} ms (sd of the 40-replication mean; "
          f"Monte Carlo error of the mean {sd / len(means) ** 0.5:.3f} ms, "
          f"{args.sets} sets, seed {args.seed})")


if __name__ == "__main__":
    main()
