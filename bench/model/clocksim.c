/*
 * clocksim: trace-driven model of PostgreSQL's buffer replacement, to reason about
 * replacement rules before measuring the real server (not part of the series).
 *
 * This copy (bench/model/clocksim.c) extends /work/shared/tools/clocksim.c with a second
 * engine, selected by a wl= argument; without wl= the program is the original (same
 * interface, same output, byte for byte).  README.md beside this file has the results.
 *
 * ---- the wl= engine --------------------------------------------------------------------
 * Single-threaded: clients are interleaved by a virtual clock (each client's transaction
 * costs its references, a hit 1 and a miss mcost, divided by the client's share; mcost=1
 * makes the interleaving independent of the rule, so every rule sees the same trace).
 * Pins are not modelled, except the background writer's pin on the page it is writing.
 * No I/O timing, no OS cache, no WAL, no NUMA partitions (one partition = the pool).
 *
 * Workloads (wl=): zipf (point reads as in the original: root, internal, leaf, heap page;
 *   data= table size / pool, default 1.15), scanmix (zipf + scan clients over tables=
 *   tables of tfrac= pool, scanshare= of references), seq8 (nscan=8 scan clients over
 *   tables= partitions totalling total=1.5 pool, started spread over stagger x the table
 *   set, + point reads over a pdata=0.3 pool table with 10% of references; rings=1: one
 *   table read through BAS_BULKREAD rings), tpcb (accounts heap + pkey index at data=3.5,
 *   uniform aid; per transaction UPDATE accounts (leaf and heap dirtied), SELECT of the
 *   same row (tpsel=1), teller and branch pages dirtied, history append: a new page every
 *   160 rows, extended in use and dirty), write (tpcb at data=2 + a COPY client through a
 *   BAS_BULKWRITE ring (16MB, <= pool/8) extending a table that is truncated at 0.5 pool,
 *   + a VACUUM client through a BAS_VACUUM ring (256 buffers) walking the accounts heap
 *   and dirtying vdirty=0.3 of the pages), churn (zipf + nchurn=4 clients each creating a
 *   table of churnfrac=0.05 pool, filling it (extension, dirty), reading it once and
 *   dropping it; dropped buffers are "emptied").  A transaction is a point query, a tpcb
 *   transaction, or a group of group=16 pages of a scan/COPY/VACUUM/churn client.
 *   Rings: a relation > pool/4 is scanned through a ring (rings=1); a scan of the next
 *   relation, a new COPY and a new VACUUM pass get a new ring (a new strategy object).
 *   A BAS_BULKREAD ring rejects a dirty buffer (StrategyRejectBuffer); the others write it
 *   themselves (counted as ring writes, rwrites).
 * Dirty pages: wfrac= of point queries dirty their leaf and heap page; tpcb/COPY/VACUUM/
 *   churn as above.  A dirty victim of a normal allocation is a backend write (bwrites),
 *   unless the bgwriter cleaned it.  ckpt=N cleans every dirty buffer every N transactions.
 * Background writer (bgw=1, on by default for tpcb/write): every bgW=400 allocations a
 *   round, at most bgL=100 writes, bgmult=2 x the smoothed allocation rate as its target
 *   of reusable buffers, the stock density estimate and lap logic of BgBufferSync.  It
 *   writes bgwrate=1 page per allocation; the page being written is pinned meanwhile (an
 *   allocation that meets it skips it; the series' FIFO pushes it back to the tail).
 *   stock: scans ahead of the hand.  policy=14 bgw=1 (as the server): first the FIFO from
 *   its oldest entry, then ahead of the hand skipping pages on trial.  bgw=2 (v3 cursor):
 *   during a revolution first ahead of the hand from bglead=64 buffers past it, then the
 *   FIFO from bglead entries past its head; between revolutions only the FIFO.
 * Rules: policy=0 stock PG 18 (usage 0..5, +1 per default-strategy hit, ring hits raise
 *   only 0 to 1, new page 1, freelist of emptied buffers first (LIFO), rings reuse their
 *   buffer if usage <= 1, no bound).  policy=14 the series as built (freelist.c): SIEVE-
 *   clock with clock_sweep_min_trial qmin=0.02, bound T=64 with ClockSweepEndEarly (8
 *   before the bound: oldest trial page if unvisited, 6 hand buffers (clean unvisited,
 *   else first dirty unvisited), else the last clean candidate judged to stay = forced,
 *   then the next trial page used or not, then random buffers); ring pages arrive
 *   VISITED|RING_ONLY off trial; emptied buffers go on trial; new in-use pages (extension)
 *   arrive on trial visited.  v3 options on top of policy=14:
 *     empty=1   emptied buffers go to a LIFO stack taken before the FIFO
 *     ghost=1   ghosts (exact, last Gf x pool evictions each) of trial evictions (B1) and
 *               hand evictions (B2); a miss in B1 raises the trial target by gstep (up to
 *               qmax=0.5 pool), in B2 lowers it (down to qmin); gadm=1: a ghost hit arrives
 *               visited (on trial, so it is promoted when popped)
 *     ghost=3   as ghost=1, but as the server keeps them: one direct-mapped table of
 *               Gf x pool entries for both kinds, indexed by a hash of the page, where
 *               a newer eviction overwrites the entry of an older one
 *     freq=1    a 2-bit count 0..fmax=3 instead of the bit: a hit adds 1, the hand takes 1
 *               (victim at 0), a promotion takes pdec=1 (pdec=2: two)
 *     noprom=1  at the bound no promoted trial page is the forced victim (16 random looks
 *               first)
 *     ringeq=1  ring pages arrive unvisited and on trial (RING_ONLY kept for ring reuse)
 *     ringpin=1 a ring (strategy) hit raises the count 0 -> 1, as stock's does
 * Output: one line key=value: reads (misses), ext (extensions, not misses), miss/ktx,
 *   hit%, hot% (hit ratio of point / account references), adv/victim (buffer headers
 *   looked at per normal allocation; a ring reuse is not an allocation), tail, forced
 *   (share of allocations), bwrites/rwrites/bgwrites/ckwrites, promoted, ghit1/ghit2
 *   (ghost hits per allocation), qlen_avg, qtarget_avg, in_rev (share of allocations made
 *   during a revolution), scanmiss%.
 *
 * ---- the original engine (no wl=) --------------------------------------------------------
 *
 * Workload: zipfian point reads over a pgbench-like table: each query touches the btree
 * root, one internal page, one leaf and one heap page (rows permuted over pages).
 * Optional one-touch scan stream: a fraction of the query slots is replaced by one
 * reference to the next page of a sequential scan that cycles over TABLES tables of
 * TPAGES pages each (a table below 1/4 of shared_buffers gets no ring in PostgreSQL).
 *
 * Policies (presets; every knob can be overridden with key=value, see below):
 *   0 = stock (usage 0..5, new page gets 1)
 *   1 = one bit (new page gets it)
 *   2 = one bit + probation (demand-loaded page arrives without it)
 *   3 = 2 + bound of T chances (T defaults to 128)
 *   4 = two-bit count 0..3 + probation
 *   5 = stock count 0..5 + probation
 *   6 = ghost admission, one bit: a miss found in the ghost record arrives with its bit,
 *       any other miss arrives on probation
 *   7 = ghost admission, two-bit count 0..3 (ghost hit arrives with count ginit=1)
 *   8 = S3-FIFO on a clock, "ring" form: a shared ring of buffer ids (10% of the pool)
 *       holds the probationers (small FIFO); a ring slot's buffer is evicted when the
 *       ring comes round to it unless it was re-accessed, in which case it is promoted
 *       in place (the buffer leaves the ring, the ring takes a victim from the main hand).
 *       Ghost (0.9 N entries) of ring evictions; a ghost hit goes straight to main.
 *       Main: two-bit count, the main hand skips ring members.
 *   9 = S3-FIFO on a clock, "probation bit" form: one hand; a probationer (P bit) is
 *       evicted at the hand's first visit unless re-accessed (then P is cleared and its
 *       count reset to 0); ghost of probation evictions; ghost hit arrives in main.
 *  10 = SIEVE (reference only: needs an insertion-ordered list, not a fixed clock array)
 *  11 = epoch clock: per-buffer stamp of the last access in units of 1/K revolution of
 *       the hand; the hand takes a buffer idle for >= THETA epochs (probation: a new page
 *       is stamped old).  THETA = K ~ one bit + probation.
 *  12 = stock count 0..5 + ghost admission (ghost hit arrives with ginit=1)
 *  13 = SIEVE on a clock array ("SIEVE-clock"): one bit per buffer plus a FIFO of the
 *       buffer ids loaded since the last sweep (the pages on trial).  Phase 1: the clock
 *       hand makes one revolution over the buffers not on trial (bit clear -> victim, bit
 *       set -> clear it); phase 2: the FIFO is examined oldest first (bit clear -> victim,
 *       bit set -> promoted in place: leaves the FIFO, bit cleared); when the FIFO is empty
 *       (or shorter than qmin), phase 1 again.  Every victim's buffer takes the new page
 *       and joins the FIFO.  Knobs: bq=1 (at the bound in phase 1 take the oldest page on
 *       trial if it is unvisited), qmin= (fraction of the pool: floor of the FIFO, i.e. a
 *       minimum trial; the adaptivity guard), p2cap= (phase 2 ends after that many
 *       allocations, fraction of the pool), qmode=1 (a short FIFO borrows single victims
 *       from the hand instead of starting a revolution), ghost=/Gf=/gwhat=1 (a ghost hit
 *       is placed outside the FIFO, gq=1 inside with count ginit).
 *
 * Work is counted in hand ticks: every buffer header the allocation looks at (main hand
 * steps, ring/FIFO entries popped, skipped ring/FIFO members, the fallback at the bound).
 *
 * usage (legacy, positional): clocksim POOL ROWS S QUERIES POLICY [T] [SCANFRAC SCANPAGES]
 *   (as in the original: a positional T only applies to policy 3; one scan table)
 * usage (keywords, may follow positional args):
 *   pool= rows= | data= (data pages / pool, rows derived)  s= q= (query slots) policy=
 *   seed= warm= (slots not measured; default q/5)
 *   T= (bound: chances one allocation may spend, 0 = none)  best=1 (at the bound take the
 *   lowest-count buffer passed instead of the next one)
 *   cmax= init= (count at demand load)  ginit= (count at load when found in ghost)
 *   ghost=0|1|2 (none, exact FIFO of page ids, direct-mapped 16-bit fingerprints)
 *   G= / Gf= (ghost entries, absolute / as a fraction of the pool; default pool, 0.9 pool
 *   for 8/9)  gwhat=0|1 (record every eviction, or only pages evicted without a
 *   re-access since load / from probation or the FIFO)
 *   ring= (ring fraction, policy 8)  K= THETA= (policy 11)  bq= qmin= p2cap= qmode= gq=
 *   (policy 13, see above)
 *   scan= (fraction of query slots that are scan references) tables= tfrac= (table size as
 *   a fraction of the pool)  scanpages= (total, legacy)
 *   shift= (every that many query slots the popularity ranks rotate by shiftby * rows,
 *   default 1/3: the hot set moves to other rows and pages; tests how fast a rule adapts)
 * Output: one line of key=value: hit% (all refs), hot% (non-scan refs), adv/victim
 * (hand ticks, incl. ring checks and skips, per eviction after warm-up), tail (most ticks
 * of one eviction after warm-up), bounded (allocations that hit the bound), gadmit (share
 * of allocations that were ghost hits), newvict (share of victims never re-accessed since
 * load), and for 13 the FIFO's mean length, the share of allocations made while it was
 * shorter than 1% of the pool, and the share made in phase 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <stdint.h>

static uint64_t rs = 88172645463325252ULL;
static inline uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static inline double urand(void) { return (rnd() >> 11) * (1.0 / 9007199254740992.0); }

enum { M_CLOCK, M_PBIT, M_RING, M_SIEVE, M_EPOCH, M_SRING };
#define F_PROB 1				/* probation bit (PBIT) / ring member (RING) */
#define F_REF  2				/* re-accessed since load */

