/* The seed experiments' program, run in the guest under QEMU's -icount shift=0 (each guest
 * instruction advances the virtual clock one nanosecond, so CLOCK_MONOTONIC counts the
 * instructions the guest ran: this process's, the kernel's on its behalf, and the few
 * interrupts between). Two uses:
 *
 *   bench mktree DIR DIRS FILES    create DIR/dNNN (DIRS of them) holding FILES empty files
 *                                  between them
 *   bench EXPERIMENT...            run each experiment, print one line each on stdout:
 *
 *     B <name> <operations> <instructions, the least of REPS runs>
 *
 *   tree:DIR        the tree walk: every entry under DIR read with getdents64, fstatat'd, and
 *                   every regular file opened and closed (an operation: one file)
 *   rw:FILE         the 1-byte loop: FILE opened (created) read-write once, then RW_LOOPS
 *                   times a 1-byte pwrite and a 1-byte pread (an operation: one of each)
 *   walk:PATH       the path walk: stat(PATH) WALK_LOOPS times (an operation: one stat)
 *   open:PATH       not measured: open(PATH, O_RDONLY) once, printed as "O <path> <ok or
 *                   the error>" (the proof that the domain is confined: a file it may
 *                   not read)
 *
 * Each experiment runs once to warm the caches, then REPS times measured. The run happens in
 * whatever domain exec put this program in (tests/kernel/bench/guest.sh copies it to the path
 * of Debian's apache2, so the chain kernel_t -> init -> rc -> apache2 enters httpd_t).
 * Results are printed only at the end, so that no write to the output is measured. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define REPS 5
#define RW_LOOPS 20000
#define WALK_LOOPS 20000

static long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "bench: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

/* One directory of the walk: returns the files opened under it, or -1 (errno set). */
static long walk_dir(int dfd)
{
	char buf[16384];
	long files = 0;

	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n < 0)
			return -1;
		if (n == 0)
			return files;
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			struct stat st;
			off += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			if (fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				return -1;
			if (S_ISDIR(st.st_mode)) {
				int sub = openat(dfd, d->d_name, O_RDONLY | O_DIRECTORY);
				long k;
				if (sub < 0)
					return -1;
				k = walk_dir(sub);
				close(sub);
				if (k < 0)
					return -1;
				files += k;
			} else if (S_ISREG(st.st_mode)) {
				int fd = openat(dfd, d->d_name, O_RDONLY);
				if (fd < 0)
					return -1;
				close(fd);
				files++;
			}
		}
	}
}

static long tree(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	long files;

	if (dfd < 0)
		die("open", dir);
	files = walk_dir(dfd);
	if (files < 0)
		die("walk", dir);
	close(dfd);
	return files;
}

static long rw(const char *file)
{
	char c = 'x';
	int fd = open(file, O_RDWR | O_CREAT, 0644);

	if (fd < 0)
		die("open", file);
	for (int i = 0; i < RW_LOOPS; i++) {
		if (pwrite(fd, &c, 1, 0) != 1)
			die("pwrite", file);
		if (pread(fd, &c, 1, 0) != 1)
			die("pread", file);
	}
	close(fd);
	return RW_LOOPS;
}

static long walk(const char *path)
{
	struct stat st;

	for (int i = 0; i < WALK_LOOPS; i++)
		if (stat(path, &st) < 0)
			die("stat", path);
	return WALK_LOOPS;
}

static void mktree(const char *dir, int dirs, int files)
{
	char p[4096];

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("mkdir", dir);
	for (int d = 0; d < dirs; d++) {
		/* FILES spread as evenly as they go: the first FILES % DIRS directories one more. */
		int n = files / dirs + (d < files % dirs);
		snprintf(p, sizeof(p), "%s/d%03d", dir, d);
		if (mkdir(p, 0755) < 0)
			die("mkdir", p);
		for (int f = 0; f < n; f++) {
			int fd;
			snprintf(p, sizeof(p), "%s/d%03d/f%05d", dir, d, f);
			fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0644);
			if (fd < 0)
				die("create", p);
			close(fd);
		}
	}
}

int main(int argc, char **argv)
{
	char out[4096];
	size_t used = 0;

	if (argc == 5 && !strcmp(argv[1], "mktree")) {
		mktree(argv[2], atoi(argv[3]), atoi(argv[4]));
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		long (*run)(const char *);
		const char *arg = strchr(argv[i], ':');
		long long best = -1;
		long ops = 0;
		if (!arg) {
			fprintf(stderr, "bench: %s: want EXPERIMENT:PATH\n", argv[i]);
			return 2;
		}
		if (!strncmp(argv[i], "open:", 5)) {
			int fd = open(arg + 1, O_RDONLY);
			used += snprintf(out + used, sizeof(out) - used, "O %s %s\n", arg + 1,
					 fd < 0 ? strerror(errno) : "ok");
			if (fd >= 0)
				close(fd);
			if (used >= sizeof(out))
				used = sizeof(out) - 1;
			continue;
		}
		if (!strncmp(argv[i], "tree:", 5))
			run = tree;
		else if (!strncmp(argv[i], "rw:", 3))
			run = rw;
		else if (!strncmp(argv[i], "walk:", 5))
			run = walk;
		else {
			fprintf(stderr, "bench: %s: no such experiment\n", argv[i]);
			return 2;
		}
		arg++;
		run(arg);
		for (int r = 0; r < REPS; r++) {
			long long t0 = now(), t;
			ops = run(arg);
			t = now() - t0;
			if (best < 0 || t < best)
				best = t;
		}
		used += snprintf(out + used, sizeof(out) - used, "B %.*s %ld %lld\n",
				 (int)(arg - argv[i] - 1), argv[i], ops, best);
		if (used >= sizeof(out))
			used = sizeof(out) - 1;
	}
	fputs(out, stdout);
	return 0;
}
