/*-------------------------------------------------------------------------
 *
 * numamem.c
 *	  A QEMU TCG plugin that counts a guest's data memory accesses by
 *	  (NUMA node of the vCPU making the access, NUMA node of the RAM
 *	  accessed), in windows that guest programs open and close, split by
 *	  labelled ranges of guest virtual addresses ("areas"), optionally
 *	  through a model of a last-level cache so that only DRAM traffic
 *	  (line fills and write-backs) is counted.
 *
 * Written for QEMU 7.2 as Debian 12 ships it (plugin API version 1) and for
 * the guests of vm/run-guest; vm/README.md ("Counting memory accesses")
 * documents the arguments and the file formats.  In short:
 *
 *	-plugin numamem.so,node_mb=1024:1024,vcpu_nodes=0:1,out=FILE[,summary=FILE]
 *		[,filter=FILE][,llc=MB:WAYS][,arm=marker|always][,apart=I:J...]
 *
 * apart= names vCPUs (by index) whose accesses are counted in rows of their
 * own, "bgN" for a vCPU on node N, so that a guest can run some processes
 * (a server's background processes, say) on a vCPU set aside for them and
 * tell their accesses from the others'.
 *
 * (QEMU splits -plugin arguments at commas, hence the ':' in lists.)
 *
 * Windows.  API version 1 gives a plugin no access to guest registers, so
 * a guest cannot pass values to us; it can only execute instructions we
 * recognise.  "xchg %bx,%bx" (66 87 db) opens a window and "xchg %cx,%cx"
 * (66 87 c9) closes it: both are no-ops that compilers do not emit.  At
 * each start the filter file is read again, because the addresses worth
 * watching (PostgreSQL's shared memory) are only known once the guest has
 * set them up.  At each stop the window's counts are appended to out= and
 * summary=, so that they survive a QEMU that is killed later.
 *
 * Node of an address.  QEMU 7.2's qemu_plugin_hwaddr_phys_addr() does not
 * return a guest physical address: it returns the RAMBlock's offset in QEMU's
 * ram_addr_t space, plus the offset in the block, plus the address of the
 * block's memory region in its container.  With one memory backend per node
 * (vm/run-guest's -object memory-backend-ram,id=memN + -numa node,memdev=),
 * the backends' RAMBlocks are allocated first, in command line order, and
 * each backend sits at the sum of the sizes before it in the machine's RAM
 * container; so node k, C_k being the sizes of the nodes before it, shows
 * as [2*C_k, 2*C_k + S_k).  Other RAM (BIOS, option ROMs) has RAMBlocks
 * after the nodes' and is counted as "rom" where its reported address falls
 * outside every node's range; some can fall inside one (pc.rom does with
 * two nodes of 512 MiB), which matters little: the guest reads them while
 * it boots.
 *
 * Counting.  Each vCPU adds only to its own counters (the callbacks take no
 * lock); the counters only grow, and a window is the difference of two
 * snapshots.  A snapshot reads other vCPUs' counters while they run: a 64-bit
 * aligned load is atomic on the hosts QEMU runs on, so a snapshot can only be
 * a few accesses early or late, which the markers, not synchronising other
 * vCPUs anyway, could not promise better.
 *
 * vm/numamem/build compiles it.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_NODES		64		/* as many as vm/run-guest allows */
#define MAX_VCPUS		256
#define MAX_LABELS		32		/* labelled areas of one filter file */
#define MAX_RANGES		256		/* address ranges of one filter file */
#define MAX_AREAS		(MAX_LABELS + 2)

/* area slots: every access, accesses outside every range, then the labels */
#define AREA_ALL		0
#define AREA_OTHER		1
#define AREA_FIRST_LABEL 2

/* what is counted, per area and (cpu node, memory column) */
typedef enum Kind
{
	KIND_LOAD,
	KIND_STORE,
	KIND_LOAD_BYTES,
	KIND_STORE_BYTES,
	KIND_FILL,					/* llc=: a line brought in by a miss */
	KIND_WRITEBACK,				/* llc=: a dirty line evicted */
	N_KINDS
} Kind;

static const char *const kind_names[N_KINDS] = {
	"load", "store", "load_bytes", "store_bytes", "fill", "writeback"
};

/*
 * Memory columns: the nodes 0 .. n_nodes-1, then RAM that belongs to no node
 * (BIOS, option ROMs), then MMIO (and the rare access whose page QEMU could
 * not tell us).
 */
#define COL_ROM			(n_nodes)
#define COL_IO			(n_nodes + 1)
#define N_COLS			(n_nodes + 2)

