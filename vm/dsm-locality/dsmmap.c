/*
 * dsmmap.so: an LD_PRELOAD shim for vm/dsm-locality.sh.  It makes the
 * dynamic shared memory segments of PostgreSQL (posix implementation,
 * /dev/shm/PostgreSQL.NNN) attributable by virtual address, which is all
 * the numamem plugin sees: every mmap() of such a file with no address
 * hint is placed (MAP_FIXED_NOREPLACE) in one reserved range,
 * [DSMMAP_BASE, DSMMAP_LIMIT), far below where the kernel puts mappings
 * of its own choosing (top-down from below the stack, around 0x7f...).
 * So, in every process, DSM and only DSM lives in that range, whatever
 * address each process maps a segment at.  The placement of the pages on
 * NUMA nodes is not affected: posix_fallocate() allocates them, in the
 * creating process, before the mapping exists.
 *
 * It also pins parallel workers, one CPU each: the first time a process
 * whose title says "parallel worker" maps a segment (the first thing
 * ParallelWorkerMain does), it takes the next CPU of $DSMMAP_WORKER_CPUS
 * (a comma list), counting workers in the file $DSMMAP_COUNTER (under
 * flock).  Every mapping (and pin) is logged to $DSMMAP_LOG:
 *   map PID ADDR LEN FILE CPUS-ALLOWED TITLE      placed in the range
 *   fallback PID LEN FILE ERRNO                   could not be (a failure)
 *   pin PID WORKER-INDEX CPU RC
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define DSMMAP_BASE		0x100000000000UL	/* 16 TiB */
#define DSMMAP_LIMIT	0x200000000000UL	/* 32 TiB */
#define DSMMAP_ALIGN	0x200000UL

static uintptr_t cursor = DSMMAP_BASE;	/* inherited over fork */
static pid_t pinned_pid;

static void
logmsg(const char *fmt, ...)
{
	const char *path = getenv("DSMMAP_LOG");
	va_list		ap;
	char		buf[1024];
	int			fd, n;

	if (!path)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if (n >= (int) sizeof(buf))
		n = sizeof(buf) - 1;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd >= 0)
	{
		(void) write(fd, buf, n);	/* one write: O_APPEND keeps lines whole */
		close(fd);
	}
}

static void
title(char *buf, size_t size)
{
	int			fd = open("/proc/self/cmdline", O_RDONLY);
	ssize_t		n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0' || buf[i] == '\n' || buf[i] == ' ')
			buf[i] = '_';
}

static void
allowed(char *buf, size_t size)
{
	cpu_set_t	set;
	size_t		len = 0;

	buf[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	for (int c = 0; c < CPU_SETSIZE && len + 8 < size; c++)
		if (CPU_ISSET(c, &set))
			len += snprintf(buf + len, size - len, "%s%d", len ? "," : "", c);
}

static void
pin_worker(void)
{
	const char *cpus = getenv("DSMMAP_WORKER_CPUS");
	const char *counter = getenv("DSMMAP_COUNTER");
	char		t[256], num[32] = {0};
	int			list[256], count = 0, fd, index = 0, rc;
	cpu_set_t	set;
	char	   *copy, *tok, *save;

	if (pinned_pid == getpid())
		return;
	pinned_pid = getpid();
	title(t, sizeof(t));
	if (!cpus || !counter || !strstr(t, "parallel_worker"))
		return;
	copy = strdup(cpus);
	for (tok = strtok_r(copy, ",", &save); tok && count < 256; tok = strtok_r(NULL, ",", &save))
		list[count++] = atoi(tok);
	free(copy);
	if (count == 0)
		return;
	fd = open(counter, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		return;
	flock(fd, LOCK_EX);
	if (read(fd, num, sizeof(num) - 1) > 0)
		index = atoi(num);
	snprintf(num, sizeof(num), "%d\n", index + 1);
	(void) ftruncate(fd, 0);
	(void) pwrite(fd, num, strlen(num), 0);
	flock(fd, LOCK_UN);
	close(fd);
	CPU_ZERO(&set);
	CPU_SET(list[index % count], &set);
	rc = sched_setaffinity(0, sizeof(set), &set);
	logmsg("pin %d %d %d %d\n", (int) getpid(), index, list[index % count], rc);
}

static int
is_dsm(int fd, char *path, size_t size)
{
	char		link[64];
	ssize_t		n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, size - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	return strncmp(path, "/dev/shm/PostgreSQL.", 20) == 0;
}

static void *(*real_mmap) (void *, size_t, int, int, int, off_t);

void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	char		path[256];

	if (!real_mmap)
		real_mmap = (void *(*) (void *, size_t, int, int, int, off_t)) dlsym(RTLD_NEXT, "mmap");
	if (addr == NULL && fd >= 0 && (flags & MAP_SHARED) && !(flags & MAP_FIXED) &&
		len > 0 && is_dsm(fd, path, sizeof(path)))
	{
		size_t		span = (len + DSMMAP_ALIGN - 1) & ~(DSMMAP_ALIGN - 1);
		int			err = 0;

		pin_worker();
		/* a free gap of one alignment unit between segments */
		for (uintptr_t a = cursor; a + span <= DSMMAP_LIMIT; a += DSMMAP_ALIGN)
		{
			void	   *r = real_mmap((void *) a, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);

			if (r == (void *) a)
			{
				char		t[160], cpus[64];

				cursor = a + span + DSMMAP_ALIGN;
				title(t, sizeof(t));
				allowed(cpus, sizeof(cpus));
				logmsg("map %d 0x%lx %zu %s %s %s\n", (int) getpid(), (unsigned long) a,
					   len, path, cpus, t);
				return r;
			}
			if (r != MAP_FAILED)
			{
				munmap(r, len);	/* a kernel that took it as a hint */
				err = EINVAL;
				break;
			}
			err = errno;
			if (err != EEXIST)
				break;
		}
		logmsg("fallback %d %zu %s %d\n", (int) getpid(), len, path, err);
	}
	return real_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));
