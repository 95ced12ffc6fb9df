/*
 * libselinux-avc-peer: measures the hit path of libselinux's own userspace
 * AVC (avc_has_perm_noaudit in the installed libselinux.so.1) so that
 * seaccess's AVC can be compared against it in the same run.
 *
 *   libselinux-avc-peer SECONDS THREADS[,THREADS...] < input
 *   libselinux-avc-peer chatroom ROOMS[,ROOMS...] CLIENTS MESSAGES LEN ROUNDS < input
 *
 * The second form runs the lab's chatroom (chatroom.c) with libselinux's AVC
 * asked at every send and receive.
 *
 * input: one line per working-set triple
 *   SCON TCON CLASS ALLOWED AUDITALLOW AUDITDENY
 * (CLASS decimal, vectors lower-case hex without 0x). See README.md.
 *
 * The machine this runs on need not run SELinux. libselinux's AVC needs the
 * kernel in three places, and each is supplied as follows:
 *
 *  - avc_init() reads <selinuxfs>/enforce and mmaps <selinuxfs>/status.
 *    We point libselinux at a private directory (set_selinuxmnt) holding an
 *    "enforce" file and a one-page "status" file laid out like the kernel's
 *    status page, then delete the directory once the page is mapped. From
 *    then on libselinux runs its real selinux_status_updated() on every
 *    check, against a real mapped page, exactly as on an SELinux system
 *    with no policy reloads.
 *
 *  - A cache miss calls security_compute_av_flags_raw(), which would write
 *    the query to <selinuxfs>/access. libselinux calls it through its PLT,
 *    so the definition below, in the executable, interposes it and answers
 *    from the table read on stdin (decisions computed by seaccess).
 *
 *  - Locking: avc_open() installs no lock callbacks (libselinux 3.4 then
 *    takes no lock at all), so a multithreaded object manager must pass
 *    pthread mutex callbacks to avc_init(); that one global mutex around
 *    the whole cache is what is measured, at every thread count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <selinux/avc.h>
#include <selinux/selinux.h>

#include "peer.h"

/* AVC_CACHE_MAXNODES in libselinux 3.4's avc.c: the most decisions its
 * cache holds (it has 512 hash slots, but only 410 nodes). Not exported, so
 * only used to warn that misses are expected. */
#define LIBSELINUX_AVC_NODES 410

/* Calls between looks at the stop flag: 256, as in the Rust harness, so
 * both sides pay the same (negligible) share for it. */
#define CALLS_PER_STOP_CHECK 256

#define MAX_THREADS 4096	/* per measurement */
#define MAX_THREAD_COUNTS 64	/* entries in the THREADS list */

struct triple *triples;
size_t ntriples;

/* Open-addressing index over triples keyed by (scon, tcon, tclass) string
 * content: the interposed compute function only sees context strings. */
static size_t *keytab;		/* index + 1; 0 = empty */
static size_t keytab_mask;

/* Calls that reached the interposed security server: the AVC's misses. */
atomic_ulong compute_calls;
static atomic_ulong compute_unknown;

