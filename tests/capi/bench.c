/* selinux_check_access and avc_has_perm, timed: one source, built twice by tests/capi/bench.sh,
 * against libseaccess and (with -DPEER_LIBSELINUX) against libselinux 3.4 itself, answering
 * without a kernel as crates/lab/peers/libselinux-avc does (its README says how): a private
 * selinuxfs directory with enforce, status and the class directory, and this program's own
 * security_compute_av_flags_raw, which libselinux's AVC calls through its PLT on a miss and
 * which answers from the decisions on standard input (libsepol's, from sepol-oracle).
 *
 *   bench classes < "CLASS BIT NAME" lines      (libseaccess only) prints "CLASS VALUE BIT NAME"
 *   bench run CLASSFILE ROUNDS < "SCON TCON CLASS PERM ALLOWED AUDITALLOW AUDITDENY" lines
 *        prints "check_access WALL CPU", "check_access_one_buffer WALL CPU" (each query's strings
 *        copied into one set of buffers before its call), "has_perm_1_thread WALL CPU",
 *        "has_perm_2_threads WALL CPU" (ns per call, all threads' calls counted; CPU is the
 *        process's CPU time) and the numbers
 *        of allowed answers, which must agree between the two libraries.
 *   bench one WHAT CLASSFILE ROUNDS < the same lines
 *        runs only WHAT (loop, has_perm, noaudit, check_access or check_access_one_buffer) ROUNDS
 *        times over the queries
 *        on one thread after the same warming, for callgrind to count (seaccess-lab bench
 *        hit-path, tests/capi/bench-instructions.sh); `loop` reads each query's arguments and
 *        calls nothing, the cost the other three have subtracted. Prints "allowed N". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>

struct q {
	char *s, *t, *cls, *perm;
	security_class_t c;
	access_vector_t av, allowed, auditallow, auditdeny;
	security_id_t ssid, tsid;
};
static struct q *qs;
static size_t nq;
static long rounds;

static void die(const char *m)
{
	fprintf(stderr, "bench: %s: %s\n", m, strerror(errno));
	exit(1);
}

static int null_log(int type, const char *fmt, ...)
{
	(void)type; (void)fmt;
	return 0;
}

static double clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Wall time and the process's CPU time (all threads): on a shared machine the CPU time is what
 * the calls cost, the wall time also what other processes took. */
struct span { double wall, cpu; };
static struct span start(void) { return (struct span){ clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_PROCESS_CPUTIME_ID) }; }
static struct span per_call(struct span t0, double calls)
{
	return (struct span){ (clock_ns(CLOCK_MONOTONIC) - t0.wall) / calls, (clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0.cpu) / calls };
}

#ifdef PEER_LIBSELINUX
/* libselinux's miss path, answered from the table (decisions of the loaded policy). */
int security_compute_av_flags_raw(const char *scon, const char *tcon, security_class_t tclass,
				  access_vector_t requested, struct av_decision *avd)
{
	(void)requested;
	for (size_t i = 0; i < nq; i++)
		if (qs[i].c == tclass && !strcmp(qs[i].s, scon) && !strcmp(qs[i].t, tcon)) {
			avd->allowed = qs[i].allowed;
			avd->decided = ~0U;
			avd->auditallow = qs[i].auditallow;
			avd->auditdeny = qs[i].auditdeny;
			avd->seqno = 0;
			avd->flags = 0;
			return 0;
		}
	errno = EINVAL;
	return -1;
}

static char fsdir[1024];

static void put(const char *path, const void *buf, size_t len, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || (size > len && ftruncate(fd, (off_t)size)))
		die(path);
	close(fd);
}

static void *lock_alloc(void)
{
	pthread_mutex_t *m = malloc(sizeof *m);
	if (m)
		pthread_mutex_init(m, NULL);
	return m;
}
static void lock_get(void *m) { pthread_mutex_lock(m); }
static void lock_release(void *m) { pthread_mutex_unlock(m); }
static void lock_free(void *m) { pthread_mutex_destroy(m); free(m); }

