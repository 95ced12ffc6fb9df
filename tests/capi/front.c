/* avc_has_perm's and selinux_check_access's per-thread front (crates/capi/src/front.rs,
 * front/query.rs) answers only what the cache would answer now, whatever the program does
 * between two checks.
 *
 *   front FRONT_A FRONT_B   (with SEACCESS_POLICY unset)
 *
 * FRONT_A and FRONT_B are testdata/policies/front_a.cil and front_b.cil compiled: the same
 * policy with `process` and `file` swapped in classorder, dom_t allowed `process fork` on itself
 * (auditing nothing) and nothing on `file`; fork and read are bit 0 of their class, so FRONT_A's
 * number for `process` with bit 0 is FRONT_B's `file read`, denied. Every expectation is the
 * security server's own answer (security_compute_av), asked past the cache, or libselinux 3.4's
 * documented behaviour (avc_destroy frees the SIDs; avc_reset empties the cache, so the next
 * check is a miss). Each case first asks a grant three times, so that the thread's front holds
 * it (the first ask goes the full way, the second fills the front from the cache), then:
 * - avc_reset: the next check is counted a miss (it was not answered from the front);
 * - a reload that renumbers: the same numbers are denied (avc_has_perm and _noaudit);
 * - avc_destroy: the SID pointer the front was filled with is EINVAL;
 * - a signal handler checking (and filling the front) while the thread is inside its front,
 *   both by SIDs (avc_has_perm) and by strings (selinux_check_access): every answer of both
 *   is the server's;
 * - 100 threads at once (more than there are fronts) and waves of short-lived ones, checking
 *   both ways: the same;
 * - selinux_set_mapping: the same numbers mean the program's classes and are decided so.
 *
 * Prints one line per failed expectation and exits 1 if there was any. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>
#include "seaccess.h"

#include "expect.h"

static const char *DOM = "u:r:dom_t:s0";

static int quiet_log(int type, const char *fmt, ...)
{
	(void)type, (void)fmt;
	return 0;
}

static security_id_t sid_of(const char *ctx)
{
	security_id_t s = NULL;
	EXPECT(avc_context_to_sid(ctx, &s) == 0, ctx);
	return s;
}

/* The server's answer, past the cache: 0 when every bit of `perm` is allowed. */
static int server(const char *s, const char *t, security_class_t c, access_vector_t perm)
{
	struct av_decision avd;
	if (security_compute_av(s, t, c, perm, &avd) != 0)
		return -2;
	return (avd.allowed & perm) == perm ? 0 : -1;
}

static unsigned misses(void)
{
	struct avc_cache_stats st;
	avc_cache_stats(&st);
	return st.cav_misses;
}

/* Asks until the front holds it (see the top). */
static void warm(security_id_t s, security_class_t c, access_vector_t perm, const char *what)
{
	for (int i = 0; i < 3; i++)
		EXPECT(avc_has_perm(s, s, c, perm, NULL, NULL) == 0, what);
}

/* The signal case: the main thread checks the pairs below, a signal handler interrupting it
 * checks those allowed, each pair's expected answer the server's. */
#define PAIRS 24
static security_id_t psid[PAIRS][2];
static const char *pctx[PAIRS][2];
static int pwant[PAIRS];
static security_class_t pclass;
static access_vector_t pperm;
static volatile sig_atomic_t handler_wrong, handler_calls;

/* Checks only the pairs allowed: a grant in the cache takes no lock and allocates nothing,
 * where a denial's audit record is formatted in allocated memory (which a handler interrupting
 * malloc must not touch, with libseaccess as with any library). */
static void handler(int sig)
{
	(void)sig;
	int saved = errno;
	for (int i = 0; i < PAIRS; i++)
		if (pwant[i] == 0 && (avc_has_perm(psid[i][0], psid[i][1], pclass, pperm, NULL, NULL) != 0 ||
				      selinux_check_access(pctx[i][0], pctx[i][1], "process", "fork", NULL) != 0))
			handler_wrong++;
	handler_calls++;
	errno = saved;
}