static atomic_bool stop_flag;

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void input_error(unsigned long line, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
static void input_error(unsigned long line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": stdin line %lu: ", line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (expected: SCON TCON CLASS ALLOWED AUDITALLOW AUDITDENY)\n", stderr);
	exit(2);
}

static void usage(const char *why)
{
	fprintf(stderr, PROG ": %s\nusage: " PROG " SECONDS THREADS[,THREADS...] < triples\n       " PROG " chatroom ROOMS[,ROOMS...] CLIENTS MESSAGES LEN ROUNDS < triples\n", why);
	exit(2);
}

static uint64_t key_hash(const char *scon, const char *tcon, security_class_t tclass)
{
	/* FNV-1a; the separators keep ("a b", "c") and ("a", "b c") apart. */
	uint64_t h = 0xcbf29ce484222325ULL;
	const unsigned char *p;

	for (p = (const unsigned char *)scon; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL;
	for (p = (const unsigned char *)tcon; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL;
	h = (h ^ (tclass & 0xff)) * 0x100000001b3ULL;
	h = (h ^ (tclass >> 8)) * 0x100000001b3ULL;
	return h;
}

/* Returns the slot holding the key, or the empty slot where it belongs. */
static size_t *key_slot(const char *scon, const char *tcon, security_class_t tclass)
{
	size_t i = key_hash(scon, tcon, tclass) & keytab_mask;

	for (;; i = (i + 1) & keytab_mask) {
		const struct triple *t;

		if (!keytab[i])
			return &keytab[i];
		t = &triples[keytab[i] - 1];
		if (t->tclass == tclass && !strcmp(t->scon, scon) && !strcmp(t->tcon, tcon))
			return &keytab[i];
	}
}

/*
 * Interposes libselinux's own definition (which writes the query to
 * <selinuxfs>/access): libselinux 3.4 calls it through its PLT from
 * avc_has_perm_noaudit, so the dynamic linker binds that call here.
 * The AVC calls it with its global lock held, so it runs serialised, but the
 * counters are atomic anyway to stay correct without that assumption.
 */
int security_compute_av_flags_raw(const char *scon, const char *tcon,
				  security_class_t tclass,
				  access_vector_t requested __attribute__((unused)),
				  struct av_decision *avd)
{
	size_t *slot;
	const struct triple *t;

	atomic_fetch_add_explicit(&compute_calls, 1, memory_order_relaxed);
	slot = key_slot(scon, tcon, tclass);
	if (!*slot) {
		/* The kernel says EINVAL for a context it does not know. */
		atomic_fetch_add_explicit(&compute_unknown, 1, memory_order_relaxed);
		errno = EINVAL;
		return -1;
	}
	t = &triples[*slot - 1];
	avd->allowed = t->allowed;
	avd->decided = ~0U;	/* the kernel always decides every permission */
	avd->auditallow = t->auditallow;
	avd->auditdeny = t->auditdeny;
	avd->seqno = 0;		/* policy load 0, matching the status page */
	avd->flags = 0;		/* enforcing domain: denials must stay denials */
	return 0;
}

static int parse_hex32(const char *s, access_vector_t *out)
{
	size_t len = strlen(s);
	uint32_t v = 0;

	if (len == 0 || len > 8)
		return -1;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9')
			v = v << 4 | (uint32_t)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			v = v << 4 | (uint32_t)(*s - 'a' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static int parse_class(const char *s, security_class_t *out)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 5)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v == 0 || v > 0xffff)
		return -1;
	*out = (security_class_t)v;
	return 0;
}

static int plausible_context(const char *s)
{
	/* user:role:type[:range]; catches fields given in the wrong order
	 * without second-guessing what the policy accepts. */
	int colons = 0;

	for (; *s; s++)
		colons += *s == ':';
	return colons >= 2;
}

static void read_triples(FILE *in)
{
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	ssize_t len;
	unsigned long lineno = 0;

	while ((len = getline(&line, &cap, in)) >= 0) {
		char *field[7], *save = NULL, *tok;
		int nf = 0;
		struct triple t;

		lineno++;
		if ((size_t)len != strlen(line))
			input_error(lineno, "contains a NUL byte");
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			if (nf == 7)
				break;
			field[nf++] = tok;
		}
		if (nf == 0)
			continue;	/* blank line */
		if (nf != 6)
			input_error(lineno, "%s fields", nf < 6 ? "too few" : "too many");

		memset(&t, 0, sizeof(t));
		t.line = lineno;
		if (!plausible_context(field[0]))
			input_error(lineno, "SCON '%s' is not a context (user:role:type[:range])", field[0]);
		if (!plausible_context(field[1]))
			input_error(lineno, "TCON '%s' is not a context (user:role:type[:range])", field[1]);
		if (parse_class(field[2], &t.tclass))
			input_error(lineno, "CLASS '%s' is not a decimal class number in 1..65535", field[2]);
		if (parse_hex32(field[3], &t.allowed))
			input_error(lineno, "ALLOWED '%s' is not 1-8 lower-case hex digits", field[3]);
		if (parse_hex32(field[4], &t.auditallow))
			input_error(lineno, "AUDITALLOW '%s' is not 1-8 lower-case hex digits", field[4]);
		if (parse_hex32(field[5], &t.auditdeny))
			input_error(lineno, "AUDITDENY '%s' is not 1-8 lower-case hex digits", field[5]);
		/* The lowest allowed permission, so that allowed triples take the
		 * granted path; bit 0 (denied) when nothing is allowed. */
		t.requested = t.allowed ? (t.allowed & -t.allowed) : 1;
		t.scon = strdup(field[0]);
		t.tcon = strdup(field[1]);
		if (!t.scon || !t.tcon)
			die("out of memory");

		if (ntriples == alloc) {
			alloc = alloc ? alloc * 2 : 1024;
			triples = realloc(triples, alloc * sizeof(*triples));
			if (!triples)
				die("out of memory");
		}
		triples[ntriples++] = t;
	}
	if (ferror(in))
		die("reading stdin: %s", strerror(errno));
	free(line);
	if (ntriples == 0) {
		fprintf(stderr, PROG ": no triples on stdin\n");
		exit(2);
	}
}

/* Builds the key index; a key given twice must carry the same decision,
 * or "wrong" would be meaningless. Returns the number of distinct keys. */
static size_t index_triples(void)
{
	size_t size = 16, i, distinct = 0;

	while (size < 2 * ntriples)
		size *= 2;
	keytab = calloc(size, sizeof(*keytab));
	if (!keytab)
		die("out of memory");
	keytab_mask = size - 1;
	for (i = 0; i < ntriples; i++) {
		const struct triple *t = &triples[i];
		size_t *slot = key_slot(t->scon, t->tcon, t->tclass);

		if (!*slot) {
			*slot = i + 1;
			distinct++;
			continue;
		}
		const struct triple *o = &triples[*slot - 1];
		if (o->allowed != t->allowed || o->auditallow != t->auditallow ||
		    o->auditdeny != t->auditdeny) {
			fprintf(stderr, PROG ": stdin line %lu: same SCON TCON CLASS as line %lu "
				"but a different decision\n", t->line, o->line);
			exit(2);
		}
	}
	return distinct;
}

/* ---- the kernel interface libselinux reads at avc_init() ---- */

/* Layout of the kernel's selinuxfs "status" page (struct selinux_kernel_status,
 * version 1), which libselinux's sestatus.c reads. */
struct status_page {
	uint32_t version;
	uint32_t sequence;	/* even: no update in progress */
	uint32_t enforcing;
	uint32_t policyload;
	uint32_t deny_unknown;
} __attribute__((packed));

static void write_file(const char *dir, const char *name, const void *buf, size_t len, size_t size)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		die("creating %s: %s", path, strerror(errno));
	if (write(fd, buf, len) != (ssize_t)len)
		die("writing %s: %s", path, strerror(errno));
	if (size > len && ftruncate(fd, (off_t)size))
		die("sizing %s: %s", path, strerror(errno));
	close(fd);
}

