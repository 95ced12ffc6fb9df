/* fork is safe: a child forked at any moment, while the parent's threads intern contexts,
 * audit, reset the cache, set callbacks and reload, makes every kind of call without hanging
 * (each child runs under alarm(): a hung child dies of SIGALRM and fails the test).
 *
 *   fork POLICY_A POLICY_B FORKS    (SEACCESS_POLICY unset) the storm above
 *   fork tables POLICY_A POLICY_B FORKS
 *                                   the storm, with one more thread going through the library's
 *                                   own tables (status page, process attributes, configuration,
 *                                   matchpathcon with a fresh handle each pass, restorecon
 *                                   settings), which each child then uses too
 *   fork jit FILE_CONTEXTS FORKS     children forked while two threads open labeling handles on
 *                                   FILE_CONTEXTS, look up a path that compiles each of its
 *                                   expressions and close them (PCRE2's JIT compiles and frees
 *                                   code under one process-wide mutex); each child does the same
 *   SEACCESS_POLICY=BIG fork load FORKS
 *                                   children forked while another thread loads BIG lazily
 *                                   (the first call that needs a policy)
 * Exits 1 if any child hung or failed.
 *
 * Under AddressSanitizer (gcc 12's libasan) the parent's threads make their calls between forks,
 * never across one: that libasan takes no lock of its allocator at fork, so a child forked
 * while another thread is inside its malloc waits forever for the allocator's lock (seen:
 * 1 hung child in 40, its stack in the sanitizer's SizeClassAllocator64 mutex). The ASan run
 * looks for memory errors in the child's calls; the plain run, with 300 children forked at
 * any moment, is the one that finds hangs. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>
#include <selinux/label.h>
#include <selinux/restorecon.h>
#include "seaccess.h"

static const char *S = "system_u:system_r:init_t:s0", *T = "system_u:object_r:shadow_t:s0";
static const char *pol[2];
static atomic_int stop, logged, loads, loading;

#if defined(__SANITIZE_ADDRESS__)
static pthread_rwlock_t between_forks;
static void calls_init(void)
{
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	/* A fork waiting for the workers must not be starved by their next calls. */
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&between_forks, &a);
}
static void enter(void) { pthread_rwlock_rdlock(&between_forks); }
static void leave(void) { pthread_rwlock_unlock(&between_forks); }
static void fork_begin(void) { pthread_rwlock_wrlock(&between_forks); }
static void fork_end(void) { pthread_rwlock_unlock(&between_forks); }
#else
static void calls_init(void) {}
static void enter(void) {}
static void leave(void) {}
static void fork_begin(void) {}
static void fork_end(void) {}
#endif

static int count_log(int type, const char *fmt, ...)
{
	(void)type; (void)fmt;
	atomic_fetch_add(&logged, 1);
	return 0;
}

/* A policyload callback that takes a little time, so that forks land during deliveries. */
static int slow_policyload(int seqno)
{
	(void)seqno;
	atomic_fetch_add(&loads, 1);
	for (volatile int i = 0; i < 20000; i++)
		;
	return 0;
}

static int on_reset(uint32_t e, security_id_t s, security_id_t t, security_class_t c, access_vector_t p, access_vector_t *r)
{
	(void)e; (void)s; (void)t; (void)c; (void)p; (void)r;
	return 0;
}

static void *interner(void *arg)
{
	char ctx[128];
	security_id_t sid, tsid;
	unsigned long n = (unsigned long)arg;
	avc_context_to_sid(T, &tsid);
	while (!atomic_load(&stop)) {
		enter();
		/* New contexts (the SID index grows) and new valid ones (the server's SID table). */
		snprintf(ctx, sizeof ctx, "system_u:system_r:t%lu_%lu:s0", (unsigned long)getpid(), n++);
		avc_context_to_sid(ctx, &sid);
		snprintf(ctx, sizeof ctx, "system_u:system_r:init_t:s0%s", n % 2 ? "" : "-s0:c0");
		if (avc_context_to_sid(ctx, &sid) == 0)
			avc_has_perm(sid, tsid, 3, 1, NULL, NULL);
		selinux_check_access(ctx, T, "file", "read", NULL);
		leave();
	}
	return NULL;
}