/*
 * Rows of a window's matrix: the vCPUs' nodes 0 .. n_nodes-1, then the same
 * nodes for the vCPUs named in apart= ("bgN"); a row's node is row % n_nodes.
 */
#define N_ROWS			(2 * n_nodes)

/*
 * One filter file, as read at a start marker.  Readers (every vCPU, at every
 * access) load the current one with acquire semantics; a new one replaces it
 * with a release store.  Old ones are kept until exit: a vCPU may still be
 * looking at one, and there are only as many as windows.
 */
typedef struct Filter
{
	char	   *window_name;	/* "window NAME" line, or NULL */
	char	   *error;			/* why the file was not used, or NULL */
	int			n_labels;
	char	   *labels[MAX_LABELS];
	uint64_t	label_bytes[MAX_LABELS];
	int			n_ranges;		/* sorted by lo, not overlapping */
	uint64_t	lo[MAX_RANGES];
	uint64_t	hi[MAX_RANGES];
	int			area[MAX_RANGES];	/* area slot of each range */
	uint64_t	min_lo;
	uint64_t	max_hi;
	struct Filter *older;		/* the list kept until exit */
} Filter;

/*
 * A private last-level cache of one vCPU: llc_sets sets of llc_ways lines,
 * write-back and write-allocate, LRU (each set is kept most recently used
 * first).  A line is named by the address qemu_plugin_hwaddr_phys_addr()
 * gave, so that all the virtual addresses of a page share its lines.
 */
typedef struct CacheLine
{
	uint64_t	line;			/* address >> 6, plus 1; 0 = empty */
	uint64_t	va;				/* virtual address of the last store to the
								 * line, with bit 0 set if the line is dirty */
} CacheLine;

typedef struct Vcpu
{
	uint64_t   *counts;			/* [MAX_AREAS][N_KINDS][N_COLS] */
	CacheLine  *llc;			/* llc=: llc_sets * llc_ways, or NULL */
	CacheLine  *last;			/* the line of the previous access */
} __attribute__((aligned(64))) Vcpu;

/* settings */
static int	n_nodes;
static uint64_t node_lo[MAX_NODES];	/* reported address range of each node */
static uint64_t node_hi[MAX_NODES];
static uint64_t node_mib[MAX_NODES];
static int	n_vcpus;
static int	vcpu_node[MAX_VCPUS];
static bool vcpu_apart[MAX_VCPUS];	/* apart=: counted in a bgN row */
static char *out_path;
static char *summary_path;
static char *filter_path;
static uint64_t llc_bytes;
static int	llc_ways;
static uint64_t llc_sets;
static bool arm_on_marker = true;

/* state */
static qemu_plugin_id_t plugin_id;
static Vcpu *vcpus;
static size_t counts_len;		/* uint64_t counters per vCPU */
static Filter *cur_filter;		/* never NULL once installed */
static bool armed;				/* memory accesses are instrumented */

/* windows; the markers take this lock, never the access path */
static GMutex window_lock;
static bool window_open;
static int	n_windows;			/* windows written so far */
static uint64_t *window_start;	/* snapshot at the start: n_vcpus * counts_len */
static gint64 window_start_time;
static int	stray_stops;

/* ---------------------------------------------------------------- helpers */

static inline uint64_t *
counter(Vcpu *v, int area, Kind kind, int col)
{
	return &v->counts[((size_t) area * N_KINDS + kind) * N_COLS + col];
}

/* which memory column a reported address belongs to */
static inline int
addr_column(uint64_t addr)
{
	int			k;

	/* node ranges are ascending */
	for (k = 0; k < n_nodes; k++)
	{
		if (addr < node_hi[k])
			return addr >= node_lo[k] ? k : COL_ROM;
	}
	return COL_ROM;
}

/* which area slot a virtual address belongs to under filter f */
static inline int
addr_area(const Filter *f, uint64_t va)
{
	int			i;

	if (va < f->min_lo || va >= f->max_hi)
		return AREA_OTHER;
	for (i = 0; i < f->n_ranges; i++)
	{
		if (va < f->lo[i])
			break;
		if (va < f->hi[i])
			return f->area[i];
	}
	return AREA_OTHER;
}

/*
 * One access through vCPU v's cache model.  A fill counts in the area of
 * the access that missed; a write-back in the area, under the filter of the
 * moment, of the last virtual address stored to the line, and on the node
 * of the line.
 */