static void remove_file(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* A default (non-adaptive, non-recursive) pthread mutex: what a threaded
 * user of libselinux 3.4 passes to avc_init(), and what later upstream
 * libselinux (commit a21061f5, not in 3.4) installs itself by default. */
static void *lock_alloc(void)
{
	pthread_mutex_t *m = malloc(sizeof(*m));

	if (m)
		pthread_mutex_init(m, NULL);
	return m;
}

static void lock_get(void *m)
{
	pthread_mutex_lock(m);
}

static void lock_release(void *m)
{
	pthread_mutex_unlock(m);
}

static void lock_free(void *m)
{
	pthread_mutex_destroy(m);
	free(m);
}

static void start_avc(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX - 16];	/* room for "/enforce" */
	struct status_page st = { .version = 1, .sequence = 0, .enforcing = 1,
				  .policyload = 0, .deny_unknown = 0 };
	long page = sysconf(_SC_PAGESIZE);
	/* The only way libselinux 3.4 takes a lock around its cache: avc_open()
	 * passes no lock callbacks and then runs unlocked, and
	 * selinux_set_callback() has no lock callback type. */
	static const struct avc_lock_callback locks = {
		.func_alloc_lock = lock_alloc,
		.func_get_lock = lock_get,
		.func_release_lock = lock_release,
		.func_free_lock = lock_free,
	};
	int rc;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/" PROG ".XXXXXX", tmp && *tmp ? tmp : "/tmp") >= sizeof(dir))
		die("TMPDIR is too long");
	if (!mkdtemp(dir))
		die("mkdtemp %s: %s", dir, strerror(errno));
	/* Enforcing, so a denial stays a denial: in permissive mode the AVC
	 * would OR the denied permission into its cached entry. */
	write_file(dir, "enforce", "1", 1, 0);
	write_file(dir, "status", &st, sizeof(st), page > 0 ? (size_t)page : 4096);
	set_selinuxmnt(dir);

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	rc = avc_init("avc", NULL, NULL, NULL, &locks);
#pragma GCC diagnostic pop

	/* The status page stays mapped after unlink; nothing else is read
	 * from selinuxfs on the paths measured here. */
	remove_file(dir, "enforce");
	remove_file(dir, "status");
	rmdir(dir);
	if (rc < 0)
		die("avc_init failed: %s", strerror(errno));
}