static void *auditor(void *arg)
{
	security_id_t s, t;
	(void)arg;
	avc_context_to_sid(S, &s);
	avc_context_to_sid(T, &t);
	while (!atomic_load(&stop)) {
		enter();
		security_class_t c = string_to_security_class("file");
		avc_has_perm(s, t, c, string_to_av_perm(c, "read"), NULL, NULL); /* audited either way */
		selinux_check_access(S, T, "file", "read", NULL);
		leave();
	}
	return NULL;
}

static void *resetter(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		enter();
		avc_reset();
		leave();
		usleep(50);
	}
	return NULL;
}

static void *reloader(void *arg)
{
	(void)arg;
	for (int i = 0; !atomic_load(&stop); i++) {
		enter();
		seaccess_reload_policy(pol[i & 1]);
		leave();
	}
	return NULL;
}

static void *setter(void *arg)
{
	union selinux_callback cb;
	(void)arg;
	while (!atomic_load(&stop)) {
		enter();
		cb.func_log = count_log;
		selinux_set_callback(SELINUX_CB_LOG, cb);
		cb.func_policyload = slow_policyload;
		selinux_set_callback(SELINUX_CB_POLICYLOAD, cb);
		leave();
	}
	return NULL;
}

/* matchpathcon is deprecated in favour of selabel_lookup, and still what programs call. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* The library's own tables, each behind its lock: the status page, the process attributes, the
 * configuration, matchpathcon's handle and restorecon's settings. */
static int table_calls(void)
{
	int bad = 0;
	char *con = NULL;
	selinux_status_open(0);
	bad += selinux_status_updated() < 0;
	bad += getcon(&con) != 0;
	freecon(con);
	bad += setexeccon(NULL) != 0;
	bad += selinux_policy_root() == NULL;
	if (matchpathcon("/etc/passwd", 0, &con) == 0)
		freecon(con);
	const char *none[] = {NULL};
	selinux_restorecon_set_exclude_list(none);
	return bad;
}

static atomic_int with_tables;

static void *tables(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		enter();
		table_calls();
		/* A fresh handle every pass, whose expressions are compiled again on first use: a
		 * child forked during a compile must not wait for it. */
		matchpathcon_fini();
		leave();
	}
	return NULL;
}

/* A labeling handle on the file_contexts named by jit_file, a path looked up that compiles every
 * one of its expressions (the last lines are tried first, and only the first matches it), then
 * closed (their code freed). Returns the number of failed calls. */
static const char *jit_file;
static atomic_int jit_rounds;
static int jit_calls(void)
{
	struct selinux_opt opt = {SELABEL_OPT_PATH, jit_file};
	struct selabel_handle *h = selabel_open(SELABEL_CTX_FILE, &opt, 1);
	if (!h)
		return 1;
	char *con = NULL;
	int bad = selabel_lookup(h, &con, "/srv/none", 0) != 0;
	freecon(con);
	selabel_close(h);
	atomic_fetch_add(&jit_rounds, 1);
	return bad;
}

static void *jitter(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		enter();
		jit_calls();
		leave();
	}
	return NULL;
}

/* Every kind of call, in the child. Returns the number of failed ones. */
static int child_calls(int reload)
{
	security_id_t s, t, fresh;
	union selinux_callback cb;
	int bad = 0;
	char ctx[128];
	snprintf(ctx, sizeof ctx, "system_u:system_r:child%d_t:s0", (int)getpid());
	bad += avc_context_to_sid(ctx, &fresh) != 0;
	bad += avc_context_to_sid(S, &s) != 0;
	bad += avc_context_to_sid(T, &t) != 0;
	int rc = selinux_check_access(S, T, "file", "read", NULL);
	bad += rc != 0 && errno != EACCES;
	security_class_t c = string_to_security_class("file");
	rc = avc_has_perm(s, t, c, string_to_av_perm(c, "read"), NULL, NULL);
	bad += rc != 0 && errno != EACCES;
	cb.func_log = count_log;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	bad += avc_reset() != 0;
	if (reload)
		bad += seaccess_reload_policy(pol[getpid() & 1]) != 0;
	/* The default logger, then a log line through the callback (avc_av_stats logs). */
	cb.func_log = NULL;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	avc_av_stats();
	cb.func_log = count_log;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	avc_sid_stats();
	rc = selinux_check_access(ctx, T, "file", "read", NULL);
	bad += rc == 0; /* child%d_t is no type of either policy */
	if (atomic_load(&with_tables))
		bad += table_calls();
	return bad;
}