/* configuration */
static int pool, policy, mode = M_CLOCK;
static int cmax = 5, init_cnt = 1, ginit = 1, T = 0, bound_best = 0;
static int ghost_kind = 0, gwhat = 0;
static long G = -1;
static double ringfrac = 0.10;
static long K = 8, THETA = 8;

/* state */
static int *where, *owner;
static unsigned char *cnt, *flag;
static long *stamp;				/* M_EPOCH */
static int *prv, *nxt, lhead = -1, ltail = -1, lhand = -1;	/* M_SIEVE list */
static int *ring; static long rlen = 0, rsize = 0, rpos = 0;	/* M_RING */
static long hand = 0, tick_total = 0, bounded = 0;
static int measuring = 0;		/* past warm-up: count bound events */
/* ghost */
static long *gstamp; static uint16_t *gtab; static long gserial = 0;

static inline uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL; return x ^ (x >> 31);
}
static void ghost_put(long page)
{
	if (ghost_kind == 1) gstamp[page] = ++gserial;
	else if (ghost_kind == 2)
	{
		uint64_t h = mix(page); uint16_t fp = (uint16_t) (h >> 48); if (!fp) fp = 1;
		gtab[(h & 0xffffffffULL) % G] = fp;
	}
}
static int ghost_take(long page)
{
	if (ghost_kind == 1)
	{
		if (gstamp[page] && gserial - gstamp[page] < G) { gstamp[page] = 0; return 1; }
	}
	else if (ghost_kind == 2)
	{
		uint64_t h = mix(page); uint16_t fp = (uint16_t) (h >> 48); if (!fp) fp = 1;
		long slot = (h & 0xffffffffULL) % G;
		if (gtab[slot] == fp) { gtab[slot] = 0; return 1; }
	}
	return 0;
}

static inline long epoch_now(void) { return tick_total * K / pool; }

/* the main clock hand: returns a victim buffer, adds its ticks to *t */
static int sweep(long *t)
{
	long chances = 0; int best = -1; long bestv = 1L << 60;
	for (;;)
	{
		int b = hand; hand = (hand + 1 == pool) ? 0 : hand + 1; (*t)++; tick_total++;
		if (mode == M_RING && (flag[b] & F_PROB)) continue;	/* ring members are not main's */
		if (mode == M_EPOCH)
		{
			long age = epoch_now() - stamp[b];
			if (age >= THETA) return b;
			if (T && chances >= T) { bounded += measuring; return (bound_best && best >= 0) ? best : b; }
			chances++;
			if (bound_best && -age < bestv) { bestv = -age; best = b; }
			continue;
		}
		if (cnt[b] == 0) return b;
		if (T && chances >= T) { bounded += measuring; return (bound_best && best >= 0) ? best : b; }
		if (mode == M_PBIT && (flag[b] & F_PROB)) { flag[b] &= ~F_PROB; cnt[b] = 0; }
		else cnt[b]--;
		chances++;
		if (bound_best && cnt[b] < bestv) { bestv = cnt[b]; best = b; }
	}
}

/* SIEVE: hand walks from the oldest towards the newest, wraps to the oldest */
static void l_unlink(int b)
{
	if (prv[b] >= 0) nxt[prv[b]] = nxt[b]; else lhead = nxt[b];
	if (nxt[b] >= 0) prv[nxt[b]] = prv[b]; else ltail = prv[b];
}
static void l_pushhead(int b)
{
	prv[b] = -1; nxt[b] = lhead; if (lhead >= 0) prv[lhead] = b; lhead = b; if (ltail < 0) ltail = b;
}
static int sieve_victim(long *t)
{
	long chances = 0; int o = lhand >= 0 ? lhand : ltail;
	for (;;)
	{
		(*t)++;
		if (cnt[o] == 0) break;
		if (T && chances >= T) { bounded += measuring; break; }
		cnt[o] = 0; chances++;
		o = prv[o]; if (o < 0) o = ltail;
	}
	lhand = prv[o];
	l_unlink(o);
	return o;
}

/*
 * M_SRING: SIEVE on a clock array.  SIEVE sweeps its objects in insertion order and inserts
 * new ones at the head, so after the hand wraps it first examines every old survivor once,
 * then the objects inserted since, oldest first, until it catches up with the head.  Here:
 * phase 1 = the clock hand makes one revolution over the buffers not in the queue (taking
 * one whose bit is clear, clearing the others); phase 2 = the queue (a FIFO of the buffer
 * ids loaded since) is examined oldest first: a buffer whose bit is clear is the victim,
 * one that was re-accessed leaves the queue with its bit cleared (promoted in place); when
 * the queue is empty, phase 1 again.  Every victim's buffer takes the new page and joins
 * the queue at its head.
 */
static int *qids; static long qhead = 0, qtail = 0, qlen = 0, main_left = 0; static int phase = 2;
static int bq = 0;				/* at the bound in phase 1, try the queue's oldest first */
static long qmin = 0;			/* phase 2 ends when the queue is shorter than this */
static int gq = 0;				/* a ghost hit joins the queue too (with count ginit) */
static int from_queue = 0;		/* the last victim came from the queue */
static long p2cap = 0, p2n = 0;	/* phase 2 ends after this many allocations (0 = no cap) */
static int qmode = 0;			/* 1: a short queue borrows single victims from the hand instead of starting phase 1 */
static int borrow = 0;
static int sring_victim(long *t)
{
	long chances = 0; int best = -1, bestv = 1 << 30;
	for (;;)
	{
		if (phase == 1)
		{
			int b = hand; hand = (hand + 1 == pool) ? 0 : hand + 1; (*t)++; tick_total++;
			if (--main_left <= 0) phase = 2;
			int queued = (flag[b] & F_PROB) != 0;	/* still on trial: not the main hand's */
			if (!queued && cnt[b] == 0) { from_queue = 0; if (borrow) { borrow = 0; phase = 2; } return b; }
			if (T && chances >= T)
			{
				bounded += measuring;
				if ((bq || queued) && qlen > 0)
				{
					/* bound reached: try the oldest page on trial instead */
					int f = qids[qtail]; qtail = (qtail + 1) % pool; qlen--; (*t)++; tick_total++;
					flag[f] &= ~F_PROB;
					if (cnt[f] == 0 || queued) { from_queue = 1; return f; }
					cnt[f]--;		/* re-accessed: promoted; fall back to the main hand's buffer */
				}
				from_queue = 0;
				if (borrow) { borrow = 0; phase = 2; }
				return (bound_best && best >= 0) ? best : b;
			}
			chances++;				/* passing a queued buffer spends the budget too */
			if (queued) continue;
			cnt[b]--;
			if (bound_best && cnt[b] < bestv) { bestv = cnt[b]; best = b; }
		}
		else
		{
			if (qmode == 1 && qlen > 0 && qlen < qmin && !borrow) { borrow = 1; phase = 1; main_left = pool; continue; }
			if (qlen == 0 || (qmode == 0 && qlen < qmin) || (p2cap && p2n >= p2cap)) { phase = 1; main_left = pool; p2n = 0; continue; }
			int b = qids[qtail]; qtail = (qtail + 1) % pool; qlen--; (*t)++; tick_total++;
			flag[b] &= ~F_PROB; from_queue = 1;
			if (cnt[b] == 0) { p2n++; return b; }
			if (T && chances >= T) { bounded += measuring; p2n++; return b; }
			cnt[b]--; chances++;
		}
	}
}
static void sring_push(int b)
{
	flag[b] |= F_PROB; qids[qhead] = b; qhead = (qhead + 1) % pool; qlen++;
}