/* A selinuxfs for libselinux: enforcing, a status page, and the class directory. */
static void fake_selinuxfs(const char *classfile)
{
	struct { uint32_t version, sequence, enforcing, policyload, deny_unknown; } __attribute__((packed))
		st = { 1, 0, 1, 0, 1 };
	static const struct avc_lock_callback locks = { lock_alloc, lock_get, lock_release, lock_free };
	char path[2048], cls[256], name[256];
	unsigned value, bit;
	FILE *f;

	snprintf(fsdir, sizeof fsdir, "%s/seaccess-bench.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(fsdir))
		die("mkdtemp");
	snprintf(path, sizeof path, "%s/enforce", fsdir);
	put(path, "1", 1, 0);
	snprintf(path, sizeof path, "%s/status", fsdir);
	put(path, &st, sizeof st, 4096);
	snprintf(path, sizeof path, "%s/class", fsdir);
	mkdir(path, 0700);
	if (!(f = fopen(classfile, "r")))
		die(classfile);
	while (fscanf(f, "%255s %u %u %255s", cls, &value, &bit, name) == 4) {
		char v[16];
		snprintf(path, sizeof path, "%s/class/%s", fsdir, cls);
		mkdir(path, 0700);
		snprintf(path, sizeof path, "%s/class/%s/index", fsdir, cls);
		put(path, v, snprintf(v, sizeof v, "%u", value), 0);
		snprintf(path, sizeof path, "%s/class/%s/perms", fsdir, cls);
		mkdir(path, 0700);
		snprintf(path, sizeof path, "%s/class/%s/perms/%s", fsdir, cls, name);
		put(path, v, snprintf(v, sizeof v, "%u", bit + 1), 0);
	}
	fclose(f);
	set_selinuxmnt(fsdir);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	if (avc_init("avc", NULL, NULL, NULL, &locks) < 0)
		die("avc_init");
#pragma GCC diagnostic pop
}
#endif

static void *has_perm_loop(void *arg)
{
	size_t off = (size_t)arg * 7919, ok = 0;
	for (long r = 0; r < rounds; r++)
		for (size_t i = 0; i < nq; i++) {
			struct q *x = &qs[(i + off) % nq];
			ok += avc_has_perm(x->ssid, x->tsid, x->c, x->av, NULL, NULL) == 0;
		}
	return (void *)ok;
}

static struct span threads_ns(int n, size_t *ok)
{
	pthread_t t[8];
	struct span t0 = start();
	*ok = 0;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, has_perm_loop, (void *)(size_t)i);
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(t[i], &r);
		*ok += (size_t)r;
	}
	return per_call(t0, (double)rounds * (double)nq * n);
}

/* selinux_check_access of query x with its strings copied first into one set of buffers, the
 * same for every query (see main). */
static int check_one_buffer(const struct q *x)
{
	static char s[1024], t[1024], c[256], p[256];
	strcpy(s, x->s);
	strcpy(t, x->t);
	strcpy(c, x->cls);
	strcpy(p, x->perm);
	return selinux_check_access(s, t, c, p, NULL) == 0;
}

/* ROUNDS passes of one kind of check over the queries, on this thread: one loop per kind, so
 * that each pass costs its loop and its check alone. */

static size_t one(const char *what)
{
	size_t ok = 0;
	struct av_decision avd;
	if (!strcmp(what, "loop")) {
		for (long r = 0; r < rounds; r++)
			for (size_t i = 0; i < nq; i++) {
				struct q *x = &qs[i];
				/* The arguments the calls are given, consumed without a call. */
				__asm__ volatile("" : : "r"(x->ssid), "r"(x->tsid), "r"(x->c), "r"(x->av));
				ok++;
			}
	} else if (!strcmp(what, "has_perm")) {
		for (long r = 0; r < rounds; r++)
			for (size_t i = 0; i < nq; i++) {
				struct q *x = &qs[i];
				ok += avc_has_perm(x->ssid, x->tsid, x->c, x->av, NULL, NULL) == 0;
			}
	} else if (!strcmp(what, "noaudit")) {
		for (long r = 0; r < rounds; r++)
			for (size_t i = 0; i < nq; i++) {
				struct q *x = &qs[i];
				ok += avc_has_perm_noaudit(x->ssid, x->tsid, x->c, x->av, NULL, &avd) == 0;
			}
	} else if (!strcmp(what, "check_access_one_buffer")) {
		for (long r = 0; r < rounds; r++)
			for (size_t i = 0; i < nq; i++)
				ok += check_one_buffer(&qs[i]);
	} else {
		for (long r = 0; r < rounds; r++)
			for (size_t i = 0; i < nq; i++) {
				struct q *x = &qs[i];
				ok += selinux_check_access(x->s, x->t, x->cls, x->perm, NULL) == 0;
			}
	}
	return ok;
}

