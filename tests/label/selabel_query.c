/* The reference side of crates/label: libselinux 3.4's own file_contexts backend, asked the
 * same questions as `seaccess label`, so the two can be diffed answer for answer and timed on
 * the same corpus. It deliberately goes through the public selabel_* API only (no internals),
 * so whatever libselinux does to a path (duplicate slashes, trailing slash, .subs_dist aliases,
 * choosing file_contexts.bin over the text file, file_contexts.homedirs) is part of the answer.
 *
 *   selabel_query [-v] FILE_CONTEXTS < queries       answers, one line per query, in order:
 *     lookup<TAB>MODE<TAB>PATH                  -> PATH<TAB>CONTEXT
 *     best<TAB>MODE<TAB>PATH[<TAB>ALIAS...]     -> PATH<TAB>CONTEXT
 *     partial<TAB>PATH                          -> PATH<TAB>1 | PATH<TAB>0
 *   CONTEXT is the raw context, <<none>> when libselinux fails with ENOENT, or
 *   <<error:ENAME>> for any other errno. MODE: any file dir lnk_file chr_file blk_file
 *   sock_file fifo_file. -v adds SELABEL_OPT_VALIDATE (needs a kernel to check contexts).
 *
 *   selabel_query --bench ROUNDS FILE_CONTEXTS < queries   prints
 *     open_us N       median wall time of selabel_open over ROUNDS open+close cycles
 *     open_rss_kib N  resident-set growth from the process's first open (handle kept open)
 *     open_anon_kib N the same, anonymous memory only (smaps_rollup's Anonymous): the handle's
 *                     own pages, without the library code the first open faults in
 *     open_lookup_us N median wall time of selabel_open, one lookup (/etc/hostname as a file)
 *                     and close: what a program that labels one file pays
 *     lookup_ns N     median over ROUNDS passes (after one warm-up pass) of ns per lookup
 *     lookups N       number of lookup queries (other query kinds are ignored)
 *
 * Exit status: 0 done, 1 bad usage/query/output error, 2 selabel_open failed. */
#define _GNU_SOURCE
#include <errno.h>
#include <selinux/label.h>
#include <selinux/selinux.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct {
	const char *name;
	int mode;
} MODES[] = {
	{ "any", 0 },
	{ "file", S_IFREG },
	{ "dir", S_IFDIR },
	{ "lnk_file", S_IFLNK },
	{ "chr_file", S_IFCHR },
	{ "blk_file", S_IFBLK },
	{ "sock_file", S_IFSOCK },
	{ "fifo_file", S_IFIFO },
};

static int parse_mode(const char *s, int *mode)
{
	for (size_t i = 0; i < sizeof(MODES) / sizeof(MODES[0]); i++) {
		if (strcmp(s, MODES[i].name) == 0) {
			*mode = MODES[i].mode;
			return 0;
		}
	}
	return -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: selabel_query [-v] FILE_CONTEXTS < queries\n"
			"       selabel_query --bench ROUNDS FILE_CONTEXTS < queries\n");
	exit(1);
}

static struct selabel_handle *open_handle(const char *path, bool validate)
{
	struct selinux_opt opts[2] = {
		{ SELABEL_OPT_PATH, path },
		{ SELABEL_OPT_VALIDATE, (const char *)1 },
	};
	struct selabel_handle *h = selabel_open(SELABEL_CTX_FILE, opts, validate ? 2 : 1);
	if (!h) {
		fprintf(stderr, "open failed: %s\n", strerror(errno));
		exit(2);
	}
	return h;
}

/* Splits line in place at TABs; returns the number of fields (at most max). */
static size_t split_tabs(char *line, char **fields, size_t max)
{
	size_t n = 0;
	char *p = line;
	for (;;) {
		if (n == max)
			return max + 1; /* too many */
		fields[n++] = p;
		char *tab = strchr(p, '\t');
		if (!tab)
			return n;
		*tab = '\0';
		p = tab + 1;
	}
}

/* One line of a lookup or best-match answer: the context or libselinux's reason for none. */
static void print_answer(const char *path, int rc, int err, char *con)
{
	fputs(path, stdout);
	putchar('\t');
	if (rc == 0) {
		fputs(con, stdout);
		freecon(con);
	} else if (err == ENOENT) {
		fputs("<<none>>", stdout);
	} else {
		const char *name = err ? strerrorname_np(err) : NULL;
		if (name)
			printf("<<error:%s>>", name);
		else
			printf("<<error:%d>>", err);
	}
	putchar('\n');
}

static void chomp(char *line, ssize_t *len)
{
	if (*len > 0 && line[*len - 1] == '\n')
		line[--*len] = '\0';
}