/* ======================================================================================
 * Workload engine (wl=...): concurrent clients, rings, dirty pages, background writer,
 * table churn, tpcb-like mix; rules: policy=0 (stock PG 18) and policy=14 (the series'
 * SIEVE-clock as built in freelist.c, plus the v3 candidate options).  See the header.
 * ====================================================================================== */

#define W_TRIAL 1				/* BM_ON_TRIAL: has an entry in the FIFO */
#define W_RING  2				/* BM_RING_ONLY */
#define W_DIRTY 4				/* BM_DIRTY */
#define W_FREE  8				/* on the stock freelist / the v3 empty stack */

enum { C_POINT, C_SCAN, C_TPCB, C_COPY, C_VACUUM, C_CHURN };
enum { S_NONE, S_BULKREAD, S_VACUUM, S_BULKWRITE };

typedef struct { long base, npages, cap; } WRel;
typedef struct
{
	int kind; double weight, vt;
	int nrel, *rels, cur; long pos;	/* scans: relation list, current relation, page */
	int strat, rsize, rcur, *ring;	/* buffer ring (S_*) */
	int churn_phase;			/* churn: 0 fill, 1 read back */
	double dprob;				/* vacuum: share of pages it dirties */
} WClient;

/* configuration */
static int w_policy = 0;		/* 0 stock, 14 series */
static int o_fmax = 3, o_ringpin = 0;
static int o_empty = 0, o_ghost = 0, o_gadm = 1, o_freq = 0, o_noprom = 0, o_ringeq = 0, o_pdec = 1;
static int o_bgw = 0;			/* 0 none, 1 the rule's own bgwriter (stock / series), 2 v3 cursor */
static int w_T = 64;
static double o_qmin = 0.02, o_qmax = 0.5, o_Gf = 1.0, o_gstep = 1.0;
static long bg_W = 400, bg_L = 100, bg_lead = 64; static double bg_mult = 2.0, bg_wrate = 1.0;
static double mcost = 1.0;
static long ckpt = 0;

/* state */
static int *wowner; static unsigned char *wcnt, *wfl; static int *wpos_where;
static long whandpos = 0;		/* hand position, never wraps (buffer = whandpos % pool) */
static int rev_active = 0; static long rev_left = 0;
static int *wq; static long wqh = 0, wqt = 0;	/* FIFO: absolute positions, slot = pos % pool */
#define WQLEN (wqt - wqh)
static int *estk; static long estk_n = 0;	/* stock freelist / v3 empty stack (LIFO) */
static double qtarget;			/* v3: trial target (buffers) */
static long qmin_b, qmax_b;
static long *g1, *g2; static long g1s = 0, g2s = 0, Gw = 0;	/* ghosts (exact, stamps) */
static int bg_pinned = -1;
static long advw = 0; static int forcedw = 0, src_trial = 0, src_hand = 0;
/* counters */
static long m_allocs, m_adv, m_tail, m_forced, m_bwrites, m_rwrites, m_bgwrites, m_ckwrites, m_reads, m_ext,
	m_promoted, m_ghit1, m_ghit2, m_revallocs, m_ringreuse, m_empty_taken;
static double m_qlen, m_qtarget;
static int wmeasure = 0;

static inline void wq_push(int b) { wfl[b] |= W_TRIAL; wq[wqt % pool] = b; wqt++; }
static inline int wq_pop(void) { int b = wq[wqh % pool]; wqh++; return b; }
static inline int w_hand_next(void)
{
	int b = (int) (whandpos % pool); whandpos++;
	if (rev_active && --rev_left <= 0) rev_active = 0;
	return b;
}
static inline void start_rev(void) { if (!rev_active) { rev_active = 1; rev_left = pool; } }

static long *gdm, *gdm_stamp; static long gdm_n = 0, gdm_clock = 0;	/* ghost=3..5: direct-mapped, page*2 + kind + 1 */
static double o_gdmf = 0;		/* ghost=4, 5: table size in pools (default Gf, ghost=5: 2 Gf) */
static inline long gdm_slot(long page, int kind)
{
	uint64_t h = ((uint64_t) page * 0x9E3779B97F4A7C15ULL) >> 20;
	if (o_ghost == 5) return (long) (h % (gdm_n / 2)) + (kind ? gdm_n / 2 : 0);	/* a table per kind */
	return (long) (h % gdm_n);
}
static void g_put(long *g, long *gs, long page)
{
	if (o_ghost >= 3)
	{
		long i = gdm_slot(page, g == g2);
		gdm[i] = page * 2 + (g == g2) + 1; gdm_stamp[i] = ++gdm_clock; return;
	}
	g[page] = ++(*gs);
}
static int g_take(long *g, long gs, long page)
{
	if (o_ghost >= 3)
	{
		long i = gdm_slot(page, g == g2);
		/* ghost=4: only the last 2 Gw evictions of both kinds count, as the exact ones */
		if (gdm[i] == page * 2 + (g == g2) + 1 && (o_ghost != 4 || gdm_clock - gdm_stamp[i] < 2 * Gw)) { gdm[i] = 0; return 1; }
		return 0;
	}
	if (g[page] && gs - g[page] < Gw) { g[page] = 0; return 1; }
	return 0;
}

/* stock PG 18: freelist first, then the clock (usage count 0..5), no bound */
static int stock_alloc(void)
{
	while (estk_n > 0)
	{
		int b = estk[--estk_n]; advw++;
		if ((wfl[b] & W_FREE) && wowner[b] < 0) { wfl[b] &= ~W_FREE; m_empty_taken += wmeasure; return b; }
	}
	for (long spins = 0;; spins++)
	{
		int b = w_hand_next(); advw++;
		if (b == bg_pinned) continue;
		if (wcnt[b] == 0) { wfl[b] &= ~W_FREE; return b; }
		wcnt[b]--;
	}
}

/* series: promote a page that passed its trial */
static inline void promote(int b)
{
	wfl[b] &= ~W_TRIAL;
	if (o_freq) wcnt[b] = (unsigned char) (wcnt[b] > o_pdec ? wcnt[b] - o_pdec : 0);
	else wcnt[b] = 0;
	m_promoted += wmeasure;
}

/* series: ClockSweepEndEarly */
static int v3_end_early(int cand)
{
	int dirty = -1;
	if (WQLEN > 0)
	{
		int b = wq_pop(); advw++;
		if (b == bg_pinned && wcnt[b] == 0) wq_push(b);
		else if (wcnt[b] == 0) { wfl[b] &= ~W_TRIAL; src_trial = 1; return b; }
		else { promote(b); if (!(wfl[b] & W_DIRTY) && !o_noprom) cand = b; }
	}
	for (int i = 0; i < 6 && advw < w_T - 1; i++)
	{
		int b = w_hand_next(); advw++;
		if ((wfl[b] & W_TRIAL) || b == bg_pinned) continue;
		if (wcnt[b] == 0)
		{
			if (!(wfl[b] & W_DIRTY)) { src_hand = 1; return b; }
			if (dirty < 0) dirty = b;
		}
		else { wcnt[b]--; if (!(wfl[b] & W_DIRTY)) cand = b; }
	}
	if (dirty >= 0) { advw++; src_hand = 1; return dirty; }
	forcedw = 1;
	if (cand >= 0 && !(wfl[cand] & W_TRIAL)) { advw++; return cand; }
	/* the server then takes turns: the next page on trial, used or not (unless noprom), random buffers */
	if (!o_noprom && WQLEN > 0)
	{
		int b = wq_pop(); advw++;
		if (b != bg_pinned) { forcedw = wcnt[b] != 0; wfl[b] &= ~W_TRIAL; src_trial = wcnt[b] == 0; return b; }
		wq_push(b);
	}
	int rdirty = -1;
	for (int k = 0; k < 16 + pool; k++)
	{
		int r = (k < 16) ? (int) (rnd() % pool) : (k - 16); advw++;
		if (k == 16 && o_noprom && WQLEN > 0)
		{
			/* noprom: sixteen random looks first, then the oldest page on trial, used or not */
			int b = wq_pop();
			if (b != bg_pinned) { forcedw = wcnt[b] != 0; wfl[b] &= ~W_TRIAL; src_trial = wcnt[b] == 0; return b; }
			wq_push(b);
		}
		if ((wfl[r] & W_TRIAL) || r == bg_pinned) continue;
		if (!(wfl[r] & W_DIRTY)) return r;
		if (rdirty < 0) rdirty = r;
		if (k == 15 && rdirty >= 0) return rdirty;
	}
	return rdirty >= 0 ? rdirty : (int) (rnd() % pool);
}

/* series: ClockSweepGetBuffer (+ v3 options) */
static int v3_alloc(void)
{
	int cand = -1, take_trial = 0; long trial_misses = 0, hand_misses = 0;
	src_trial = src_hand = 0;
	if (o_empty)
		while (estk_n > 0)
		{
			int b = estk[--estk_n]; advw++;
			if ((wfl[b] & W_FREE) && wowner[b] < 0) { wfl[b] &= ~W_FREE; m_empty_taken += wmeasure; return b; }
		}
	for (;;)
	{
		if (advw + 8 >= w_T) return v3_end_early(cand);
		if (!rev_active || take_trial)
		{
			long ql = WQLEN;
			if ((!take_trial && ql < (long) qtarget) || ql == 0) { take_trial = 0; start_rev(); continue; }
			int b = wq_pop(); advw++;
			if (b == bg_pinned && wcnt[b] == 0)
			{
				wq_push(b);		/* pinned (by the bgwriter's write): back to the tail */
				if (++trial_misses >= (ql > 1 ? ql : 1)) { trial_misses = 0; take_trial = 0; start_rev(); }
				continue;
			}
			if (wcnt[b] == 0) { wfl[b] &= ~W_TRIAL; src_trial = 1; return b; }
			promote(b);
			if (!(wfl[b] & W_DIRTY) && !o_noprom) cand = b;
			trial_misses = 0;
			continue;
		}
		int b = w_hand_next(); advw++;
		if (!(wfl[b] & W_TRIAL) && b != bg_pinned)
		{
			if (wcnt[b] == 0) { src_hand = 1; return b; }
			wcnt[b]--;
			if (!(wfl[b] & W_DIRTY)) cand = b;
			hand_misses = 0;
			continue;
		}
		if (++hand_misses >= pool) { hand_misses = 0; take_trial = 1; }
	}
}

