/* Checks racing reloads that renumber classes: no answer of one policy given with another's
 * class numbers (issue 19, item 5).
 *
 *   reload_storm POLICY_A POLICY_B [SECONDS]   (with SEACCESS_POLICY unset)
 *
 * POLICY_A and POLICY_B are testdata/policies/renumber_a.cil and renumber_b.cil compiled: they
 * differ only in the order of `file` and `process` in classorder, so each class has the
 * other's number in the other policy; both allow u:r:dom_t:s0 to `process fork` itself and
 * neither allows it any `file` permission, and `file read` and `process fork` are both bit 0
 * of their class. So under either policy, dom_t to dom_t `file read` is denied (-1, EACCES)
 * and `process fork` allowed (0): an answer the other way round is a class number of one
 * policy paired with a decision of the other.
 *
 * Threads call selinux_check_access for both, with the same buffers (the memo's path) and with
 * fresh copies (the string cache's path), while another thread reloads the two policies back
 * to back for SECONDS (default 3). Every answer must be right. The policies' answers are
 * first checked without reloads running, under each policy, so that the storm's expectations
 * are the policies' own. Then, without reloads running, avc_has_perm with numbers from
 * string_to_security_class and string_to_av_perm right after each reload must answer the same.
 * Every audit record written during the storm must name the class and permission asked for.
 *
 * avc_has_perm during the storm is not checked: its class number and permission bit are the
 * policy's (libselinux's string_to_security_class gives the kernel's numbers when no class map
 * is set), so a number a program resolved before a reload means another class after it, on
 * libselinux as here; a program that reloads renumbering policies resolves them again in its
 * policyload callback, or uses selinux_check_access.
 *
 * Prints one line per failed expectation and exits 1 if there was any; a watchdog (alarm)
 * kills a run that hangs. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>
#include "seaccess.h"

static const char *DOM = "u:r:dom_t:s0";
static const char *pol[2];
static atomic_int stop;
static atomic_long reloads, reload_errors;
#include "expect.h"

/* Both checks write an audit record through the log callback (the denial, and the grant the
 * policies auditallow): each must name what was asked, `denied { read } ... tclass=file` or
 * `granted { fork } ... tclass=process`; one naming the other policy's class is counted. */