/* ---- measurement ---- */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct worker {
	pthread_t thread;
	size_t start;
	int string_keyed;
	uint64_t calls;
	uint64_t wrong;
	double elapsed_ns;
} __attribute__((aligned(64)));

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	size_t i = w->start;
	uint64_t calls = 0, wrong = 0;
	struct av_decision avd;
	double t0 = now_ns();

	/* At least one batch, so that even a very short run yields a number. */
	do {
		for (int k = 0; k < CALLS_PER_STOP_CHECK; k++) {
			const struct triple *t = &triples[i];
			security_id_t ssid = t->ssid, tsid = t->tsid;

			if (w->string_keyed) {
				/* What selinux_check_access() does per call before
				 * its class/permission name lookups. */
				if (avc_context_to_sid(t->scon, &ssid) || avc_context_to_sid(t->tcon, &tsid))
					ssid = tsid = NULL;
			}
			if (ssid && tsid) {
				(void)avc_has_perm_noaudit(ssid, tsid, t->tclass, t->requested, NULL, &avd);
				wrong += avd.allowed != t->allowed;
			} else {
				wrong++;
			}
			if (++i == ntriples)
				i = 0;
		}
		calls += CALLS_PER_STOP_CHECK;
	} while (!atomic_load_explicit(&stop_flag, memory_order_relaxed));
	w->elapsed_ns = now_ns() - t0;
	w->calls = calls;
	w->wrong = wrong;
	return NULL;
}

