/* selabel_lookup through the C API, built against Debian's libselinux and run on it and on
 * libseaccess in its place (LD_LIBRARY_PATH=target/libselinux): the same program, the same
 * file_contexts, the same paths (one per line on standard input, with the file type from lstat).
 *
 *   bench_label ROUNDS < PATHS
 *
 * Prints `answers N HASH` (a hash of every context answered, so that the two runs can be
 * compared) and `selabel_lookup NS` (wall time per lookup, the median of ROUNDS passes over
 * the paths after one warm-up pass). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <selinux/selinux.h>
#include <selinux/label.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench_label ROUNDS < PATHS\n");
		return 2;
	}
	long rounds = atol(argv[1]);
	size_t n = 0, cap = 1024;
	char **paths = malloc(cap * sizeof *paths);
	mode_t *modes = malloc(cap * sizeof *modes);
	char line[4096];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		struct stat st;
		if (!*line || lstat(line, &st) != 0)
			continue;
		if (n == cap) {
			cap *= 2;
			paths = realloc(paths, cap * sizeof *paths);
			modes = realloc(modes, cap * sizeof *modes);
		}
		paths[n] = strdup(line);
		modes[n++] = st.st_mode & S_IFMT;
	}
	struct selabel_handle *h = selabel_open(SELABEL_CTX_FILE, NULL, 0);
	if (!h) {
		perror("selabel_open");
		return 1;
	}
	unsigned long hash = 5381, answered = 0;
	for (size_t i = 0; i < n; i++) {
		char *con = NULL;
		if (selabel_lookup_raw(h, &con, paths[i], modes[i]) == 0) {
			for (char *c = con; *c; c++)
				hash = hash * 33 + (unsigned char)*c;
			answered++;
			freecon(con);
		}
	}
	double *per = calloc(rounds > 0 ? rounds : 1, sizeof *per);
	for (long r = 0; r < rounds; r++) {
		double t0 = now();
		for (size_t i = 0; i < n; i++) {
			char *con = NULL;
			if (selabel_lookup_raw(h, &con, paths[i], modes[i]) == 0)
				freecon(con);
		}
		per[r] = (now() - t0) / (double)n;
	}
	qsort(per, rounds, sizeof *per, cmp);
	printf("answers %lu %lx of %zu\n", answered, hash, n);
	printf("selabel_lookup %.1f\n", rounds > 0 ? per[rounds / 2] : 0.0);
	selabel_close(h);
	return 0;
}