/* ---------------- background writer (incremental: one write in flight, pinned) ---------------- */
static int bg_round = 0;		/* a round is under way */
static int bg_stage = 0;		/* 0 trial walk, 1 hand scan, 2 done */
static long bg_tpos = 0, bg_cleanpos = 0, bg_toscan = 0, bg_written = 0;
static double bg_reusable = 0, bg_upcoming = 0, bg_trial_target = 0, bg_trial_reusable = 0;
static double bg_smoothed_alloc = 0, bg_density = 1.0, bg_credit = 0;
static long bg_prev_hand = 0, bg_allocs = 0;
static int bg_first = 1;
static int bg_after0 = 2, bg_after1 = 2;

static inline int bg_reusable_buf(int b)
{
	return wcnt[b] == 0 && (w_policy == 0 || !(wfl[b] & W_TRIAL));
}

static void bg_start_round(void)
{
	long recent = bg_allocs; bg_allocs = 0;
	long delta = whandpos - bg_prev_hand; bg_prev_hand = whandpos;
	long bufs_to_lap;
	if (bg_first || bg_cleanpos < whandpos) { bg_cleanpos = whandpos; bufs_to_lap = pool; bg_first = 0; }
	else bufs_to_lap = pool - (bg_cleanpos - whandpos);
	if (bufs_to_lap < 0) bufs_to_lap = 0;
	if (delta > 0 && recent > 0) bg_density += ((double) delta / recent - bg_density) / 16;
	if (w_policy != 0 && bg_density < 1.0) bg_density = 1.0;
	double reusable_est = (double) (pool - bufs_to_lap) / (bg_density > 0 ? bg_density : 1);
	if (bg_smoothed_alloc <= recent) bg_smoothed_alloc = recent;
	else bg_smoothed_alloc += (recent - bg_smoothed_alloc) / 16;
	bg_upcoming = bg_smoothed_alloc * bg_mult;
	bg_trial_target = bg_upcoming;
	double min_scan = ceil(pool / 600.0);
	if (bg_upcoming < min_scan + reusable_est) bg_upcoming = min_scan + reusable_est;
	bg_toscan = bufs_to_lap; bg_reusable = reusable_est; bg_written = 0; bg_trial_reusable = 0;
	bg_tpos = wqh;
	if (o_bgw == 2)
	{
		/* v3: one budget of reusable buffers, from where the next victims come from */
		bg_reusable = 0; bg_upcoming = bg_smoothed_alloc * bg_mult;
		if (bg_cleanpos < whandpos + bg_lead) bg_cleanpos = whandpos + bg_lead;
		bg_toscan = rev_active ? rev_left - bg_lead : 0;
		if (bg_toscan < 0) bg_toscan = 0;
	}
	if (w_policy == 0) { bg_stage = 1; bg_after1 = 2; }
	else if (o_bgw == 1) { bg_stage = 0; bg_after0 = 1; bg_after1 = 2; }
	else if (rev_active) { bg_stage = 1; bg_after1 = 0; bg_after0 = 2; }
	else { bg_stage = 0; bg_after0 = 2; }
	bg_round = 1;
}

/* find the next buffer to write in this round, or -1 when the round is done */
static int bg_next(void)
{
	while (bg_round)
	{
		if (bg_written >= bg_L) break;
		if (bg_stage == 0)
		{
			/* the FIFO of pages on trial, from its oldest entry (v3: a lead ahead of it) */
			long lo = wqh + (o_bgw == 2 ? bg_lead : 0);
			if (bg_tpos < lo) bg_tpos = lo;
			int done = (o_bgw == 2) ? (bg_reusable >= bg_upcoming) : (bg_trial_reusable >= bg_trial_target);
			if (done || bg_tpos >= wqt)
			{
				if (o_bgw == 1) bg_upcoming -= bg_trial_reusable;	/* the series: the rest is the hand's */
				bg_stage = bg_after0;
				continue;
			}
			int b = wq[bg_tpos % pool]; bg_tpos++;
			if (wcnt[b] == 0 && b != bg_pinned)
			{
				bg_trial_reusable++; if (o_bgw == 2) bg_reusable++;
				if (wfl[b] & W_DIRTY) return b;
			}
			continue;
		}
		if (bg_stage == 1)
		{
			/* ahead of the clock hand (pages on trial are not the hand's) */
			if (bg_toscan <= 0 || bg_reusable >= bg_upcoming) { bg_stage = bg_after1; continue; }
			int b = (int) (bg_cleanpos % pool); bg_cleanpos++; bg_toscan--;
			if (bg_reusable_buf(b) && b != bg_pinned)
			{
				bg_reusable++;
				if (wfl[b] & W_DIRTY) return b;
			}
			continue;
		}
		break;
	}
	bg_round = 0;
	return -1;
}

/* called before every allocation that is not a ring reuse */
static void bg_tick(void)
{
	if (!o_bgw) return;
	bg_allocs++;
	if (bg_allocs >= bg_W && !bg_round) bg_start_round();
	bg_credit += bg_wrate;
	while (bg_credit >= 1.0)
	{
		bg_credit -= 1.0;
		if (bg_pinned >= 0)
		{
			if (wfl[bg_pinned] & W_DIRTY) { wfl[bg_pinned] &= ~W_DIRTY; m_bgwrites += wmeasure; }
			bg_pinned = -1;
		}
		if (!bg_round) { bg_credit = 0; break; }
		int b = bg_next();
		if (b < 0) { bg_credit = 0; break; }
		bg_pinned = b; bg_written++;
	}
}

/* ---------------- buffer-level operations ---------------- */
static long w_npages;

static void w_evict(int b, int ring_ctx)
{
	long old = wowner[b];
	if (old >= 0)
	{
		wpos_where[old] = -1;
		if (o_ghost && !ring_ctx && !(wfl[b] & W_RING))
		{
			if (src_trial) g_put(g1, &g1s, old);
			else if (src_hand) g_put(g2, &g2s, old);
		}
	}
	if (wfl[b] & W_DIRTY) { if (ring_ctx) m_rwrites += wmeasure; else m_bwrites += wmeasure; }
	wfl[b] &= ~(W_DIRTY | W_RING | W_FREE);
	wowner[b] = -1;
}

/* a normal (non-ring) allocation: returns the buffer, emptied */
static int w_alloc(void)
{
	bg_tick();
	advw = 0; forcedw = 0; src_trial = src_hand = 0;
	int in_rev = rev_active;
	int b = (w_policy == 0) ? stock_alloc() : v3_alloc();
	if (wmeasure)
	{
		m_allocs++; m_adv += advw; if (advw > m_tail) m_tail = advw; m_forced += forcedw;
		m_qlen += WQLEN; m_qtarget += qtarget; m_revallocs += in_rev;
	}
	if (b == bg_pinned) bg_pinned = -1;	/* cannot happen by construction, but be safe */
	w_evict(b, 0);
	return b;
}

/* place page p into buffer b: how = 0 demand read, 1 extension (in use), ring strategy strat */
static void w_place(int b, long p, int how, int strat)
{
	wowner[b] = (int) p; wpos_where[p] = b;
	wfl[b] &= ~(W_RING | W_FREE | W_DIRTY);
	if (w_policy == 0) { wcnt[b] = 1; return; }
	if (strat != S_NONE)
	{
		wfl[b] |= W_RING;
		if (o_ringeq) { wcnt[b] = 0; if (!(wfl[b] & W_TRIAL)) wq_push(b); }
		else wcnt[b] = 1;	/* BM_VISITED | BM_RING_ONLY, not on trial */
		return;
	}
	int arrive = (how == 1) ? 1 : 0;
	if (o_ghost && how == 0)
	{
		if (g_take(g1, g1s, p))
		{
			m_ghit1 += wmeasure; qtarget += o_gstep; if (qtarget > qmax_b) qtarget = qmax_b;
			if (o_gadm) arrive = 1;
		}
		else if (g_take(g2, g2s, p))
		{
			m_ghit2 += wmeasure; qtarget -= o_gstep; if (qtarget < qmin_b) qtarget = qmin_b;
			if (o_gadm) arrive = 1;
		}
	}
	wcnt[b] = (unsigned char) arrive;
	if (!(wfl[b] & W_TRIAL)) wq_push(b);
}

/* a buffer whose page was dropped / truncated */
static void w_empty(int b)
{
	wpos_where[wowner[b]] = -1; wowner[b] = -1;
	wfl[b] &= ~(W_DIRTY | W_RING);
	wcnt[b] = 0;
	if (w_policy == 0 || o_empty) { if (!(wfl[b] & W_FREE)) { wfl[b] |= W_FREE; estk[estk_n++] = b; } }
	else if (!(wfl[b] & W_TRIAL)) wq_push(b);	/* the series: InvalidateBuffer puts it on trial */
}