static atomic_long records, misnamed;
static char first_misnamed[1024];
static int check_log(int type, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (type != SELINUX_AVC)
		return 0;
	atomic_fetch_add(&records, 1);
	int denial = strstr(buf, "avc:  denied  { read } for ") == buf && strstr(buf, " tclass=file ");
	int grant = strstr(buf, "avc:  granted  { fork } for ") == buf && strstr(buf, " tclass=process\n");
	if (!denial && !grant && atomic_fetch_add(&misnamed, 1) == 0)
		snprintf(first_misnamed, sizeof first_misnamed, "%s", buf);
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* dom_t to dom_t: 1 when the call answered as both policies say (file read denied with EACCES,
 * process fork allowed), 0 otherwise. */
static int file_read_denied(const char *s, const char *t, const char *c, const char *p)
{
	errno = 0;
	int rc = selinux_check_access(s, t, c, p, NULL);
	return rc == -1 && errno == EACCES;
}

static int process_fork_allowed(const char *s, const char *t, const char *c, const char *p)
{
	return selinux_check_access(s, t, c, p, NULL) == 0;
}

struct counts {
	long checks, wrong_grants, wrong_denials;
};

static void *checker(void *arg)
{
	struct counts *n = arg;
	char s[64], t[64], c[32], p[32];
	for (unsigned long i = 0; !atomic_load(&stop); i++) {
		/* Mostly the same buffers (a program passing literals), every eighth query fresh
		 * copies at other addresses (a program building its arguments). */
		int fresh = (i & 7) == 7;
		const char *sc = DOM, *tc = DOM;
		if (fresh) {
			snprintf(s, sizeof s, "%s", DOM);
			snprintf(t, sizeof t, "%s", DOM);
			sc = s;
			tc = t;
		}
		if (fresh) {
			snprintf(c, sizeof c, "file");
			snprintf(p, sizeof p, "read");
		}
		if (!file_read_denied(sc, tc, fresh ? c : "file", fresh ? p : "read"))
			n->wrong_grants++;
		if (fresh) {
			snprintf(c, sizeof c, "process");
			snprintf(p, sizeof p, "fork");
		}
		if (!process_fork_allowed(sc, tc, fresh ? c : "process", fresh ? p : "fork"))
			n->wrong_denials++;
		n->checks += 2;
	}
	return NULL;
}

static void *reloader(void *arg)
{
	double until = *(double *)arg;
	for (int i = 1; now() < until; i++) {
		if (seaccess_reload_policy(pol[i & 1]) != 0)
			atomic_fetch_add(&reload_errors, 1);
		atomic_fetch_add(&reloads, 1);
	}
	atomic_store(&stop, 1);
	return NULL;
}

/* Under the policy loaded now, with no reload running: both answers, by name and by number. */
static void check_quiet(const char *which)
{
	char what[128];
	snprintf(what, sizeof what, "%s: selinux_check_access file read is denied with EACCES", which);
	EXPECT(file_read_denied(DOM, DOM, "file", "read"), what);
	snprintf(what, sizeof what, "%s: selinux_check_access process fork is allowed", which);
	EXPECT(process_fork_allowed(DOM, DOM, "process", "fork"), what);

	security_id_t s = NULL;
	EXPECT(avc_context_to_sid(DOM, &s) == 0, "avc_context_to_sid");
	security_class_t file = string_to_security_class("file"), process = string_to_security_class("process");
	access_vector_t rd = string_to_av_perm(file, "read"), fork = string_to_av_perm(process, "fork");
	EXPECT(file && process && rd && fork, "the names resolve");
	errno = 0;
	snprintf(what, sizeof what, "%s: avc_has_perm file read is denied with EACCES", which);
	EXPECT(avc_has_perm(s, s, file, rd, NULL, NULL) == -1 && errno == EACCES, what);
	snprintf(what, sizeof what, "%s: avc_has_perm process fork is allowed", which);
	EXPECT(avc_has_perm(s, s, process, fork, NULL, NULL) == 0, what);
}

int main(int argc, char **argv)
{
	if (argc < 3 || getenv("SEACCESS_POLICY")) {
		fprintf(stderr, "usage: reload_storm POLICY_A POLICY_B [SECONDS] (with SEACCESS_POLICY unset)\n");
		return 2;
	}
	pol[0] = argv[1];
	pol[1] = argv[2];
	double seconds = argc > 3 ? atof(argv[3]) : 3;
	alarm((unsigned)seconds + 30);
	union selinux_callback cb;
	cb.func_log = check_log;
	selinux_set_callback(SELINUX_CB_LOG, cb);

	/* The premise: the two policies number `file` differently, and each answers as its
	 * source says. */
	EXPECT(seaccess_load_policy(pol[0]) == 0, "load POLICY_A");
	security_class_t file_a = string_to_security_class("file"), process_a = string_to_security_class("process");
	check_quiet("POLICY_A");
	EXPECT(seaccess_reload_policy(pol[1]) == 0, "reload POLICY_B");
	security_class_t file_b = string_to_security_class("file");
	EXPECT(file_a != 0 && file_b != 0 && file_a != file_b && file_b == process_a,
	       "the policies swap the numbers of file and process");
	EXPECT(string_to_av_perm(file_b, "read") == string_to_av_perm(string_to_security_class("process"), "fork"),
	       "file read and process fork are the same bit");
	check_quiet("POLICY_B");
	if (failures)
		return 1;

	/* The storm. */
	enum { CHECKERS = 2 };
	pthread_t th[CHECKERS], r;
	struct counts n[CHECKERS];
	memset(n, 0, sizeof n);
	double until = now() + seconds;
	for (int i = 0; i < CHECKERS; i++)
		pthread_create(&th[i], NULL, checker, &n[i]);
	pthread_create(&r, NULL, reloader, &until);
	pthread_join(r, NULL);
	long checks = 0, grants = 0, denials = 0;
	for (int i = 0; i < CHECKERS; i++) {
		pthread_join(th[i], NULL);
		checks += n[i].checks;
		grants += n[i].wrong_grants;
		denials += n[i].wrong_denials;
	}
	EXPECT(atomic_load(&reload_errors) == 0, "every reload succeeds");
	EXPECT(atomic_load(&reloads) >= 20, "the storm reloaded");
	EXPECT(checks >= 1000, "the storm checked");
	EXPECT(grants == 0, "no file read granted during the reloads");
	EXPECT(denials == 0, "no process fork denied during the reloads");
	EXPECT(atomic_load(&records) >= checks, "every check wrote its record");
	EXPECT(atomic_load(&misnamed) == 0, "every record names the class and permission asked for");
	if (atomic_load(&misnamed))
		printf("  %ld misnamed records of %ld, the first: %s", atomic_load(&misnamed), atomic_load(&records),
		       first_misnamed);

	/* Right after each reload, with none running: the numbers are the new policy's. */
	for (int i = 0; i < 20; i++) {
		EXPECT(seaccess_reload_policy(pol[i & 1]) == 0, "reload");
		check_quiet(i & 1 ? "POLICY_B after the storm" : "POLICY_A after the storm");
	}
	printf("reload_storm: %ld reloads, %ld checks, %ld wrong grants, %ld wrong denials, %ld of %ld records misnamed\n",
	       atomic_load(&reloads), checks, grants, denials, atomic_load(&misnamed), atomic_load(&records));
	return failures ? 1 : 0;
}