static inline void
llc_access(Vcpu *v, const Filter *f, uint64_t addr, uint64_t va, int col,
		   int area, bool store)
{
	uint64_t	line = (addr >> 6) + 1;
	CacheLine  *set;
	CacheLine	hit;
	int			w;

	/* consecutive accesses to one line are the common case */
	if (v->last && v->last->line == line)
	{
		if (store)
			v->last->va = (va & ~(uint64_t) 63) | 1;
		return;
	}

	set = &v->llc[(line % llc_sets) * llc_ways];
	for (w = 0; w < llc_ways; w++)
	{
		if (set[w].line == line)
			break;
	}
	if (w < llc_ways)
		hit = set[w];
	else
	{
		CacheLine  *victim = &set[llc_ways - 1];

		if (victim->line != 0 && (victim->va & 1))
		{
			int			vcol = addr_column((victim->line - 1) << 6);
			int			varea = addr_area(f, victim->va & ~(uint64_t) 63);

			(*counter(v, AREA_ALL, KIND_WRITEBACK, vcol))++;
			(*counter(v, varea, KIND_WRITEBACK, vcol))++;
		}
		(*counter(v, AREA_ALL, KIND_FILL, col))++;
		(*counter(v, area, KIND_FILL, col))++;
		hit.line = line;
		hit.va = 0;
		w = llc_ways - 1;
	}
	if (store)
		hit.va = (va & ~(uint64_t) 63) | 1;
	memmove(&set[1], &set[0], w * sizeof(CacheLine));
	set[0] = hit;
	v->last = &set[0];
}

/* ---------------------------------------------------------------- callbacks */

static void
mem_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
		   uint64_t va, void *udata)
{
	Vcpu	   *v = &vcpus[vcpu_index];
	const Filter *f = __atomic_load_n(&cur_filter, __ATOMIC_ACQUIRE);
	bool		store = qemu_plugin_mem_is_store(info);
	uint64_t	size = 1 << qemu_plugin_mem_size_shift(info);
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, va);
	uint64_t	addr = 0;
	int			col;
	int			area;

	if (hw == NULL || qemu_plugin_hwaddr_is_io(hw))
		col = COL_IO;
	else
	{
		addr = qemu_plugin_hwaddr_phys_addr(hw);
		col = addr_column(addr);
	}
	area = addr_area(f, va);

	(*counter(v, AREA_ALL, store ? KIND_STORE : KIND_LOAD, col))++;
	(*counter(v, AREA_ALL, store ? KIND_STORE_BYTES : KIND_LOAD_BYTES, col)) += size;
	(*counter(v, area, store ? KIND_STORE : KIND_LOAD, col))++;
	(*counter(v, area, store ? KIND_STORE_BYTES : KIND_LOAD_BYTES, col)) += size;

	/* only node RAM goes through the cache model */
	if (v->llc && col < n_nodes)
		llc_access(v, f, addr, va, col, area, store);
}

static void mark_start(unsigned int vcpu_index, void *udata);
static void mark_stop(unsigned int vcpu_index, void *udata);

static bool
is_marker(struct qemu_plugin_insn *insn, bool *start)
{
	const uint8_t *b;

	if (qemu_plugin_insn_size(insn) != 3)
		return false;
	b = qemu_plugin_insn_data(insn);
	if (b[0] != 0x66 || b[1] != 0x87 || (b[2] != 0xdb && b[2] != 0xc9))
		return false;
	*start = b[2] == 0xdb;
	return true;
}

static void
tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t		n = qemu_plugin_tb_n_insns(tb);
	bool		instrument = __atomic_load_n(&armed, __ATOMIC_ACQUIRE);
	size_t		i;

	for (i = 0; i < n; i++)
	{
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		bool		start;

		if (is_marker(insn, &start))
			qemu_plugin_register_vcpu_insn_exec_cb(insn,
												   start ? mark_start : mark_stop,
												   QEMU_PLUGIN_CB_NO_REGS, NULL);
		if (instrument)
			qemu_plugin_register_vcpu_mem_cb(insn, mem_access,
											 QEMU_PLUGIN_CB_NO_REGS,
											 QEMU_PLUGIN_MEM_RW, NULL);
	}
}

static void plugin_exit(qemu_plugin_id_t id, void *p);

/*
 * qemu_plugin_reset() removes every callback, and flushes the translated
 * code so that it is translated again; put ours back.
 */
static void
after_reset(qemu_plugin_id_t id)
{
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
}

/* ---------------------------------------------------------------- filter file */

static bool
parse_u64(const char *s, uint64_t *result)
{
	char	   *end;

	if (*s == '\0' || *s == '-')
		return false;
	errno = 0;
	*result = g_ascii_strtoull(s, &end, 0);
	return errno == 0 && *end == '\0';
}