static void sleep_seconds(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void measure(double seconds, int nthreads, int string_keyed)
{
	struct worker *w = aligned_alloc(64, sizeof(*w) * (size_t)nthreads);
	double busy_ns = 0, ops = 0;
	uint64_t calls = 0, wrong = 0;
	unsigned long misses0;
	int i, err;

	if (!w)
		die("out of memory");
	memset(w, 0, sizeof(*w) * (size_t)nthreads);
	atomic_store(&stop_flag, false);
	misses0 = atomic_load(&compute_calls);
	for (i = 0; i < nthreads; i++) {
		w[i].start = (size_t)i * 7919 % ntriples;
		w[i].string_keyed = string_keyed;
		err = pthread_create(&w[i].thread, NULL, run_worker, &w[i]);
		if (err)
			die("pthread_create (thread %d of %d): %s", i + 1, nthreads, strerror(err));
	}
	sleep_seconds(seconds);
	atomic_store(&stop_flag, true);
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		busy_ns += w[i].elapsed_ns;
		calls += w[i].calls;
		wrong += w[i].wrong;
		/* Each thread over its own running time, so start-up skew is
		 * not counted as idle time (as the Rust harness does). */
		if (w[i].elapsed_ns > 0)
			ops += (double)w[i].calls * 1e9 / w[i].elapsed_ns;
	}
	printf("{%s\"threads\":%d,\"hit_ns\":%.2f,\"hit_ops_per_s\":%.0f,\"misses\":%lu,\"wrong\":%llu}\n",
	       string_keyed ? "\"string_keyed\":true," : "", nthreads,
	       calls ? busy_ns / (double)calls : 0.0, ops,
	       atomic_load(&compute_calls) - misses0, (unsigned long long)wrong);
	fflush(stdout);
	free(w);
}

static int parse_threads(const char *arg, int *out, int max)
{
	const char *p = arg;
	int n = 0;

	while (*p) {
		char *end;
		long v;

		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v < 1 || v > MAX_THREADS || n == max)
			return -1;
		out[n++] = (int)v;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return n;
}

void peer_start(FILE *in)
{
	size_t distinct, n;

	read_triples(in);
	distinct = index_triples();
	if (distinct > LIBSELINUX_AVC_NODES)
		fprintf(stderr, PROG ": note: %zu distinct triples exceed the %d entries libselinux 3.4's "
			"AVC holds; calls will miss\n", distinct, LIBSELINUX_AVC_NODES);

	start_avc();

	/* SIDs once, up front, as an object manager keeps them. */
	for (n = 0; n < ntriples; n++) {
		if (avc_context_to_sid(triples[n].scon, &triples[n].ssid) ||
		    avc_context_to_sid(triples[n].tcon, &triples[n].tsid))
			die("avc_context_to_sid failed for stdin line %lu: %s", triples[n].line, strerror(errno));
	}
}

int main(int argc, char **argv)
{
	int threads[MAX_THREAD_COUNTS], nthreads_list, i;
	double seconds;
	char *end;
	size_t n;
	unsigned long warm_misses;
	uint64_t warm_wrong = 0;

	if (argc >= 2 && strcmp(argv[1], "chatroom") == 0)
		return chatroom_main(argc - 1, argv + 1);
	if (argc != 3)
		usage("expected two arguments");
	errno = 0;
	seconds = strtod(argv[1], &end);
	if (errno || end == argv[1] || *end || !isfinite(seconds) || seconds <= 0 || seconds > 86400)
		usage("SECONDS must be a number of seconds > 0");
	nthreads_list = parse_threads(argv[2], threads, MAX_THREAD_COUNTS);
	if (nthreads_list <= 0)
		usage("THREADS must be a comma-separated list of at most 64 thread counts, each in 1..4096");

	peer_start(stdin);

	/* Warm the cache, and prove that misses reach our security server
	 * rather than libselinux's selinuxfs one. */
	for (n = 0; n < ntriples; n++) {
		const struct triple *t = &triples[n];
		struct av_decision avd;

		(void)avc_has_perm_noaudit(t->ssid, t->tsid, t->tclass, t->requested, NULL, &avd);
		warm_wrong += avd.allowed != t->allowed;
	}
	warm_misses = atomic_load(&compute_calls);
	if (warm_misses == 0)
		die("libselinux never called this program's security_compute_av_flags_raw: "
		    "PLT interposition is not in effect, nothing would be measured");
	if (warm_wrong)
		die("%llu of %zu warm-up checks disagreed with the table "
		    "(%lu unknown to the interposed security server)",
		    (unsigned long long)warm_wrong, ntriples, atomic_load(&compute_unknown));

	for (i = 0; i < nthreads_list; i++)
		measure(seconds, threads[i], 0);
	measure(seconds, 1, 1);
	return 0;
}