/* Waits for a child; returns 0 if it exited 0, else says why and returns 1. */
static int reap(pid_t pid, int i)
{
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st))
		printf("child %d: killed by signal %d%s\n", i, WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (hung)" : "");
	else
		printf("child %d: exit %d\n", i, WEXITSTATUS(st));
	return 1;
}

static pid_t spawn(int reload)
{
	fork_begin();
	pid_t pid = fork();
	if (pid == 0) {
		fork_end();
		alarm(5);
		if (jit_file)
			_exit(jit_calls() ? 3 : 0);
		_exit(child_calls(reload) ? 3 : 0);
	}
	fork_end();
	return pid;
}

static void *first_call(void *arg)
{
	(void)arg;
	atomic_store(&loading, 1);
	is_selinux_enabled(); /* loads SEACCESS_POLICY */
	atomic_store(&stop, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	int failed = 0, forks;
	time_t deadline = time(NULL) + 25;
	setvbuf(stdout, NULL, _IONBF, 0);
	calls_init();

	if (argc == 3 && strcmp(argv[1], "load") == 0 && getenv("SEACCESS_POLICY")) {
		/* Children forked every 2 ms while the first call loads the policy, from 1 ms into it
		 * (the first fork waits for the load to finish; before it did not, and its child hung). */
		pthread_t th;
		forks = atoi(argv[2]);
		pthread_create(&th, NULL, first_call, NULL);
		while (!atomic_load(&loading))
			;
		usleep(1000); /* inside the load (Debian's policy takes longer than that to load) */
		int i;
		for (i = 0; i < forks && !atomic_load(&stop); i++) {
			pid_t pid = spawn(0);
			failed += pid < 0 || reap(pid, i);
			usleep(2000);
		}
		pthread_join(th, NULL);
		printf("fork load: %d children, %d failed\n", i, failed);
		return failed ? 1 : 0;
	}
	if (argc == 4 && strcmp(argv[1], "jit") == 0) {
		jit_file = argv[2];
		forks = atoi(argv[3]);
		if (jit_calls()) {
			fprintf(stderr, "fork jit: %s: no handle, or a lookup failed\n", jit_file);
			return 2;
		}
		pthread_t th[2];
		for (int k = 0; k < 2; k++)
			pthread_create(&th[k], NULL, jitter, NULL);
		int i;
		for (i = 0; i < forks && time(NULL) < deadline; i++) {
			pid_t pid = spawn(0);
			failed += pid < 0 || reap(pid, i);
		}
		atomic_store(&stop, 1);
		for (int k = 0; k < 2; k++)
			pthread_join(th[k], NULL);
		printf("fork jit: %d children, %d failed (parent: %d handles opened, used and closed)\n", i, failed, atomic_load(&jit_rounds));
		return failed || i < forks ? 1 : 0;
	}
	if (argc == 5 && strcmp(argv[1], "tables") == 0) {
		atomic_store(&with_tables, 1);
		argv++;
		argc--;
	}
	if (argc != 4 || getenv("SEACCESS_POLICY")) {
		fprintf(stderr, "usage: fork [tables] POLICY_A POLICY_B FORKS | fork jit FILE_CONTEXTS FORKS | SEACCESS_POLICY=P fork load FORKS\n");
		return 2;
	}
	pol[0] = argv[1];
	pol[1] = argv[2];
	forks = atoi(argv[3]);
	union selinux_callback cb;
	cb.func_log = count_log;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	if (seaccess_load_policy(pol[0]) != 0 || avc_open(NULL, 0) != 0) {
		perror("load");
		return 2;
	}
	avc_add_callback(on_reset, AVC_CALLBACK_RESET, NULL, NULL, 0, 0);
	pthread_t th[7];
	void *(*fn[7])(void *) = {interner, interner, auditor, resetter, reloader, setter, tables};
	int threads = atomic_load(&with_tables) ? 7 : 6;
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, fn[i], (void *)((unsigned long)i * 1000000));
	int i;
	for (i = 0; i < forks && time(NULL) < deadline; i++) {
		pid_t pid = spawn(1);
		failed += pid < 0 || reap(pid, i);
	}
	atomic_store(&stop, 1);
	for (int k = 0; k < threads; k++)
		pthread_join(th[k], NULL);
	printf("fork%s: %d children, %d failed (parent: %d reload notifications, %d log lines)\n", atomic_load(&with_tables) ? " tables" : "", i, failed,
	       atomic_load(&loads), atomic_load(&logged));
	return failed || i < forks ? 1 : 0;
}