/* hit on a resident page */
static inline void w_hit(int b, int strat)
{
	if (w_policy == 0)
	{
		if (strat == S_NONE) { if (wcnt[b] < 5) wcnt[b]++; }
		else if (wcnt[b] == 0) wcnt[b] = 1;
		return;
	}
	if (strat != S_NONE)
	{
		/* ring pins do not count as uses; ringpin=1: they do as stock's do (0 -> 1) */
		if (o_ringpin && wcnt[b] == 0) wcnt[b] = 1;
		return;
	}
	wfl[b] &= ~W_RING;
	int cm = o_freq ? o_fmax : 1;
	if (wcnt[b] < cm) wcnt[b]++;
}

/* a ring's buffer for a miss (GetBufferFromRing + AddBufferToRing) */
static int w_ring_get(WClient *c)
{
	if (++c->rcur >= c->rsize) c->rcur = 0;
	int b = c->ring[c->rcur];
	if (b >= 0)
	{
		int ok = (w_policy == 0) ? (wcnt[b] <= 1 && b != bg_pinned) : ((wfl[b] & W_RING) && b != bg_pinned);
		if (ok && (wfl[b] & W_DIRTY) && c->strat == S_BULKREAD) ok = 0;	/* StrategyRejectBuffer */
		if (ok)
		{
			src_trial = src_hand = 0;
			w_evict(b, 1);
			m_ringreuse += wmeasure;
			return b;
		}
	}
	b = w_alloc();
	c->ring[c->rcur] = b;
	return b;
}

/* reference page p; returns 1 on a miss that read the page */
static long w_scanrefs, w_scanmiss;
static long w_hits, w_miss, w_hothits, w_hotrefs, w_tx, w_refs;
static int w_ref(long p, WClient *c, int dirty, int ext, int hot)
{
	int strat = c ? c->strat : S_NONE;
	int b = wpos_where[p], miss = 0;
	if (wmeasure) { w_refs++; if (hot) w_hotrefs++; }
	if (b >= 0)
	{
		w_hit(b, strat);
		if (wmeasure) { w_hits++; if (hot) w_hothits++; }
	}
	else
	{
		b = (strat != S_NONE) ? w_ring_get(c) : w_alloc();
		w_place(b, p, ext ? 1 : 0, strat);
		if (ext) m_ext += wmeasure;
		else { m_reads += wmeasure; miss = 1; if (wmeasure) w_miss++; }
	}
	if (dirty) wfl[b] |= W_DIRTY;
	return miss;
}

static void w_drop(WRel *r)
{
	for (long i = 0; i < r->npages; i++)
	{
		long p = r->base + i; int b = wpos_where[p];
		if (b >= 0) w_empty(b);
		if (g1) { g1[p] = 0; g2[p] = 0; }
	}
	r->npages = 0;
}

static void wl_usage(void)
{
	fprintf(stderr, "see the header of clocksim.c for wl= keys\n");
	exit(2);
}

