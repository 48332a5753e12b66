/*
 * stream: a known memory access pattern for checking the numamem plugin.
 *
 *	stream [-f FILTERFILE] [-w WINDOW] [-a AREA] [-p PIECES] MB [PASSES]
 *
 * Maps MB MiB of anonymous memory and touches every page once (so that the
 * pages are placed, by the NUMA policy stream runs under, before any window
 * opens), writes the buffer's virtual address range to FILTERFILE as area
 * AREA (default "stream") of a window named WINDOW, then, between the
 * plugin's start and stop markers, stores every 8-byte word of the buffer
 * once and loads every word PASSES times (default 1).  Each word is one
 * store and one load per pass, through a volatile pointer: the compiler may
 * not merge or vectorise them, so in the window the area sees exactly
 * MB*131072 stores and MB*131072*PASSES loads.  Last it prints the range,
 * the expected counts and the node of every page (move_pages(2)).
 *
 * With -p PIECES the range is written as PIECES equal ranges, last first,
 * piece i in area AREA.(i % 2): a check of labels with several ranges.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_NODES 64
#define PAGE 4096

static void
usage(void)
{
	fprintf(stderr, "usage: stream [-f FILTERFILE] [-w WINDOW] [-a AREA] [-p PIECES] MB [PASSES]\n");
	exit(2);
}

/* the filter file the plugin reads at the start marker */
static void
write_filter(const char *path, const char *window, const char *area,
			 int pieces, uintptr_t lo, uintptr_t hi)
{
	FILE	   *fp = fopen(path, "w");
	uintptr_t	len = (hi - lo) / pieces;

	if (fp == NULL)
	{
		fprintf(stderr, "stream: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fprintf(fp, "# written by stream\n");
	if (window)
		fprintf(fp, "window %s\n", window);
	if (pieces == 1)
		fprintf(fp, "%s 0x%" PRIxPTR " 0x%" PRIxPTR "\n", area, lo, hi);
	else
	{
		for (int i = pieces - 1; i >= 0; i--)
			fprintf(fp, "%s.%d 0x%" PRIxPTR " +%" PRIuPTR "\n", area, i % 2, lo + i * len, len);
	}
	/* fsync: the host must see the file when the marker runs */
	if (fflush(fp) != 0 || fsync(fileno(fp)) != 0 || fclose(fp) != 0)
	{
		fprintf(stderr, "stream: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	const char *filter = NULL;
	const char *window = NULL;
	const char *area = "stream";
	size_t		mb,
				words,
				i;
	int			passes = 1;
	int			pieces = 1;
	int			opt;
	volatile uint64_t *a;
	uint64_t	sum = 0;
	long		pages_on[MAX_NODES + 1] = {0};

	while ((opt = getopt(argc, argv, "f:w:a:p:")) != -1)
	{
		switch (opt)
		{
			case 'f':
				filter = optarg;
				break;
			case 'w':
				window = optarg;
				break;
			case 'a':
				area = optarg;
				break;
			case 'p':
				pieces = atoi(optarg);
				break;
			default:
				usage();
		}
	}
	if (optind >= argc || optind + 2 < argc)
		usage();
	mb = strtoul(argv[optind], NULL, 10);
	if (optind + 1 < argc)
		passes = atoi(argv[optind + 1]);
	if (mb == 0 || passes < 0 || pieces < 1 || (mb << 20) % ((size_t) pieces * PAGE) != 0)
		usage();
	words = mb << 17;

	a = mmap(NULL, mb << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
	{
		perror("stream: mmap");
		return 1;
	}
	for (i = 0; i < words; i += PAGE / sizeof(uint64_t))
		a[i] = 0;
	if (filter)
		write_filter(filter, window, area, pieces, (uintptr_t) a, (uintptr_t) a + (mb << 20));

	__asm__ volatile("xchg %%bx, %%bx" ::: "memory");	/* numamem: start */
	for (i = 0; i < words; i++)
		a[i] = i;
	for (int p = 0; p < passes; p++)
		for (i = 0; i < words; i++)
			sum += a[i];
	__asm__ volatile("xchg %%cx, %%cx" ::: "memory");	/* numamem: stop */

	/* where the pages are */
	for (i = 0; i < (mb << 20) / PAGE; i += 1024)
	{
		void	   *addrs[1024];
		int			status[1024];
		size_t		n = (mb << 20) / PAGE - i < 1024 ? (mb << 20) / PAGE - i : 1024;

		for (size_t j = 0; j < n; j++)
			addrs[j] = (char *) a + (i + j) * PAGE;
		if (syscall(SYS_move_pages, 0, n, addrs, NULL, status, 0) != 0)
		{
			perror("stream: move_pages");
			return 1;
		}
		for (size_t j = 0; j < n; j++)
			pages_on[status[j] >= 0 && status[j] < MAX_NODES ? status[j] : MAX_NODES]++;
	}

	printf("stream: area %s va 0x%" PRIxPTR "-0x%" PRIxPTR " (%zu MiB): %zu stores, %zu loads; pages per node:",
		   area, (uintptr_t) a, (uintptr_t) a + (mb << 20), mb, words, words * passes);
	for (i = 0; i < MAX_NODES; i++)
		if (pages_on[i])
			printf(" %zu:%ld", i, pages_on[i]);
	if (pages_on[MAX_NODES])
		printf(" unknown:%ld", pages_on[MAX_NODES]);
	printf("; sum %" PRIu64 "\n", sum);
	return 0;
}
