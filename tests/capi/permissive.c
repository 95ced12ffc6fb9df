/* Empty requests, undefined class numbers and unknown names, enforcing and permissive, as
 * libselinux 3.4 answers them (issue 19, item 10).
 *
 *   permissive DENY_POLICY ALLOW_POLICY   (with SEACCESS_POLICY unset)
 *
 * DENY_POLICY is testdata/policies/renumber_a.cil compiled (handle_unknown deny), ALLOW_POLICY
 * unknown.cil (handle_unknown allow); both define u:r:dom_t:s0 and the class `process` with
 * `fork`. The expectations come from libselinux 3.4's source and the kernel's:
 * - avc.c, avc_has_perm_noaudit: after the decision, `if (!requested || denied)` the request is
 *   refused with EACCES when enforcing (and the domain is not permissive), and passes (0) when
 *   not: an empty request and a request the decision does not allow are refused enforcing and
 *   pass permissive.
 * - the kernel's security_compute_av_user: class 0 is allowed everything under handle_unknown
 *   allow and nothing otherwise; a number past the policy's classes is allowed nothing
 *   (context_struct_compute_av: "Invalid class"). So enforcing: refused unless class 0 under
 *   allow; permissive: 0.
 * - checkAccess.c, selinux_check_access: a class or permission name string_to_security_class
 *   or string_to_av_perm does not know is 0 when security_deny_unknown() is 0, else -1 with
 *   their errno (EINVAL), whatever the mode.
 *
 * Prints one line per failed expectation and exits 1 if there was any. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>
#include "seaccess.h"

static int failures;

#define EXPECT(cond, what)                                                                 \
	do {                                                                               \
		if (!(cond)) {                                                             \
			printf("FAIL %s:%d: %s: %s (errno %d)\n", __FILE__, __LINE__, mode, what, errno); \
			failures++;                                                        \
		}                                                                          \
	} while (0)

/* rc is 0 when `pass`, else -1 with errno e. */
#define ANSWERS(call, pass, e, what)                                                       \
	do {                                                                               \
		errno = 0;                                                                 \
		int rc_ = (call);                                                          \
		EXPECT((pass) ? rc_ == 0 : rc_ == -1 && errno == (e), what);               \
	} while (0)

static const char *DOM = "u:r:dom_t:s0";

static void check(const char *policy, int allow_unknown, int enforcing)
{
	char mode[128];
	snprintf(mode, sizeof mode, "%s, %s", policy, enforcing ? "enforcing" : "permissive");
	EXPECT(security_setenforce(enforcing) == 0 && security_getenforce() == enforcing, "setenforce");
	EXPECT(security_deny_unknown() == !allow_unknown, "security_deny_unknown is the policy's");
	security_id_t s = NULL;
	EXPECT(avc_context_to_sid(DOM, &s) == 0, "avc_context_to_sid");
	security_class_t process = string_to_security_class("process");
	access_vector_t fork = string_to_av_perm(process, "fork");
	EXPECT(process && fork, "process fork resolves");
	struct av_decision avd;
	/* Asked twice: the second answer may come from the cache. */
	for (int round = 0; round < 2; round++) {
		ANSWERS(avc_has_perm(s, s, process, fork, NULL, NULL), 1, 0, "process fork is allowed");
		ANSWERS(avc_has_perm(s, s, process, 0, NULL, NULL), !enforcing, EACCES, "avc_has_perm: an empty request");
		ANSWERS(avc_has_perm_noaudit(s, s, process, 0, NULL, &avd), !enforcing, EACCES,
			"avc_has_perm_noaudit: an empty request");
		ANSWERS(avc_has_perm(s, s, 0, fork, NULL, NULL), !enforcing || allow_unknown, EACCES, "avc_has_perm: class 0");
		ANSWERS(avc_has_perm_noaudit(s, s, 0, fork, NULL, &avd), !enforcing || allow_unknown, EACCES,
			"avc_has_perm_noaudit: class 0");
		ANSWERS(avc_has_perm(s, s, 4000, fork, NULL, NULL), !enforcing, EACCES, "avc_has_perm: an undefined class number");
		ANSWERS(avc_has_perm_noaudit(s, s, 4000, fork, NULL, &avd), !enforcing, EACCES,
			"avc_has_perm_noaudit: an undefined class number");
		ANSWERS(avc_has_perm(s, s, 4000, 0, NULL, NULL), !enforcing, EACCES,
			"avc_has_perm: an empty request on an undefined class number");
		ANSWERS(selinux_check_access(DOM, DOM, "process", "fork", NULL), 1, 0, "selinux_check_access process fork");
		ANSWERS(selinux_check_access(DOM, DOM, "no_such_class", "fork", NULL), allow_unknown, EINVAL,
			"selinux_check_access: an unknown class");
		ANSWERS(selinux_check_access(DOM, DOM, "process", "no_such_perm", NULL), allow_unknown, EINVAL,
			"selinux_check_access: an unknown permission");
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 || getenv("SEACCESS_POLICY")) {
		fprintf(stderr, "usage: permissive DENY_POLICY ALLOW_POLICY (with SEACCESS_POLICY unset)\n");
		return 2;
	}
	alarm(30);
	const char *mode = "load";
	EXPECT(seaccess_load_policy(argv[1]) == 0, "load DENY_POLICY");
	EXPECT(avc_open(NULL, 0) == 0, "avc_open");
	check("DENY_POLICY", 0, 1);
	check("DENY_POLICY", 0, 0);
	check("DENY_POLICY", 0, 1);
	EXPECT(seaccess_reload_policy(argv[2]) == 0, "reload ALLOW_POLICY");
	check("ALLOW_POLICY", 1, 1);
	check("ALLOW_POLICY", 1, 0);
	check("ALLOW_POLICY", 1, 1);
	printf("permissive: %s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