static int
compare_ranges(const void *a, const void *b)
{
	const uint64_t *x = a;
	const uint64_t *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static bool
valid_label(const char *s)
{
	const char *p;

	if (*s == '\0' || strcmp(s, "all") == 0 || strcmp(s, "other") == 0)
		return false;
	for (p = s; *p; p++)
	{
		if (!g_ascii_isalnum(*p) && *p != '_' && *p != '-' && *p != '.')
			return false;
	}
	return true;
}

/*
 * Read the filter file: lines "AREA LO HI" (virtual addresses, [LO, HI),
 * HI may be +LENGTH), "window NAME", comments from '#'.  A file with an
 * error gives a filter without ranges and the error, which the window's
 * output reports; a missing file is not an error (no ranges).
 */
static Filter *
read_filter(void)
{
	Filter	   *f = g_new0(Filter, 1);
	g_autofree char *text = NULL;
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) lines = NULL;
	uint64_t	sorted[MAX_RANGES][2];	/* lo, index */
	uint64_t	lo[MAX_RANGES], hi[MAX_RANGES];
	int			area[MAX_RANGES];
	int			n = 0;
	int			i;

	f->min_lo = UINT64_MAX;
	f->max_hi = 0;
	if (filter_path == NULL)
		return f;
	if (!g_file_get_contents(filter_path, &text, NULL, &err))
	{
		if (!g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			f->error = g_strdup_printf("cannot read %s: %s", filter_path, err->message);
		return f;
	}
	lines = g_strsplit(text, "\n", -1);
	for (i = 0; lines[i] != NULL && f->error == NULL; i++)
	{
		char	   *hash = strchr(lines[i], '#');
		g_auto(GStrv) w = NULL;
		int			nw;
		int			l;

		if (hash)
			*hash = '\0';
		w = g_strsplit_set(g_strstrip(lines[i]), " \t", -1);
		/* g_strsplit_set leaves empty fields between repeated blanks */
		for (nw = 0, l = 0; w[l] != NULL; l++)
		{
			if (*w[l] != '\0')
				w[nw++] = w[l];
			else
				g_free(w[l]);
		}
		w[nw] = NULL;
		if (nw == 0)
			continue;
		if (strcmp(w[0], "window") == 0 && nw == 2)
		{
			g_free(f->window_name);
			f->window_name = g_strdup(w[1]);
			continue;
		}
		if (n == MAX_RANGES)
		{
			f->error = g_strdup_printf("%s: more than %d ranges", filter_path, MAX_RANGES);
			break;
		}
		if (nw != 3 || !valid_label(w[0]) ||
			!parse_u64(w[1], &lo[n]) ||
			!(w[2][0] == '+' ? parse_u64(w[2] + 1, &hi[n]) : parse_u64(w[2], &hi[n])))
		{
			f->error = g_strdup_printf("%s:%d: expected \"AREA LO HI\" or \"window NAME\"",
									   filter_path, i + 1);
			break;
		}
		if (w[2][0] == '+')
			hi[n] += lo[n];
		if (hi[n] <= lo[n])
		{
			f->error = g_strdup_printf("%s:%d: empty range", filter_path, i + 1);
			break;
		}
		for (l = 0; l < f->n_labels; l++)
		{
			if (strcmp(f->labels[l], w[0]) == 0)
				break;
		}
		if (l == f->n_labels)
		{
			if (l == MAX_LABELS)
			{
				f->error = g_strdup_printf("%s: more than %d areas", filter_path, MAX_LABELS);
				break;
			}
			f->labels[f->n_labels++] = g_strdup(w[0]);
		}
		area[n] = AREA_FIRST_LABEL + l;
		f->label_bytes[l] += hi[n] - lo[n];
		sorted[n][0] = lo[n];
		sorted[n][1] = n;
		n++;
	}

	qsort(sorted, n, sizeof(sorted[0]), compare_ranges);
	for (i = 0; i < n && f->error == NULL; i++)
	{
		int			j = sorted[i][1];

		if (i > 0 && lo[j] < f->hi[i - 1])
			f->error = g_strdup_printf("%s: ranges overlap at 0x%" PRIx64, filter_path, lo[j]);
		f->lo[i] = lo[j];
		f->hi[i] = hi[j];
		f->area[i] = area[j];
	}
	if (f->error)
	{
		/* nothing of a bad file is used, but its window is still counted */
		for (i = 0; i < f->n_labels; i++)
			g_free(f->labels[i]);
		f->n_labels = 0;
		return f;
	}
	f->n_ranges = n;
	if (n > 0)
	{
		f->min_lo = f->lo[0];
		f->max_hi = f->hi[n - 1];
	}
	return f;
}

/* ---------------------------------------------------------------- output */

static const char *
area_name(const Filter *f, int area)
{
	if (area == AREA_ALL)
		return "all";
	if (area == AREA_OTHER)
		return "other";
	return f->labels[area - AREA_FIRST_LABEL];
}

static void
col_name(char *buf, size_t len, int col)
{
	if (col == COL_ROM)
		snprintf(buf, len, "rom");
	else if (col == COL_IO)
		snprintf(buf, len, "io");
	else
		snprintf(buf, len, "%d", col);
}

static void
append_file(const char *path, const GString *s)
{
	FILE	   *fp = fopen(path, "a");

	if (fp == NULL || fputs(s->str, fp) == EOF || fclose(fp) != 0)
	{
		g_autofree char *m = g_strdup_printf("numamem: cannot write %s: %s\n",
											 path, strerror(errno));

		qemu_plugin_outs(m);
	}
}

static double
share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* the row of a vCPU's counts (see N_ROWS) */
static inline int
vcpu_row(int c)
{
	return vcpu_apart[c] ? n_nodes + vcpu_node[c] : vcpu_node[c];
}

/* a row's name, as out= writes it: the node, or bgN */
static void
row_name(char *buf, size_t len, int r)
{
	if (r < n_nodes)
		snprintf(buf, len, "%d", r);
	else
		snprintf(buf, len, "bg%d", r - n_nodes);
}

/*
 * The window from snapshot `from` to snapshot `to` (per vCPU counters),
 * summed per row (cpu node, apart or not): m[area][kind][row][col].
 */
static uint64_t *
window_matrix(const uint64_t *from, const uint64_t *to)
{
	uint64_t   *m = g_new0(uint64_t, (size_t) MAX_AREAS * N_KINDS * N_ROWS * N_COLS);
	int			c;
	size_t		i;

	for (c = 0; c < n_vcpus; c++)
	{
		const uint64_t *a = from + c * counts_len;
		const uint64_t *b = to + c * counts_len;

		for (i = 0; i < counts_len; i++)
		{
			size_t		col = i % N_COLS;
			size_t		ak = i / N_COLS;	/* area * N_KINDS + kind */

			m[(ak * N_ROWS + vcpu_row(c)) * N_COLS + col] += b[i] - a[i];
		}
	}
	return m;
}

#define M(m, area, kind, row, col) \
	((m)[(((size_t) (area) * N_KINDS + (kind)) * N_ROWS + (row)) * N_COLS + (col)])

static void
summary_table(GString *s, const uint64_t *m, int area, Kind k1, Kind k2,
			  const char *what, const bool *rows)
{
	char		name[16];
	int			r,
				c;

	g_string_append_printf(s, "    %s (rows: cpu node, columns: memory)\n      %-4s", what, "");
	for (c = 0; c < N_COLS; c++)
	{
		col_name(name, sizeof(name), c);
		g_string_append_printf(s, " %23s", name);
	}
	g_string_append(s, "\n");
	for (r = 0; r < N_ROWS; r++)
	{
		if (!rows[r])
			continue;
		row_name(name, sizeof(name), r);
		g_string_append_printf(s, "      %-4s", name);
		for (c = 0; c < N_COLS; c++)
		{
			char		cell[48];

			snprintf(cell, sizeof(cell), "%" PRIu64 "/%" PRIu64,
					 M(m, area, k1, r, c), M(m, area, k2, r, c));
			g_string_append_printf(s, " %23s", cell);
		}
		g_string_append(s, "\n");
	}
}

/* write one window to out= and summary= */
static void
write_window(const Filter *f, const uint64_t *from, const uint64_t *to,
			 double seconds, const char *how)
{
	g_autoptr(GString) tsv = g_string_new(NULL);
	g_autoptr(GString) sum = g_string_new(NULL);
	g_autofree uint64_t *m = window_matrix(from, to);
	const char *wname = f->window_name ? f->window_name : "-";
	int			n_areas = AREA_FIRST_LABEL + f->n_labels;
	bool		rows[2 * MAX_NODES] = {false};
	int			w = ++n_windows;
	int			a,
				k,
				r,
				c,
				i;

	for (i = 0; i < n_vcpus; i++)
		rows[vcpu_row(i)] = true;

	g_string_append_printf(tsv, "# window %d %s: %s, %.2f s of host time, %d area(s)%s%s\n",
						   w, wname, how, seconds, f->n_labels,
						   f->error ? "; filter file NOT used: " : "",
						   f->error ? f->error : "");
	g_string_append_printf(sum, "== window %d \"%s\" (%s, %.2f s of host time)\n",
						   w, wname, how, seconds);
	if (f->error)
		g_string_append_printf(sum, "  filter file NOT used: %s\n", f->error);

	for (a = 0; a < n_areas; a++)
	{
		const char *an = area_name(f, a);
		uint64_t	acc = 0,
					local = 0,
					bytes = 0,
					dram = 0,
					dram_local = 0;

		/* "other" is only worth a line when there are labelled areas */
		if (a == AREA_OTHER && f->n_labels == 0)
			continue;
		for (k = 0; k < N_KINDS; k++)
		{
			for (r = 0; r < N_ROWS; r++)
			{
				for (c = 0; c < N_COLS; c++)
				{
					uint64_t	v = M(m, a, k, r, c);
					char		cn[16];
					char		rn[16];

					if (v == 0)
						continue;
					col_name(cn, sizeof(cn), c);
					row_name(rn, sizeof(rn), r);
					g_string_append_printf(tsv, "%d\t%s\t%s\t%s\t%s\t%s\t%" PRIu64 "\n",
										   w, wname, an, kind_names[k], rn, cn, v);
					if (c >= n_nodes)
						continue;
					if (k == KIND_LOAD || k == KIND_STORE)
					{
						acc += v;
						local += r % n_nodes == c ? v : 0;
					}
					else if (k == KIND_LOAD_BYTES || k == KIND_STORE_BYTES)
						bytes += v;
					else
					{
						dram += v;
						dram_local += r % n_nodes == c ? v : 0;
					}
				}
			}
		}

		g_string_append_printf(sum, "  area %s", an);
		if (a >= AREA_FIRST_LABEL)
		{
			int			nr = 0;

			for (i = 0; i < f->n_ranges; i++)
				nr += f->area[i] == a;
			g_string_append_printf(sum, " (%d range(s), %.1f MiB)", nr,
								   f->label_bytes[a - AREA_FIRST_LABEL] / 1048576.0);
		}
		g_string_append_printf(sum, ": %" PRIu64 " accesses to node RAM (%.1f MiB), "
							   "%.2f%% remote", acc, bytes / 1048576.0,
							   share(acc - local, acc));
		if (llc_ways)
			g_string_append_printf(sum, "; DRAM lines %" PRIu64 " (%.1f MiB), %.2f%% remote",
								   dram, dram * 64 / 1048576.0, share(dram - dram_local, dram));
		g_string_append(sum, "\n");
		summary_table(sum, m, a, KIND_LOAD, KIND_STORE, "loads/stores", rows);
		if (llc_ways)
			summary_table(sum, m, a, KIND_FILL, KIND_WRITEBACK, "LLC fills/write-backs", rows);
	}
	append_file(out_path, tsv);
	append_file(summary_path, sum);
}

/* copy every vCPU's counters (see the file header about the races) */
static void
snapshot(uint64_t *dst)
{
	int			c;
	size_t		i;

	for (c = 0; c < n_vcpus; c++)
	{
		const uint64_t *src = vcpus[c].counts;

		for (i = 0; i < counts_len; i++)
			dst[c * counts_len + i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	}
}

/* close the open window, writing it; window_lock held */
static void
close_window(const char *how)
{
	g_autofree uint64_t *now = g_new(uint64_t, n_vcpus * counts_len);

	snapshot(now);
	write_window(cur_filter, window_start, now,
				 (g_get_monotonic_time() - window_start_time) / 1e6, how);
	window_open = false;
}

/* ---------------------------------------------------------------- markers */

static void
mark_start(unsigned int vcpu_index, void *udata)
{
	Filter	   *f;

	/*
	 * arm=marker: from now on translate with the memory callbacks.  The rest
	 * of the translation block this marker is in runs uninstrumented.
	 */
	if (!__atomic_exchange_n(&armed, true, __ATOMIC_ACQ_REL))
		qemu_plugin_reset(plugin_id, after_reset);

	g_mutex_lock(&window_lock);
	if (window_open)
		close_window("closed by the next start");

	/*
	 * The vCPUs go on counting with the old filter until they see the new
	 * one; the snapshot is taken after the switch, so that what they count
	 * in the new window's areas before it is not in the window.
	 */
	f = read_filter();
	f->older = cur_filter;
	__atomic_store_n(&cur_filter, f, __ATOMIC_RELEASE);

	snapshot(window_start);
	window_start_time = g_get_monotonic_time();
	window_open = true;
	g_mutex_unlock(&window_lock);
}

static void
mark_stop(unsigned int vcpu_index, void *udata)
{
	g_mutex_lock(&window_lock);
	if (window_open)
		close_window("start .. stop");
	else
		stray_stops++;
	g_mutex_unlock(&window_lock);
}

static void
plugin_exit(qemu_plugin_id_t id, void *p)
{
	g_autoptr(GString) s = g_string_new(NULL);

	g_mutex_lock(&window_lock);
	if (window_open)
		close_window("still open when QEMU exited");
	g_string_append_printf(s, "# end: %d window(s)", n_windows);
	if (stray_stops)
		g_string_append_printf(s, "; %d stop marker(s) without a window", stray_stops);
	if (!armed)
		g_string_append(s, "; no start marker was seen (arm=marker: nothing was instrumented)");
	g_string_append(s, "\n");
	append_file(out_path, s);
	append_file(summary_path, s);
	g_mutex_unlock(&window_lock);
}

/* ---------------------------------------------------------------- arguments */

static int
usage_error(const char *fmt,...) G_GNUC_PRINTF(1, 2);

static int
usage_error(const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "numamem: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nnumamem: arguments: node_mb=MB:MB:... [vcpu_nodes=N:N:...] out=FILE "
			"[summary=FILE] [filter=FILE] [llc=MB:WAYS] [arm=marker|always] [apart=I:J...]\n");
	return -1;
}

/* parse a ':' list of numbers into v[]; returns their count, -1 if bad */
static int
parse_list(const char *s, uint64_t *v, int max)
{
	g_auto(GStrv) items = g_strsplit(s, ":", -1);
	int			n;

	for (n = 0; items[n] != NULL; n++)
	{
		if (n == max || !parse_u64(items[n], &v[n]))
			return -1;
	}
	return n;
}

/* start out= and summary= afresh (one QEMU run, one file); false on failure */
static bool
write_header(void)
{
	g_autoptr(GString) s = g_string_new(NULL);
	FILE	   *fp;
	int			i;

	g_string_append(s, "# numamem (vm/numamem): memory accesses by (cpu node, memory node), "
					"one line per non-zero count\n");
	g_string_append_printf(s, "# vcpus %d, their nodes:", n_vcpus);
	for (i = 0; i < n_vcpus; i++)
		g_string_append_printf(s, " %d%s", vcpu_node[i], vcpu_apart[i] ? " (apart)" : "");
	g_string_append(s, "\n");
	for (i = 0; i < n_nodes; i++)
		g_string_append_printf(s, "# node %d: %" PRIu64 " MiB, reported addresses "
							   "[0x%" PRIx64 ", 0x%" PRIx64 ")\n",
							   i, node_mib[i], node_lo[i], node_hi[i]);
	if (llc_ways)
		g_string_append_printf(s, "# llc: private per vCPU, %" PRIu64 " KiB, %d ways, "
							   "64-byte lines, LRU, write-back\n",
							   llc_bytes >> 10, llc_ways);
	else
		g_string_append(s, "# llc: none (fill and writeback are not counted)\n");
	g_string_append_printf(s, "# filter file: %s\n", filter_path ? filter_path : "none");
	g_string_append_printf(s, "# arm: %s\n", arm_on_marker ? "marker" : "always");

	fp = fopen(out_path, "w");
	if (fp == NULL || fputs(s->str, fp) == EOF ||
		fputs("window\tname\tarea\tkind\tcpu_node\tmem_node\tcount\n", fp) == EOF ||
		fclose(fp) != 0)
	{
		fprintf(stderr, "numamem: cannot write %s: %s\n", out_path, strerror(errno));
		return false;
	}
	fp = fopen(summary_path, "w");
	if (fp == NULL || fputs(s->str, fp) == EOF || fclose(fp) != 0)
	{
		fprintf(stderr, "numamem: cannot write %s: %s\n", summary_path, strerror(errno));
		return false;
	}
	return true;
}

QEMU_PLUGIN_EXPORT int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					int argc, char **argv)
{
	uint64_t	vn[MAX_VCPUS];
	int			n_vn = -1;
	uint64_t	base = 0;
	int			i;

	if (!info->system_emulation)
		return usage_error("system emulation only");
	/*
	 * The node address layout (see the file header) is QEMU 7.2's; later
	 * versions have newer plugin APIs and report other addresses.
	 */
	if (info->version.cur != 1)
		return usage_error("plugin API version %d: the node address layout is only known "
						   "for QEMU 7.2 (API version 1)", info->version.cur);
	n_vcpus = info->system.max_vcpus;
	if (n_vcpus > MAX_VCPUS)
		return usage_error("more than %d vCPUs", MAX_VCPUS);

	for (i = 0; i < argc; i++)
	{
		const char *eq = strchr(argv[i], '=');
		g_autofree char *key = eq ? g_strndup(argv[i], eq - argv[i]) : g_strdup(argv[i]);
		const char *val = eq ? eq + 1 : "";

		if (strcmp(key, "node_mb") == 0)
		{
			n_nodes = parse_list(val, node_mib, MAX_NODES);
			if (n_nodes <= 0)
				return usage_error("bad node_mb '%s' (MiB of each node, ':' between)", val);
		}
		else if (strcmp(key, "vcpu_nodes") == 0)
		{
			n_vn = parse_list(val, vn, MAX_VCPUS);
			if (n_vn <= 0)
				return usage_error("bad vcpu_nodes '%s' (node of each vCPU, ':' between)", val);
		}
		else if (strcmp(key, "apart") == 0)
		{
			uint64_t	ap[MAX_VCPUS];
			int			n_ap = parse_list(val, ap, MAX_VCPUS);

			if (n_ap <= 0)
				return usage_error("bad apart '%s' (vCPU indices, ':' between)", val);
			for (int j = 0; j < n_ap; j++)
			{
				if (ap[j] >= (uint64_t) n_vcpus)
					return usage_error("apart: there is no vCPU %" PRIu64, ap[j]);
				vcpu_apart[ap[j]] = true;
			}
		}
		else if (strcmp(key, "out") == 0 && *val)
			out_path = g_strdup(val);
		else if (strcmp(key, "summary") == 0 && *val)
			summary_path = g_strdup(val);
		else if (strcmp(key, "filter") == 0 && *val)
			filter_path = g_strdup(val);
		else if (strcmp(key, "llc") == 0)
		{
			g_auto(GStrv) p = g_strsplit(val, ":", 2);
			uint64_t	mb,
						ways;

			if (p[0] == NULL || p[1] == NULL || !parse_u64(p[0], &mb) ||
				!parse_u64(p[1], &ways) || mb == 0 || ways == 0 || ways > 64)
				return usage_error("bad llc '%s' (MB:WAYS, e.g. 32:16)", val);
			llc_bytes = mb << 20;
			llc_ways = ways;
			llc_sets = llc_bytes / 64 / llc_ways;
			if (llc_sets == 0)
				return usage_error("llc '%s': fewer lines than ways", val);
		}
		else if (strcmp(key, "arm") == 0)
		{
			if (strcmp(val, "marker") == 0)
				arm_on_marker = true;
			else if (strcmp(val, "always") == 0)
				arm_on_marker = false;
			else
				return usage_error("bad arm '%s' (marker or always)", val);
		}
		else
			return usage_error("unknown argument '%s'", argv[i]);
	}
	if (n_nodes == 0)
		return usage_error("node_mb= is required (the MiB of each node, in -numa order)");
	if (out_path == NULL)
		return usage_error("out= is required (the file for the counts)");
	if (summary_path == NULL)
		summary_path = g_strdup_printf("%s.txt", out_path);

	/* see the file header for why the nodes lie there */
	for (i = 0; i < n_nodes; i++)
	{
		node_lo[i] = 2 * base;
		node_hi[i] = 2 * base + (node_mib[i] << 20);
		base += node_mib[i] << 20;
	}

	/* by default the vCPUs are spread over the nodes in order, as run-guest does */
	if (n_vn >= 0 && n_vn != n_vcpus)
		return usage_error("vcpu_nodes gives %d nodes, not one for each of the %d vCPUs",
						   n_vn, n_vcpus);
	for (i = 0; i < n_vcpus; i++)
	{
		vcpu_node[i] = n_vn >= 0 ? (int) vn[i] : i * n_nodes / n_vcpus;
		if (vcpu_node[i] >= n_nodes)
			return usage_error("vcpu_nodes: node %d does not exist (see node_mb)",
							   vcpu_node[i]);
	}

	counts_len = (size_t) MAX_AREAS * N_KINDS * N_COLS;
	/* a cache line each: every access writes its vCPU's "last" */
	if (posix_memalign((void **) &vcpus, 64, n_vcpus * sizeof(Vcpu)) != 0)
		return usage_error("out of memory");
	memset(vcpus, 0, n_vcpus * sizeof(Vcpu));
	for (i = 0; i < n_vcpus; i++)
	{
		vcpus[i].counts = g_new0(uint64_t, counts_len);
		if (llc_ways)
			vcpus[i].llc = g_new0(CacheLine, llc_sets * llc_ways);
	}
	window_start = g_new0(uint64_t, n_vcpus * counts_len);
	cur_filter = g_new0(Filter, 1);
	cur_filter->min_lo = UINT64_MAX;
	if (!write_header())
		return -1;

	plugin_id = id;
	armed = !arm_on_marker;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	return 0;
}
