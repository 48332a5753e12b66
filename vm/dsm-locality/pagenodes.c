/*
 * pagenodes FILE...: for each file (a DSM segment in /dev/shm), map it
 * read-only, fault every page in and print "FILE PAGES N0=.. N1=.." with
 * the node of each page (move_pages(2) with no target nodes).  Reading a
 * page of a tmpfs file that was allocated (posix_fallocate) does not move
 * it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	long		pg = sysconf(_SC_PAGESIZE);
	int			rc = 0;

	for (int i = 1; i < argc; i++)
	{
		int			fd = open(argv[i], O_RDONLY);
		struct stat st;
		size_t		n;
		volatile char *p;
		void	  **pages;
		int		   *status;
		long		count[64] = {0}, other = 0;

		if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0)
		{
			perror(argv[i]);
			rc = 1;
			if (fd >= 0)
				close(fd);
			continue;
		}
		n = (st.st_size + pg - 1) / pg;
		p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
		{
			perror("mmap");
			return 1;
		}
		pages = malloc(n * sizeof(void *));
		status = malloc(n * sizeof(int));
		for (size_t j = 0; j < n; j++)
		{
			(void) p[j * pg];
			pages[j] = (void *) (p + j * pg);
		}
		if (move_pages(0, n, pages, NULL, status, 0) != 0)
		{
			perror("move_pages");
			return 1;
		}
		for (size_t j = 0; j < n; j++)
			if (status[j] >= 0 && status[j] < 64)
				count[status[j]]++;
			else
				other++;
		printf("%s %zu", argv[i], n);
		for (int k = 0; k < 64; k++)
			if (count[k])
				printf(" N%d=%ld", k, count[k]);
		if (other)
			printf(" unknown=%ld", other);
		printf("\n");
		munmap((void *) p, st.st_size);
		close(fd);
		free(pages);
		free(status);
	}
	return rc;
}