static int run_queries(struct selabel_handle *h)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned long lineno = 0;
	size_t max_fields = 64;
	char **f = malloc((max_fields + 1) * sizeof(*f));
	if (!f)
		return 1;

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		lineno++;
		chomp(line, &len);
		/* a best line may carry any number of aliases: size the field array to the line */
		size_t tabs = 1;
		for (ssize_t i = 0; i < len; i++)
			tabs += line[i] == '\t';
		if (tabs > max_fields) {
			max_fields = tabs;
			char **nf = realloc(f, (max_fields + 1) * sizeof(*f));
			if (!nf)
				return 1;
			f = nf;
		}
		size_t n = split_tabs(line, f, max_fields);
		int mode;
		char *con = NULL;

		if (n == 3 && strcmp(f[0], "lookup") == 0 && parse_mode(f[1], &mode) == 0) {
			errno = 0;
			int rc = selabel_lookup_raw(h, &con, f[2], mode);
			print_answer(f[2], rc, errno, con);
		} else if (n >= 3 && strcmp(f[0], "best") == 0 && parse_mode(f[1], &mode) == 0) {
			const char **aliases = NULL;
			if (n > 3) {
				aliases = (const char **)&f[3];
				f[n] = NULL; /* f has max_fields + 1 slots */
			}
			errno = 0;
			int rc = selabel_lookup_best_match_raw(h, &con, f[2], aliases, mode);
			print_answer(f[2], rc, errno, con);
		} else if (n == 2 && strcmp(f[0], "partial") == 0) {
			bool m = selabel_partial_match(h, f[1]);
			printf("%s\t%d\n", f[1], m ? 1 : 0);
		} else {
			fprintf(stderr, "selabel_query: line %lu: not a query\n", lineno);
			return 1;
		}
	}
	free(line);
	free(f);
	if (ferror(stdin)) {
		perror("selabel_query: stdin");
		return 1;
	}
	return 0;
}

/* ---- benchmark ---- */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long rss_pages(void)
{
	long size = 0, resident = -1;
	FILE *f = fopen("/proc/self/statm", "re");
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident;
}

/* Anonymous resident memory, KiB (smaps_rollup walks the page tables: exact, where statm's
 * count is per-CPU and approximate on recent kernels). */
static long anon_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Anonymous:", 10) == 0)
			kib = strtol(line + 10, NULL, 10);
	fclose(f);
	return kib;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct query {
	char *path;
	int mode;
};

static int bench(int rounds, const char *fc)
{
	/* (a) memory first, so that the open measured is the process's first: later ones would
	 * reuse what earlier closes left in malloc's free lists. */
	long before = rss_pages();
	long anon_before = anon_kib();
	struct selabel_handle *h = open_handle(fc, false);
	long after = rss_pages();
	long anon_after = anon_kib();
	long page_kib = sysconf(_SC_PAGESIZE) / 1024;

	double *t = calloc(rounds, sizeof(*t));
	if (!t)
		return 1;
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		struct selabel_handle *o = open_handle(fc, false);
		t[r] = now_ns() - t0;
		selabel_close(o);
	}
	double open_us = median(t, rounds) / 1e3;
	for (int r = 0; r < rounds; r++) {
		char *con = NULL;
		double t0 = now_ns();
		struct selabel_handle *o = open_handle(fc, false);
		if (selabel_lookup_raw(o, &con, "/etc/hostname", S_IFREG) == 0)
			freecon(con);
		t[r] = now_ns() - t0;
		selabel_close(o);
	}
	double open_lookup_us = median(t, rounds) / 1e3;

	/* (b) lookups */
	struct query *q = NULL;
	size_t nq = 0, capq = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, stdin)) >= 0) {
		chomp(line, &len);
		char *f[4];
		int mode;
		if (split_tabs(line, f, 3) != 3 || strcmp(f[0], "lookup") != 0 ||
		    parse_mode(f[1], &mode) != 0)
			continue;
		if (nq == capq) {
			capq = capq ? capq * 2 : 4096;
			struct query *nqs = realloc(q, capq * sizeof(*q));
			if (!nqs)
				return 1;
			q = nqs;
		}
		q[nq].path = strdup(f[2]);
		if (!q[nq].path)
			return 1;
		q[nq++].mode = mode;
	}
	free(line);
	if (nq == 0) {
		fprintf(stderr, "selabel_query: no lookup queries on stdin\n");
		return 1;
	}

	for (int r = -1; r < rounds; r++) { /* round -1 is the warm-up */
		double t0 = now_ns();
		for (size_t i = 0; i < nq; i++) {
			char *con;
			if (selabel_lookup_raw(h, &con, q[i].path, q[i].mode) == 0)
				freecon(con);
		}
		if (r >= 0)
			t[r] = (now_ns() - t0) / (double)nq;
	}
	double lookup_ns = median(t, rounds);

	printf("open_us %.0f\n", open_us);
	printf("open_rss_kib %ld\n", (after - before) * page_kib);
	printf("open_anon_kib %ld\n", anon_after - anon_before);
	printf("open_lookup_us %.0f\n", open_lookup_us);
	printf("lookup_ns %.0f\n", lookup_ns);
	printf("lookups %zu\n", nq);

	for (size_t i = 0; i < nq; i++)
		free(q[i].path);
	free(q);
	free(t);
	selabel_close(h);
	return 0;
}

int main(int argc, char **argv)
{
	int rc;
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	if (argc == 4 && strcmp(argv[1], "--bench") == 0) {
		char *end;
		long rounds = strtol(argv[2], &end, 10);
		if (*argv[2] == '\0' || *end != '\0' || rounds < 1 || rounds > 1000000)
			usage();
		rc = bench((int)rounds, argv[3]);
	} else {
		bool validate = false;
		int i = 1;
		if (argc == 3 && strcmp(argv[1], "-v") == 0) {
			validate = true;
			i = 2;
		} else if (argc != 2 || argv[1][0] == '-') {
			usage();
		}
		struct selabel_handle *h = open_handle(argv[i], validate);
		rc = run_queries(h);
		selabel_close(h);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("selabel_query: stdout");
		return 1;
	}
	return rc;
}
