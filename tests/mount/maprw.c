/* Shared memory maps of a file, as a program makes them (tests/mount/mmap.sh).
 *
 *   maprw write FILE OFFSET TEXT  open O_RDWR, mmap MAP_SHARED PROT_READ|PROT_WRITE, store TEXT
 *                                 at OFFSET through the map, msync(MS_SYNC), munmap, close
 *   maprw read FILE               open O_RDONLY, mmap MAP_SHARED PROT_READ, print the mapped bytes
 *   maprw wmap-ro FILE            open O_RDONLY, then ask a MAP_SHARED PROT_WRITE map of it
 *   maprw seen FILE TEXT          open O_RDWR, map it shared read-only, pwrite TEXT at 0 through
 *                                 the descriptor, print what the map shows at 0 afterwards
 *   maprw late FILE               open O_RDONLY, print "OPEN", wait for a line on standard input,
 *                                 then map it shared read-only and print its bytes ("SIGBUS" if
 *                                 reading the map faults)
 *
 * Prints "OK" (or the bytes), else "STEP ERRNAME" (the failing call and errno's name) and exits 1.
 * Build: cc -O2 -o maprw maprw.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *step) {
	const char *name = strerrorname_np(errno);
	printf("%s %s\n", step, name ? name : "E?");
	return 1;
}

static void on_sigbus(int sig) {
	(void)sig;
	static const char msg[] = "SIGBUS\n";
	(void)!write(1, msg, sizeof msg - 1);
	_exit(1);
}

static void *map(int fd, size_t len, int prot) {
	return mmap(NULL, len, prot, MAP_SHARED, fd, 0);
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: maprw write|read|wmap-ro|seen|late FILE [ARGS]\n");
		return 2;
	}
	const char *op = argv[1], *path = argv[2];
	int write_op = !strcmp(op, "write") || !strcmp(op, "seen");
	int fd = open(path, write_op ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return fail("open");
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fail("fstat");
	size_t len = st.st_size;
	if (len == 0) {
		errno = EINVAL;
		return fail("empty");
	}
	if (!strcmp(op, "write") && argc == 5) {
		size_t off = strtoul(argv[3], NULL, 10), n = strlen(argv[4]);
		if (off + n > len) {
			errno = EINVAL;
			return fail("range");
		}
		char *p = map(fd, len, PROT_READ | PROT_WRITE);
		if (p == MAP_FAILED)
			return fail("mmap");
		memcpy(p + off, argv[4], n);
		if (msync(p, len, MS_SYNC) < 0)
			return fail("msync");
		if (munmap(p, len) < 0)
			return fail("munmap");
		if (close(fd) < 0)
			return fail("close");
		puts("OK");
		return 0;
	}
	if (!strcmp(op, "read")) {
		char *p = map(fd, len, PROT_READ);
		if (p == MAP_FAILED)
			return fail("mmap");
		fwrite(p, 1, len, stdout);
		munmap(p, len);
		return 0;
	}
	if (!strcmp(op, "late")) {
		char line[16];
		puts("OPEN");
		fflush(stdout);
		if (!fgets(line, sizeof line, stdin)) {
			errno = EPIPE;
			return fail("stdin");
		}
		signal(SIGBUS, on_sigbus);
		char *p = map(fd, len, PROT_READ);
		if (p == MAP_FAILED)
			return fail("mmap");
		fwrite(p, 1, len, stdout);
		return 0;
	}
	if (!strcmp(op, "wmap-ro")) {
		char *p = map(fd, len, PROT_READ | PROT_WRITE);
		if (p == MAP_FAILED)
			return fail("mmap");
		puts("MAPPED");
		return 1;
	}
	if (!strcmp(op, "seen") && argc == 4) {
		size_t n = strlen(argv[3]);
		if (n > len) {
			errno = EINVAL;
			return fail("range");
		}
		char *p = map(fd, len, PROT_READ);
		if (p == MAP_FAILED)
			return fail("mmap");
		volatile char first = p[0]; /* fault the page in before the write */
		(void)first;
		if (pwrite(fd, argv[3], n, 0) != (ssize_t)n)
			return fail("pwrite");
		fwrite(p, 1, n, stdout);
		putchar('\n');
		return 0;
	}
	fprintf(stderr, "maprw: bad arguments\n");
	return 2;
}
