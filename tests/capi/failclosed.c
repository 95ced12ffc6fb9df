/* A process that names a policy (SEACCESS_POLICY) that cannot be loaded fails closed: every
 * check answers -1/EACCES, calls that need a policy -1 with the load's errno, the failure is
 * logged once (naming the file) and the file is not read again, until a load succeeds.
 * The log callback asks is_selinux_enabled() while the failure is being reported: no deadlock.
 *
 *   SEACCESS_POLICY=BAD failclosed MODE ERRNO [POLICY_A]
 * MODE: "repro" (the checks only), or "recover" (then BAD is overwritten with POLICY_A, which
 * must change nothing, and POLICY_A is loaded with seaccess_load_policy, after which the
 * process answers as POLICY_A says: callbacks_a allows init_t to read shadow_t).
 * ERRNO: the errno the load fails with, as a number. Exits 1 on any failed expectation. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>
#include "seaccess.h"

#include "expect.h"

#define FAILS_WITH(call, e)                                                 \
	do {                                                                \
		errno = 0;                                                  \
		int rc_ = (call);                                           \
		EXPECT(rc_ == -1 && errno == (e), #call " fails with " #e); \
	} while (0)

static const char *bad;
static int naming_lines, lines, enabled_in_log = -2;

static int log_cb(int type, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	(void)type;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	lines++;
	if (strstr(line, bad))
		naming_lines++;
	/* A program's logger may ask the library anything, even while it reports its failure. */
	enabled_in_log = is_selinux_enabled();
	return 0;
}

static const char *S = "system_u:system_r:httpd_t:s0", *T = "system_u:object_r:shadow_t:s0";

static void denies_everything(int load_errno)
{
	security_id_t ssid = NULL, tsid = NULL;
	struct av_decision avd;

	FAILS_WITH(selinux_check_access(S, T, "file", "read", NULL), EACCES);
	FAILS_WITH(selinux_check_access(S, T, "file", "nonsense", NULL), EACCES);
	EXPECT(avc_context_to_sid(S, &ssid) == 0 && avc_context_to_sid(T, &tsid) == 0, "SIDs are interned");
	FAILS_WITH(avc_has_perm(ssid, tsid, 1, 1, NULL, NULL), EACCES);
	FAILS_WITH(avc_has_perm_noaudit(ssid, tsid, 1, 1, NULL, &avd), EACCES);
	FAILS_WITH(security_compute_av(S, T, 1, 1, &avd), EACCES);
	FAILS_WITH(security_compute_av_flags(S, T, 1, 1, &avd), EACCES);
	EXPECT(is_selinux_enabled() == 1, "is_selinux_enabled() is 1: SELinux is meant to be on");
	FAILS_WITH(security_getenforce(), load_errno);
	FAILS_WITH(avc_open(NULL, 0), load_errno);
	EXPECT(string_to_security_class("file") == 0, "no class numbers without a policy");
}

int main(int argc, char **argv)
{
	union selinux_callback cb;
	setvbuf(stdout, NULL, _IONBF, 0);

	if (argc < 3 || !(bad = getenv("SEACCESS_POLICY"))) {
		fprintf(stderr, "usage: SEACCESS_POLICY=BAD failclosed repro|recover ERRNO [POLICY_A]\n");
		return 2;
	}
	int load_errno = atoi(argv[2]);
	alarm(20); /* a deadlock fails the test */
	cb.func_log = log_cb;
	selinux_set_callback(SELINUX_CB_LOG, cb);

	for (int i = 0; i < 3; i++)
		denies_everything(load_errno);
	EXPECT(naming_lines == 1, "the failure is logged once, naming the file");
	EXPECT(enabled_in_log == 1, "is_selinux_enabled() from the log callback");

	if (strcmp(argv[1], "recover") == 0 && argc == 4) {
		/* The file now holds a good policy: nothing changes, it is not read again. */
		char cmd[8192];
		snprintf(cmd, sizeof cmd, "cp '%s' '%s'", argv[3], bad);
		EXPECT(system(cmd) == 0, "copy the good policy over the bad file");
		denies_everything(load_errno);
		EXPECT(naming_lines == 1, "still one log line: the file is not read again");

		/* A load that fails keeps the process closed. */
		FAILS_WITH(seaccess_load_policy("/nonexistent/policy.33"), ENOENT);
		FAILS_WITH(selinux_check_access(S, T, "file", "read", NULL), EACCES);

		EXPECT(seaccess_load_policy(argv[3]) == 0, "a later load succeeds");
		EXPECT(selinux_check_access("system_u:system_r:init_t:s0", T, "file", "read", NULL) == 0,
		       "policy A allows init_t to read shadow_t");
		errno = 0;
		EXPECT(selinux_check_access(S, T, "file", "read", NULL) == -1 && errno == EACCES,
		       "policy A does not allow httpd_t to read shadow_t");
		EXPECT(security_getenforce() == 1, "enforcing once loaded");
		EXPECT(is_selinux_enabled() == 1, "enabled once loaded");
	}
	printf("failclosed %s: %d failures, %d log lines\n", argv[1], failures, lines);
	return failures ? 1 : 0;
}