int main(int argc, char **argv)
{
	char a[1024], b[1024], c[256], d[256];
	unsigned x, y, z;
	size_t cap = 0;
	union selinux_callback cb = { .func_log = null_log };

	selinux_set_callback(SELINUX_CB_LOG, cb);
#ifndef PEER_LIBSELINUX
	if (argc == 2 && !strcmp(argv[1], "classes")) {
		while (scanf("%255s %u %255s", c, &x, d) == 3)
			printf("%s %u %u %s\n", c, string_to_security_class(c), x, d);
		return 0;
	}
#endif
	const char *only = NULL;
	if (argc == 5 && !strcmp(argv[1], "one")) {
		only = argv[2];
		if (strcmp(only, "loop") && strcmp(only, "has_perm") && strcmp(only, "noaudit") && strcmp(only, "check_access") &&
		    strcmp(only, "check_access_one_buffer"))
			return 2;
		argv++;
		argc--;
	} else if (argc != 4 || strcmp(argv[1], "run"))
		return 2;
	rounds = atol(argv[3]);
	while (scanf("%1023s %1023s %255s %255s %x %x %x", a, b, c, d, &x, &y, &z) == 7) {
		if (nq == cap && !(qs = realloc(qs, (cap = cap ? 2 * cap : 1024) * sizeof *qs)))
			die("realloc");
		qs[nq] = (struct q){ strdup(a), strdup(b), strdup(c), strdup(d), 0, 0, x, y, z, NULL, NULL };
		nq++;
	}
#ifdef PEER_LIBSELINUX
	fake_selinuxfs(argv[2]);
#else
	if (avc_open(NULL, 0) < 0)
		die("avc_open (set SEACCESS_POLICY)");
#endif
	for (size_t i = 0; i < nq; i++) {
		struct q *q = &qs[i];
		q->c = string_to_security_class(q->cls);
		q->av = q->c ? string_to_av_perm(q->c, q->perm) : 0;
		if (!q->av || avc_context_to_sid(q->s, &q->ssid) < 0 || avc_context_to_sid(q->t, &q->tsid) < 0)
			die("a query names no class, permission or context");
	}
	/* Warm: every triple once, so that both caches hold every decision. */
	size_t ok = 0, ok1, ok2;
	for (size_t i = 0; i < nq; i++)
		ok += selinux_check_access(qs[i].s, qs[i].t, qs[i].cls, qs[i].perm, NULL) == 0;
	if (only) {
		printf("allowed %zu\n", one(only));
		goto out;
	}
	struct span t0 = start();
	size_t okc = 0;
	for (long r = 0; r < rounds; r++)
		for (size_t i = 0; i < nq; i++)
			okc += selinux_check_access(qs[i].s, qs[i].t, qs[i].cls, qs[i].perm, NULL) == 0;
	struct span check = per_call(t0, (double)rounds * (double)nq);
	/* The same checks through one set of buffers: each query's four strings copied into the
	 * same four places before its call, as a daemon asks that reads each peer's context into
	 * the same place (getpeercon, freecon, getpeercon) and names its class and permission
	 * with the same literals: the same pointers every call, other strings. Both libraries pay
	 * the copies. */
	t0 = start();
	size_t okb = 0;
	for (long r = 0; r < rounds; r++)
		for (size_t i = 0; i < nq; i++)
			okb += check_one_buffer(&qs[i]);
	struct span reused = per_call(t0, (double)rounds * (double)nq);
	struct span one = threads_ns(1, &ok1), two = threads_ns(2, &ok2);
	printf("check_access %.1f %.1f\ncheck_access_one_buffer %.1f %.1f\nhas_perm_1_thread %.1f %.1f\nhas_perm_2_threads %.1f %.1f\n",
	       check.wall, check.cpu, reused.wall, reused.cpu, one.wall, one.cpu, two.wall, two.cpu);
	printf("allowed %zu %zu %zu %zu %zu\n", ok, okc / rounds, okb / rounds, ok1 / rounds, ok2 / rounds / 2);
out:
#ifdef PEER_LIBSELINUX
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fsdir);
	if (system(cmd) != 0)
		return 1;
#endif
	return 0;
}