static volatile int stop;
static pthread_t main_thread;

static void *signaller(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_kill(main_thread, SIGUSR1);
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void signals(void)
{
	const char *ctx[] = { "u:r:dom_t:s0", "u:r:dom_t:s0:c0", "u:object_r:obj_t:s0", "u:object_r:obj_t:s0:c0",
			      "u:object_r:dom_t:s0", "u:r:dom_t:s0-s0:c0" };
	int n = sizeof ctx / sizeof ctx[0];
	pclass = string_to_security_class("process");
	pperm = string_to_av_perm(pclass, "fork");
	int allowed = 0;
	for (int i = 0; i < PAIRS; i++) {
		const char *a = ctx[i % n], *b = ctx[(i / n + i) % n];
		psid[i][0] = sid_of(a);
		psid[i][1] = sid_of(b);
		pctx[i][0] = a;
		pctx[i][1] = b;
		pwant[i] = server(a, b, pclass, pperm);
		EXPECT(pwant[i] != -2, "security_compute_av");
		allowed += pwant[i] == 0;
		/* Warm the cache (and the front) before the storm: the handler's checks are then
		 * hits, which take no lock and allocate nothing. */
		for (int k = 0; k < 3; k++) {
			avc_has_perm(psid[i][0], psid[i][1], pclass, pperm, NULL, NULL);
			selinux_check_access(a, b, "process", "fork", NULL);
		}
	}
	EXPECT(allowed > 0 && allowed < PAIRS, "the pairs mix grants and denials");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	main_thread = pthread_self();
	pthread_t t;
	pthread_create(&t, NULL, signaller, NULL);
	long wrong = 0, checks = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int r = 0; r < 1000; r++)
			for (int i = 0; i < PAIRS; i++, checks += 2)
				if ((avc_has_perm(psid[i][0], psid[i][1], pclass, pperm, NULL, NULL) == 0 ? 0 : -1) != pwant[i] ||
				    (selinux_check_access(pctx[i][0], pctx[i][1], "process", "fork", NULL) == 0 ? 0 : -1) !=
					    pwant[i])
					wrong++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 1000000000L);
	stop = 1;
	pthread_join(t, NULL);
	signal(SIGUSR1, SIG_IGN);
	EXPECT(wrong == 0, "the thread's answers under signals are the server's");
	EXPECT(handler_wrong == 0, "the signal handler's answers are the server's");
	EXPECT(handler_calls > 100, "the handler ran");
	printf("front: signals: %ld checks, %d handler runs, %ld and %d wrong\n", checks, (int)handler_calls,
	       wrong, (int)handler_wrong);
}

/* Threads: more at once than there are fronts (64), and waves of short-lived ones whose
 * identities later threads reuse (taking over a dead thread's front): every answer the
 * server's. Run after `signals`, whose pairs and expectations it reuses. */
static volatile int threads_wrong;