static int wl_main(int argc, char **argv)
{
	const char *wl = "zipf";
	long q = 2000000, warm = -1; uint64_t seed = 0;
	double data = 1.15, s = 1.1, scanshare = -1, wfrac = 0, pdata = 0.3, tfrac = -1, total = -1;
	long nscan = -1, ntables = -1, group = 16; int rings = 0; double stagger = 1.0;
	double copyshare = 0.1, vacshare = 0.1, vdirty = 0.3, churnshare = 0.2, churnfrac = 0.05; long nchurn = 4; int tpsel = 1;
	int bgw_set = 0;
	w_policy = 0;
	for (int i = 1; i < argc; i++)
	{
		char *eq = strchr(argv[i], '='); if (!eq) wl_usage();
		*eq = 0; const char *k = argv[i]; const char *v = eq + 1;
		if (!strcmp(k, "wl")) wl = v;
		else if (!strcmp(k, "pool")) pool = atoi(v);
		else if (!strcmp(k, "q")) q = atol(v);
		else if (!strcmp(k, "warm")) warm = atol(v);
		else if (!strcmp(k, "seed")) seed = strtoull(v, NULL, 10);
		else if (!strcmp(k, "policy")) w_policy = atoi(v);
		else if (!strcmp(k, "data")) data = atof(v);
		else if (!strcmp(k, "s")) s = atof(v);
		else if (!strcmp(k, "T")) w_T = atoi(v);
		else if (!strcmp(k, "qmin")) o_qmin = atof(v);
		else if (!strcmp(k, "qmax")) o_qmax = atof(v);
		else if (!strcmp(k, "empty")) o_empty = atoi(v);
		else if (!strcmp(k, "ghost")) o_ghost = atoi(v);
		else if (!strcmp(k, "gadm")) o_gadm = atoi(v);
		else if (!strcmp(k, "Gf")) o_Gf = atof(v);
		else if (!strcmp(k, "gdmf")) o_gdmf = atof(v);
		else if (!strcmp(k, "gstep")) o_gstep = atof(v);
		else if (!strcmp(k, "freq")) o_freq = atoi(v);
		else if (!strcmp(k, "pdec")) o_pdec = atoi(v);
		else if (!strcmp(k, "fmax")) o_fmax = atoi(v);
		else if (!strcmp(k, "ringpin")) o_ringpin = atoi(v);
		else if (!strcmp(k, "noprom")) o_noprom = atoi(v);
		else if (!strcmp(k, "ringeq")) o_ringeq = atoi(v);
		else if (!strcmp(k, "bgw")) { o_bgw = atoi(v); bgw_set = 1; }
		else if (!strcmp(k, "bgW")) bg_W = atol(v);
		else if (!strcmp(k, "bgL")) bg_L = atol(v);
		else if (!strcmp(k, "bgmult")) bg_mult = atof(v);
		else if (!strcmp(k, "bgwrate")) bg_wrate = atof(v);
		else if (!strcmp(k, "bglead")) bg_lead = atol(v);
		else if (!strcmp(k, "ckpt")) ckpt = atol(v);
		else if (!strcmp(k, "mcost")) mcost = atof(v);
		else if (!strcmp(k, "scanshare")) scanshare = atof(v);
		else if (!strcmp(k, "nscan")) nscan = atol(v);
		else if (!strcmp(k, "tables")) ntables = atol(v);
		else if (!strcmp(k, "tfrac")) tfrac = atof(v);
		else if (!strcmp(k, "total")) total = atof(v);
		else if (!strcmp(k, "rings")) rings = atoi(v);
		else if (!strcmp(k, "stagger")) stagger = atof(v);
		else if (!strcmp(k, "group")) group = atol(v);
		else if (!strcmp(k, "pdata")) pdata = atof(v);
		else if (!strcmp(k, "wfrac")) wfrac = atof(v);
		else if (!strcmp(k, "copyshare")) copyshare = atof(v);
		else if (!strcmp(k, "vacshare")) vacshare = atof(v);
		else if (!strcmp(k, "vdirty")) vdirty = atof(v);
		else if (!strcmp(k, "churnshare")) churnshare = atof(v);
		else if (!strcmp(k, "churnfrac")) churnfrac = atof(v);
		else if (!strcmp(k, "nchurn")) nchurn = atol(v);
		else if (!strcmp(k, "tpsel")) tpsel = atoi(v);
		else { fprintf(stderr, "unknown key %s\n", k); wl_usage(); }
	}
	if (pool <= 0) wl_usage();
	if (seed) rs = mix(seed) | 1;
	if (w_policy != 0 && w_policy != 14) { fprintf(stderr, "wl= supports policy=0 and policy=14\n"); exit(2); }

	/* workload presets */
	int has_point = 0, has_tpcb = 0, has_copy = 0, has_vac = 0, has_churn = 0;
	double pointshare = 1.0;
	if (!strcmp(wl, "zipf")) { has_point = 1; }
	else if (!strcmp(wl, "scanmix"))
	{
		has_point = 1; if (scanshare < 0) scanshare = 0.5; if (nscan < 0) nscan = 1;
		if (ntables < 0) ntables = 5;
		if (tfrac < 0) tfrac = 0.2;
	}
	else if (!strcmp(wl, "seq8"))
	{
		has_point = 1; data = pdata; if (scanshare < 0) scanshare = 0.9; if (nscan < 0) nscan = 8;
		if (total < 0) total = 1.5;
		if (rings) { ntables = 1; tfrac = total; }
		else { if (ntables < 0) ntables = 12; tfrac = total / ntables; }
	}
	else if (!strcmp(wl, "tpcb")) { has_tpcb = 1; if (data == 1.15) data = 3.5; }
	else if (!strcmp(wl, "write"))
	{
		has_tpcb = 1; has_copy = 1; has_vac = 1; if (data == 1.15) data = 2.0;
	}
	else if (!strcmp(wl, "churn")) { has_point = 1; has_churn = 1; }
	else { fprintf(stderr, "unknown wl %s\n", wl); exit(2); }
	if ((has_tpcb) && !bgw_set) o_bgw = 1;
	if (wfrac > 0 && !bgw_set) o_bgw = 1;
	if (o_bgw == 2 && w_policy == 0) o_bgw = 1;
	if (scanshare < 0) scanshare = 0;
	if (nscan < 0) nscan = 0;

	/* the indexed table (point reads or tpcb accounts) */
	long rows_per_heap = 61, rows_per_leaf = 366;
	double target = data * pool;
	long rows = (long) (target / (1.0 / rows_per_heap + 1.0 / rows_per_leaf));
	for (;;)
	{
		long hp = rows / rows_per_heap + 1, lp = rows / rows_per_leaf + 1, in = lp / 300 + 1;
		if (1 + in + lp + hp <= target) break;
		rows -= 50;
	}
	long heap_pages = rows / rows_per_heap + 1, leaf_pages = rows / rows_per_leaf + 1;
	long internal = leaf_pages / 300 + 1;
	long base_leaf = 1 + internal, base_heap = base_leaf + leaf_pages, next_id = base_heap + heap_pages;
	/* tpcb: tellers, branches (+ an index page each), history */
	long scale = rows / 100000 > 0 ? rows / 100000 : 1;
	long tell_pages = (scale * 10 + 79) / 80, base_tell = next_id; next_id += tell_pages + 1;
	long base_branch = next_id; next_id += 2;
	long tx_est = q + 1;
	WRel hist = { next_id, 0, tx_est / 100 + 16 }; next_id += hist.cap;
	/* scan tables */
	int nrel = 0; WRel *rel = malloc(sizeof(WRel) * (ntables > 0 ? ntables : 1) + sizeof(WRel) * (nchurn + 2));
	long tpages = (tfrac > 0) ? (long) (tfrac * pool) : 0;
	int first_scan_rel = nrel;
	for (long t = 0; t < ntables && nscan > 0; t++) { rel[nrel].base = next_id; rel[nrel].npages = rel[nrel].cap = tpages; next_id += tpages; nrel++; }
	int nscanrel = nrel - first_scan_rel;
	long scantotal = tpages * nscanrel;
	/* COPY target (truncated when full) and churn tables */
	int copy_rel = -1, churn_rel0 = -1;
	if (has_copy) { copy_rel = nrel; rel[nrel].base = next_id; rel[nrel].npages = 0; rel[nrel].cap = pool / 2; next_id += pool / 2; nrel++; }
	long churn_pages = (long) (churnfrac * pool); if (churn_pages < 1) churn_pages = 1;
	if (has_churn) { churn_rel0 = nrel; for (long k = 0; k < nchurn; k++) { rel[nrel].base = next_id; rel[nrel].npages = 0; rel[nrel].cap = churn_pages; next_id += churn_pages; nrel++; } }
	w_npages = next_id;

	/* zipf */
	double *cdf = NULL; long *perm = NULL;
	if (has_point)
	{
		cdf = malloc(sizeof(double) * rows); perm = malloc(sizeof(long) * rows);
		double acc = 0;
		for (long i = 0; i < rows; i++) { acc += 1.0 / pow(i + 1, s); cdf[i] = acc; }
		for (long i = 0; i < rows; i++) cdf[i] /= acc;
		for (long i = 0; i < rows; i++) perm[i] = i;
		for (long i = rows - 1; i > 0; i--) { long j = rnd() % (i + 1); long t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
	}

	/* clients */
	WClient cl[64]; int ncl = 0;
	memset(cl, 0, sizeof(cl));
	int ringsz = 32 < pool / 8 ? 32 : pool / 8;
	double rest = 1.0;
	if (nscan > 0)
	{
		for (long i = 0; i < nscan; i++)
		{
			WClient *c = &cl[ncl++]; c->kind = C_SCAN; c->weight = scanshare / nscan;
			c->nrel = nscanrel; c->rels = malloc(sizeof(int) * nscanrel);
			for (int r = 0; r < nscanrel; r++) c->rels[r] = first_scan_rel + r;
			/* staggered: client i starts i/nscan of the way round the table set */
			long off = (long) (stagger * scantotal * i / nscan);
			c->cur = (int) (off / tpages); c->pos = off % tpages;
			c->strat = (rings && tpages > pool / 4) ? S_BULKREAD : S_NONE;
		}
		rest -= scanshare;
	}
	if (has_copy)
	{
		WClient *c = &cl[ncl++]; c->kind = C_COPY; c->weight = copyshare; c->strat = S_BULKWRITE;
		c->rsize = (16 * 1024 / 8) < pool / 8 ? 16 * 1024 / 8 : pool / 8; rest -= copyshare;
	}
	if (has_vac)
	{
		WClient *c = &cl[ncl++]; c->kind = C_VACUUM; c->weight = vacshare; c->strat = S_VACUUM;
		c->rsize = (2048 / 8) < pool / 8 ? 2048 / 8 : pool / 8; c->dprob = vdirty; rest -= vacshare;
	}
	if (has_churn)
	{
		for (long k = 0; k < nchurn; k++)
		{
			WClient *c = &cl[ncl++]; c->kind = C_CHURN; c->weight = churnshare / nchurn; c->cur = churn_rel0 + (int) k;
			c->pos = -(long) (churn_pages * 2 * k / nchurn);	/* staggered phases */
		}
		rest -= churnshare;
	}
	if (has_point) { WClient *c = &cl[ncl++]; c->kind = C_POINT; c->weight = rest; pointshare = rest; }
	if (has_tpcb) { WClient *c = &cl[ncl++]; c->kind = C_TPCB; c->weight = rest; }
	for (int i = 0; i < ncl; i++)
	{
		if (cl[i].strat != S_NONE)
		{
			if (!cl[i].rsize) cl[i].rsize = ringsz;
			cl[i].ring = malloc(sizeof(int) * cl[i].rsize);
			for (int r = 0; r < cl[i].rsize; r++) cl[i].ring[r] = -1;
			cl[i].rcur = -1;
		}
		if (cl[i].weight <= 0) { fprintf(stderr, "client %d has no share\n", i); exit(2); }
	}

	/* state */
	wowner = malloc(sizeof(int) * pool); wcnt = calloc(pool, 1); wfl = calloc(pool, 1);
	wpos_where = malloc(sizeof(int) * w_npages); wq = malloc(sizeof(int) * pool); estk = malloc(sizeof(int) * pool);
	for (long i = 0; i < w_npages; i++) wpos_where[i] = -1;
	for (int b = 0; b < pool; b++) wowner[b] = -1;
	qmin_b = (long) (o_qmin * pool); qmax_b = (long) (o_qmax * pool); qtarget = qmin_b;
	if (o_ghost) { g1 = calloc(w_npages, sizeof(long)); g2 = calloc(w_npages, sizeof(long)); Gw = (long) (o_Gf * pool); if (Gw < 1) Gw = 1; }
	if (o_ghost >= 3) { gdm_n = o_gdmf > 0 ? (long) (o_gdmf * pool) : (o_ghost == 5 ? 2 * Gw : Gw); if (gdm_n < 2) gdm_n = 2; gdm = calloc(gdm_n, sizeof(long)); gdm_stamp = calloc(gdm_n, sizeof(long)); }
	if (w_policy == 0)
	{
		/* stock: every buffer starts on the freelist */
		for (int b = pool - 1; b >= 0; b--) { wfl[b] |= W_FREE; estk[estk_n++] = b; }
	}
	else { rev_active = 1; rev_left = pool; }	/* the series: first revolution hands out the buffers */

	if (warm < 0) warm = q / 5;
	long hist_rows = 0;
	for (long tx = 0; tx < q; tx++)
	{
		wmeasure = tx >= warm;
		if (wmeasure) w_tx++;
		if (ckpt && tx > 0 && tx % ckpt == 0)
			for (int b = 0; b < pool; b++) if (wfl[b] & W_DIRTY) { wfl[b] &= ~W_DIRTY; m_ckwrites += wmeasure; }
		int ci = 0;
		for (int i = 1; i < ncl; i++) if (cl[i].vt < cl[ci].vt) ci = i;
		WClient *c = &cl[ci];
		double cost = 0;
		switch (c->kind)
		{
			case C_POINT:
			{
				double u = urand(); long lo = 0, hi = rows - 1;
				while (lo < hi) { long m = (lo + hi) / 2; if (cdf[m] < u) lo = m + 1; else hi = m; }
				long row = perm[lo];
				int wr = wfrac > 0 && urand() < wfrac;
				cost += 1 + (mcost - 1) * w_ref(0, NULL, 0, 0, 1);
				cost += 1 + (mcost - 1) * w_ref(1 + (row / rows_per_leaf) % internal, NULL, 0, 0, 1);
				cost += 1 + (mcost - 1) * w_ref(base_leaf + row / rows_per_leaf, NULL, wr, 0, 1);
				cost += 1 + (mcost - 1) * w_ref(base_heap + row / rows_per_heap, NULL, wr, 0, 1);
				break;
			}
			case C_TPCB:
			{
				long row = (long) (rnd() % rows);
				cost += 1 + (mcost - 1) * w_ref(0, NULL, 0, 0, 1);
				cost += 1 + (mcost - 1) * w_ref(1 + (row / rows_per_leaf) % internal, NULL, 0, 0, 1);
				cost += 1 + (mcost - 1) * w_ref(base_leaf + row / rows_per_leaf, NULL, 1, 0, 1);
				cost += 1 + (mcost - 1) * w_ref(base_heap + row / rows_per_heap, NULL, 1, 0, 1);
				if (tpsel)
				{
					/* SELECT abalance ... WHERE aid = :aid: the same leaf and heap page again */
					cost += 1 + (mcost - 1) * w_ref(0, NULL, 0, 0, 1);
					cost += 1 + (mcost - 1) * w_ref(1 + (row / rows_per_leaf) % internal, NULL, 0, 0, 1);
					cost += 1 + (mcost - 1) * w_ref(base_leaf + row / rows_per_leaf, NULL, 0, 0, 1);
					cost += 1 + (mcost - 1) * w_ref(base_heap + row / rows_per_heap, NULL, 0, 0, 1);
				}
				long tl = (long) (rnd() % (scale * 10));
				cost += 1 + (mcost - 1) * w_ref(base_tell + tell_pages, NULL, 0, 0, 0);	/* tellers index */
				cost += 1 + (mcost - 1) * w_ref(base_tell + tl / 80, NULL, 1, 0, 0);
				cost += 1 + (mcost - 1) * w_ref(base_branch + 1, NULL, 0, 0, 0);
				cost += 1 + (mcost - 1) * w_ref(base_branch, NULL, 1, 0, 0);
				/* history append: a new page every 160 rows */
				int ext = 0;
				if (hist_rows % 160 == 0 && hist.npages < hist.cap) { hist.npages++; ext = 1; }
				hist_rows++;
				long hp = hist.base + hist.npages - 1;
				cost += 1 + (mcost - 1) * w_ref(hp, NULL, 1, ext, 0);
				break;
			}
			case C_SCAN:
			{
				for (long g = 0; g < group; g++)
				{
					WRel *r = &rel[c->rels[c->cur]];
					{ int mm = w_ref(r->base + c->pos, c, 0, 0, 0); cost += 1 + (mcost - 1) * mm; if (wmeasure) { w_scanrefs++; w_scanmiss += mm; } }
					if (++c->pos >= r->npages)
					{
						/* the scan of this relation ends: the next one gets a new strategy (ring) */
						c->pos = 0; if (++c->cur >= c->nrel) c->cur = 0;
						if (c->ring) for (int k = 0; k < c->rsize; k++) c->ring[k] = -1;
					}
				}
				break;
			}
			case C_COPY:
			{
				WRel *r = &rel[copy_rel];
				for (long g = 0; g < group; g++)
				{
					if (r->npages >= r->cap)
					{
						/* TRUNCATE and start again, with a new COPY (a new ring) */
						w_drop(r);
						for (int k = 0; k < c->rsize; k++) c->ring[k] = -1;
					}
					long p = r->base + r->npages++;
					cost += 1 + (mcost - 1) * w_ref(p, c, 1, 1, 0);
				}
				break;
			}
			case C_VACUUM:
			{
				for (long g = 0; g < group; g++)
				{
					long p = base_heap + c->pos;
					int d = urand() < c->dprob;
					cost += 1 + (mcost - 1) * w_ref(p, c, d, 0, 0);
					if (++c->pos >= heap_pages) { c->pos = 0; for (int k = 0; k < c->rsize; k++) c->ring[k] = -1; }
				}
				break;
			}
			case C_CHURN:
			{
				WRel *r = &rel[c->cur];
				for (long g = 0; g < group; g++)
				{
					if (c->pos < 0) { c->pos++; cost += 1; continue; }	/* not started yet */
					if (c->churn_phase == 0)
					{
						/* CREATE + INSERT: extend, dirty */
						long p = r->base + r->npages++;
						cost += 1 + (mcost - 1) * w_ref(p, NULL, 1, 1, 0);
						if (r->npages >= r->cap) { c->churn_phase = 1; c->pos = 0; }
					}
					else
					{
						/* read it back once, then DROP */
						cost += 1 + (mcost - 1) * w_ref(r->base + c->pos, NULL, 0, 0, 0);
						if (++c->pos >= r->npages) { w_drop(r); c->churn_phase = 0; c->pos = 0; }
					}
				}
				break;
			}
		}
		c->vt += cost / c->weight;
	}

	long victims = m_allocs;
	printf("wl=%s policy=%d pool=%d data=%.3f empty=%d ghost=%d gadm=%d freq=%d noprom=%d ringeq=%d bgw=%d qmin=%.3f T=%d",
		   wl, w_policy, pool, data, o_empty, o_ghost, o_gadm, o_freq, o_noprom, o_ringeq, o_bgw, o_qmin, w_T);
	printf(" tx=%ld refs=%ld reads=%ld ext=%ld miss/ktx=%.3f hit%%=%.4f hot%%=%.4f adv/victim=%.3f tail=%ld forced=%.5f"
		   " bwrites=%ld rwrites=%ld bgwrites=%ld ckwrites=%ld allocs=%ld ringreuse=%ld promoted=%.4f ghit1=%.4f ghit2=%.4f"
		   " qlen_avg=%.0f qtarget_avg=%.0f in_rev=%.3f empty_taken=%ld pointshare=%.3f scanmiss%%=%.3f\n",
		   w_tx, w_refs, m_reads, m_ext, 1000.0 * m_reads / (w_tx ? w_tx : 1),
		   100.0 * w_hits / (w_refs ? w_refs : 1), 100.0 * w_hothits / (w_hotrefs ? w_hotrefs : 1),
		   victims ? (double) m_adv / victims : 0, m_tail, victims ? (double) m_forced / victims : 0,
		   m_bwrites, m_rwrites, m_bgwrites, m_ckwrites, m_allocs, m_ringreuse,
		   victims ? (double) m_promoted / victims : 0, victims ? (double) m_ghit1 / victims : 0,
		   victims ? (double) m_ghit2 / victims : 0,
		   victims ? m_qlen / victims : 0, victims ? m_qtarget / victims : 0,
		   victims ? (double) m_revallocs / victims : 0, m_empty_taken, pointshare,
		   w_scanrefs ? 100.0 * w_scanmiss / w_scanrefs : 0);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: clocksim POOL ROWS S QUERIES POLICY [T] [SCANFRAC SCANPAGES] [key=value ...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "wl=", 3)) return wl_main(argc, argv);
	long rows = 0, queries = 0, warm = -1, scanpages = 0, tables = 1, shift = 0, rankoff = 0;
	double s = 1.1, scanfrac = 0, data = 0, tfrac = 0, qmin_frac = 0, Gf = 0, shiftby = 1.0 / 3, p2cap_frac = 0;
	int Tset = 0, ginit_set = 0, G_set = 0, cmax_set = 0, init_set = 0, ghost_set = 0, gwhat_set = 0;
	int npos = 0, pos_T = -1; uint64_t seed = 0;
	policy = 0;
	/* first pass: positional args (legacy) */
	for (int i = 1; i < argc; i++)
	{
		if (strchr(argv[i], '=')) continue;
		switch (npos++)
		{
			case 0: pool = atoi(argv[i]); break;
			case 1: rows = atol(argv[i]); break;
			case 2: s = atof(argv[i]); break;
			case 3: queries = atol(argv[i]); break;
			case 4: policy = atoi(argv[i]); break;
			case 5: pos_T = atoi(argv[i]); break;
			case 6: scanfrac = atof(argv[i]); break;
			case 7: scanpages = atol(argv[i]); break;
			default: usage();
		}
	}
	for (int i = 1; i < argc; i++)
	{
		char *eq = strchr(argv[i], '='); if (!eq) continue;
		*eq = 0; const char *k = argv[i]; const char *v = eq + 1;
		if (!strcmp(k, "pool")) pool = atoi(v);
		else if (!strcmp(k, "rows")) rows = atol(v);
		else if (!strcmp(k, "data")) data = atof(v);
		else if (!strcmp(k, "s")) s = atof(v);
		else if (!strcmp(k, "q")) queries = atol(v);
		else if (!strcmp(k, "policy")) policy = atoi(v);
		else if (!strcmp(k, "seed")) seed = strtoull(v, NULL, 10);
		else if (!strcmp(k, "warm")) warm = atol(v);
		else if (!strcmp(k, "T")) { T = atoi(v); Tset = 1; }
		else if (!strcmp(k, "best")) bound_best = atoi(v);
		else if (!strcmp(k, "cmax")) { cmax = atoi(v); cmax_set = 1; }
		else if (!strcmp(k, "init")) { init_cnt = atoi(v); init_set = 1; }
		else if (!strcmp(k, "ginit")) { ginit = atoi(v); ginit_set = 1; }
		else if (!strcmp(k, "ghost")) { ghost_kind = atoi(v); ghost_set = 1; }
		else if (!strcmp(k, "G")) { G = atol(v); G_set = 1; }
		else if (!strcmp(k, "Gf")) { Gf = atof(v); G_set = 1; }
		else if (!strcmp(k, "gwhat")) { gwhat = atoi(v); gwhat_set = 1; }
		else if (!strcmp(k, "ring")) ringfrac = atof(v);
		else if (!strcmp(k, "bq")) bq = atoi(v);
		else if (!strcmp(k, "gq")) gq = atoi(v);
		else if (!strcmp(k, "qmin")) qmin_frac = atof(v);
		else if (!strcmp(k, "p2cap")) p2cap_frac = atof(v);
		else if (!strcmp(k, "qmode")) qmode = atoi(v);
		else if (!strcmp(k, "K")) K = atol(v);
		else if (!strcmp(k, "THETA")) THETA = atol(v);
		else if (!strcmp(k, "scan")) scanfrac = atof(v);
		else if (!strcmp(k, "tables")) tables = atol(v);
		else if (!strcmp(k, "tfrac")) tfrac = atof(v);
		else if (!strcmp(k, "scanpages")) scanpages = atol(v);
		else if (!strcmp(k, "shift")) shift = atol(v);
		else if (!strcmp(k, "shiftby")) shiftby = atof(v);
		else { fprintf(stderr, "unknown key %s\n", k); usage(); }
	}
	if (pool <= 0 || queries <= 0 || (rows <= 0 && data <= 0)) usage();
	if (seed) { rs = mix(seed) | 1; }

	/* policy presets (explicit keys win) */
	int p_cmax = 5, p_init = 1, p_ghost = 0, p_ginit = 1, p_gwhat = 0; double p_G = 1.0;
	switch (policy)
	{
		case 0: break;
		case 1: p_cmax = 1; break;
		case 2: p_cmax = 1; p_init = 0; break;
		case 3: p_cmax = 1; p_init = 0; if (!Tset) T = pos_T >= 0 ? pos_T : 128; break;
		case 4: p_cmax = 3; p_init = 0; break;
		case 5: p_cmax = 5; p_init = 0; break;
		case 6: p_cmax = 1; p_init = 0; p_ghost = 2; p_ginit = 1; break;
		case 7: p_cmax = 3; p_init = 0; p_ghost = 2; p_ginit = 1; break;
		case 8: mode = M_RING; p_cmax = 3; p_init = 0; p_ghost = 2; p_ginit = 0; p_gwhat = 1; p_G = 0.9; break;
		case 9: mode = M_PBIT; p_cmax = 3; p_init = 0; p_ghost = 2; p_ginit = 0; p_gwhat = 1; p_G = 0.9; break;
		case 10: mode = M_SIEVE; p_cmax = 1; p_init = 0; break;
		case 11: mode = M_EPOCH; p_cmax = 1; p_init = 0; break;
		case 12: p_cmax = 5; p_init = 0; p_ghost = 2; p_ginit = 1; break;
		case 13: mode = M_SRING; p_cmax = 1; p_init = 0; break;
		default: usage();
	}
	if (!cmax_set) cmax = p_cmax;
	if (!init_set) init_cnt = p_init;
	if (!ghost_set) ghost_kind = p_ghost;
	if (!ginit_set) ginit = p_ginit;
	if (!gwhat_set) gwhat = p_gwhat;
	if (!G_set) G = (long) (p_G * pool);
	if (Gf > 0) G = (long) (Gf * pool);
	if (ghost_kind && G <= 0) G = 1;

	long rows_per_heap = 61, rows_per_leaf = 366;
	if (rows <= 0)
	{
		/* largest row count whose root + internal + leaves + heap fit in data * pool pages */
		double target = data * pool;
		rows = (long) (target / (1.0 / rows_per_heap + 1.0 / rows_per_leaf));
		for (;;)
		{
			long hp = rows / rows_per_heap + 1, lp = rows / rows_per_leaf + 1, in = lp / 300 + 1;
			if (1 + in + lp + hp <= target) break;
			rows -= 50;
		}
	}
	long heap_pages = rows / rows_per_heap + 1, leaf_pages = rows / rows_per_leaf + 1;
	long internal = leaf_pages / 300 + 1;
	if (tfrac > 0) scanpages = (long) (tfrac * pool) * tables;
	/* page ids: 0 root, [1..internal] internal, then leaves, then heap, then scan tables */
	long base_leaf = 1 + internal, base_heap = base_leaf + leaf_pages, base_scan = base_heap + heap_pages;
	long npages = base_scan + scanpages;
	double *cdf = malloc(sizeof(double) * rows);
	long *perm = malloc(sizeof(long) * rows);
	double acc = 0;
	for (long i = 0; i < rows; i++) { acc += 1.0 / pow(i + 1, s); cdf[i] = acc; }
	for (long i = 0; i < rows; i++) cdf[i] /= acc;
	for (long i = 0; i < rows; i++) perm[i] = i;
	for (long i = rows - 1; i > 0; i--) { long j = rnd() % (i + 1); long t = perm[i]; perm[i] = perm[j]; perm[j] = t; }

	where = malloc(sizeof(int) * npages);
	owner = malloc(sizeof(int) * pool);
	cnt = calloc(pool, 1); flag = calloc(pool, 1);
	for (long i = 0; i < npages; i++) where[i] = -1;
	for (int b = 0; b < pool; b++) owner[b] = -1;
	if (mode == M_EPOCH) stamp = calloc(pool, sizeof(long));
	if (mode == M_SIEVE) { prv = malloc(sizeof(int) * pool); nxt = malloc(sizeof(int) * pool); }
	if (mode == M_SRING) { qids = malloc(sizeof(int) * pool); qmin = (long) (qmin_frac * pool); p2cap = (long) (p2cap_frac * pool); }
	if (mode == M_RING) { rsize = (long) (ringfrac * pool); if (rsize < 1) rsize = 1; ring = malloc(sizeof(int) * rsize); }
	if (ghost_kind == 1) gstamp = calloc(npages, sizeof(long));
	if (ghost_kind == 2) gtab = calloc(G, sizeof(uint16_t));

	long hits = 0, misses = 0, hhits = 0, hmisses = 0, ticks = 0, allocs = 0, tail = 0;
	long gadmit = 0, promoted = 0, ringevict = 0, newvict = 0; double qlensum = 0; long qsmall = 0, phase1n = 0;
	if (warm < 0) warm = queries / 5;
	long scanpos = 0, nscanref = 0, nref = 0;
	int used = 0;
	for (long q = 0; q < queries; q++)
	{
		long refs[4]; int nrefs = 0, isscan = 0;
		if (shift && q > 0 && q % shift == 0) rankoff = (rankoff + (long) (shiftby * rows)) % rows;	/* hot set moves */
		if (scanpages && urand() < scanfrac)
		{
			refs[nrefs++] = base_scan + (scanpos++ % scanpages);
			isscan = 1;
		}
		else
		{
			double u = urand(); long lo = 0, hi = rows - 1;
			while (lo < hi) { long m = (lo + hi) / 2; if (cdf[m] < u) lo = m + 1; else hi = m; }
			long row = perm[(lo + rankoff) % rows];
			refs[nrefs++] = 0;
			refs[nrefs++] = 1 + (row / rows_per_leaf) % internal;
			refs[nrefs++] = base_leaf + row / rows_per_leaf;
			refs[nrefs++] = base_heap + row / rows_per_heap;
		}
		int measure = q >= warm;
		measuring = measure;
		for (int r = 0; r < nrefs; r++)
		{
			long p = refs[r]; int b = where[p];
			if (measure) { nref++; if (isscan) nscanref++; }
			if (b >= 0)
			{
				if (measure) { hits++; if (!isscan) hhits++; }
				flag[b] |= F_REF;
				if (mode == M_EPOCH) stamp[b] = epoch_now();
				else if (cnt[b] < cmax) cnt[b]++;
				continue;
			}
			if (measure) { misses++; if (!isscan) hmisses++; }
			int ingh = ghost_kind ? ghost_take(p) : 0;
			if (ingh && measure) gadmit++;
			int newflag = 0, newcnt = ingh ? ginit : init_cnt;
			long t = 0;
			if (used < pool)
			{
				b = used++;
				if (mode == M_SIEVE) l_pushhead(b);
				if (mode == M_RING && !ingh && rlen < rsize) { ring[rlen++] = b; newflag = F_PROB; }
				if (mode == M_PBIT && !ingh) newflag = F_PROB;
				if (mode == M_SRING && !ingh) newflag = F_PROB;
			}
			else
			{
				int fromprob;
				if (mode == M_RING && !ingh)
				{
					b = ring[rpos]; t++; tick_total++;
					if (cnt[b] >= 1)
					{
						/* re-accessed while on probation: promote in place, clear its count */
						flag[b] &= ~F_PROB; cnt[b] = 0; if (measure) promoted++;
						int v = sweep(&t);
						ring[rpos] = v; b = v; fromprob = 0;
					}
					else { fromprob = 1; if (measure) ringevict++; }
					rpos = (rpos + 1) % rsize;
					newflag = F_PROB;
				}
				else if (mode == M_SRING)
				{
					b = sring_victim(&t);
					fromprob = from_queue && !(flag[b] & F_REF);
					if (!ingh || gq) newflag = F_PROB;
				}
				else if (mode == M_SIEVE)
				{
					b = sieve_victim(&t); fromprob = !(flag[b] & F_REF);
					l_pushhead(b);
				}
				else
				{
					b = sweep(&t);
					fromprob = (mode == M_PBIT) ? (flag[b] & F_PROB) != 0 :
						(mode == M_RING) ? 0 : !(flag[b] & F_REF);
					if (mode == M_PBIT && !ingh) newflag = F_PROB;
				}
				if (measure) { ticks += t; allocs++; if (t > tail) tail = t; qlensum += qlen; if (qlen < pool / 100) qsmall++; if (phase == 1) phase1n++; }
				long old = owner[b];
				if (measure && !(flag[b] & F_REF)) newvict++;
				where[old] = -1;
				if (ghost_kind && (gwhat == 0 || fromprob)) ghost_put(old);
			}
			owner[b] = (int) p; where[p] = b;
			cnt[b] = (unsigned char) (newcnt > cmax ? cmax : newcnt);
			flag[b] = (unsigned char) newflag;
			if (mode == M_SRING && (newflag & F_PROB)) { flag[b] = 0; sring_push(b); }
			if (mode == M_EPOCH) stamp[b] = (newcnt > 0) ? epoch_now() : epoch_now() - THETA;
		}
	}
	printf("policy=%d pool=%d pages=%ld data=%.3f cmax=%d init=%d T=%d best=%d ghost=%d G=%ld ginit=%d gwhat=%d",
		   policy, pool, npages, (double) base_scan / pool, cmax, init_cnt, T, bound_best, ghost_kind, G, ginit, gwhat);
	if (mode == M_RING) printf(" ring=%.3f", ringfrac);
	if (mode == M_EPOCH) printf(" K=%ld THETA=%ld", K, THETA);
	if (mode == M_SRING) printf(" bq=%d qmin=%ld p2cap=%ld", bq, qmin, p2cap);
	if (scanpages) printf(" scanshare=%.3f", (double) nscanref / nref);
	printf(" hit%%=%.4f hot%%=%.4f adv/victim=%.3f tail=%ld bounded=%ld gadmit=%.4f",
		   100.0 * hits / (hits + misses), 100.0 * hhits / (hhits + hmisses),
		   allocs ? (double) ticks / allocs : 0, tail, bounded, allocs ? (double) gadmit / allocs : 0);
	printf(" newvict=%.4f", allocs ? (double) newvict / allocs : 0);
	if (mode == M_RING) printf(" promoted=%.4f", allocs ? (double) promoted / allocs : 0);
	if (mode == M_SRING && allocs) printf(" qlen_avg=%.0f qlen<1%%=%.3f in_phase1=%.3f", qlensum / allocs, (double) qsmall / allocs, (double) phase1n / allocs);
	printf("\n");
	return 0;
}