static void *checker(void *arg)
{
	(void)arg;
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < PAIRS; i++)
			if ((avc_has_perm(psid[i][0], psid[i][1], pclass, pperm, NULL, NULL) == 0 ? 0 : -1) != pwant[i] ||
			    (selinux_check_access(pctx[i][0], pctx[i][1], "process", "fork", NULL) == 0 ? 0 : -1) != pwant[i])
				__atomic_add_fetch(&threads_wrong, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void threads(void)
{
	enum { AT_ONCE = 100, WAVES = 20 };
	pthread_t t[AT_ONCE];
	for (int w = 0; w < WAVES; w++) {
		int n = w == 0 ? AT_ONCE : 8;
		for (int i = 0; i < n; i++)
			EXPECT(pthread_create(&t[i], NULL, checker, NULL) == 0, "pthread_create");
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	}
	EXPECT(threads_wrong == 0, "every thread's answers are the server's");
	printf("front: threads: %d threads (%d at once), %d wrong\n", AT_ONCE + 8 * (WAVES - 1), AT_ONCE,
	       (int)threads_wrong);
}

int main(int argc, char **argv)
{
	if (argc != 3 || getenv("SEACCESS_POLICY")) {
		fprintf(stderr, "usage: front FRONT_A FRONT_B (with SEACCESS_POLICY unset)\n");
		return 2;
	}
	alarm(60);
	union selinux_callback cb = { .func_log = quiet_log };
	selinux_set_callback(SELINUX_CB_LOG, cb);
	EXPECT(seaccess_load_policy(argv[1]) == 0, "load FRONT_A");
	EXPECT(avc_open(NULL, 0) == 0, "avc_open");
	security_class_t process = string_to_security_class("process");
	access_vector_t fork = string_to_av_perm(process, "fork");
	EXPECT(process && fork == 1, "FRONT_A: process fork is bit 0");
	EXPECT(server(DOM, DOM, process, fork) == 0, "FRONT_A allows dom_t process fork");
	security_id_t s = sid_of(DOM);

	/* avc_reset: the next check misses. */
	warm(s, process, fork, "warm before avc_reset");
	EXPECT(avc_reset() == 0, "avc_reset");
	unsigned before = misses();
	EXPECT(avc_has_perm(s, s, process, fork, NULL, NULL) == 0, "after avc_reset: allowed");
	EXPECT(misses() == before + 1, "after avc_reset: the check was a miss of the cache");

	/* A reload that renumbers, asked through avc_has_perm and avc_has_perm_noaudit (whose
	 * decision the front reports too). */
	warm(s, process, fork, "warm before the reload");
	struct av_decision nd;
	EXPECT(avc_has_perm_noaudit(s, s, process, fork, NULL, &nd) == 0 && (nd.allowed & fork),
	       "noaudit from the front: allowed");
	EXPECT(seaccess_reload_policy(argv[2]) == 0, "reload FRONT_B");
	EXPECT(server(DOM, DOM, process, fork) == -1, "FRONT_B: the same numbers are denied");
	errno = 0;
	EXPECT(avc_has_perm_noaudit(s, s, process, fork, NULL, &nd) == -1 && errno == EACCES && !(nd.allowed & fork),
	       "after the reload: noaudit does not use FRONT_A's grant");
	errno = 0;
	EXPECT(avc_has_perm(s, s, process, fork, NULL, NULL) == -1 && errno == EACCES,
	       "after the reload: FRONT_A's grant is not used");
	EXPECT(seaccess_reload_policy(argv[1]) == 0, "reload FRONT_A");

	/* avc_destroy frees the SIDs: the pointer the front was filled with is EINVAL. */
	warm(s, process, fork, "warm before avc_destroy");
	avc_destroy();
	errno = 0;
	EXPECT(avc_has_perm(s, s, process, fork, NULL, NULL) == -1 && errno == EINVAL,
	       "after avc_destroy: the old SID is EINVAL");
	EXPECT(avc_open(NULL, 0) == 0, "avc_open again");
	s = sid_of(DOM);

	signals();
	threads();

	/* A class mapping in which FRONT_A's number of `process` is the program's `file`. */
	warm(s, process, fork, "warm before selinux_set_mapping");
	struct security_class_mapping map[] = { { "security", { "compute_av", NULL } },
						{ "file", { "read", NULL } },
						{ "process", { "fork", NULL } },
						{ NULL, { NULL } } };
	security_class_t raw = process;
	EXPECT(raw == 2, "FRONT_A numbers process 2");
	EXPECT(selinux_set_mapping(map) == 0, "selinux_set_mapping");
	EXPECT(string_to_security_class("file") == 2, "the program's file is 2");
	errno = 0;
	EXPECT(avc_has_perm(s, s, raw, 1, NULL, NULL) == -1 && errno == EACCES,
	       "after selinux_set_mapping: class 2 bit 0 is the program's file read, denied");
	EXPECT(avc_has_perm(s, s, 3, 1, NULL, NULL) == 0, "the program's process fork is allowed");

	printf("front: %s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
