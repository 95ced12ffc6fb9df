/* A context the reloaded policy does not define gets the same answer whether or not the
 * process used it under the policy before (issue 19, item 4).
 *
 *   stale_context POLICY_A POLICY_B   (with SEACCESS_POLICY unset)
 *
 * POLICY_A is testdata/policies/renumber_a.cil compiled, which defines u:r:dom_t:s0 and allows
 * it to `process fork` itself; POLICY_B is example.cil compiled, which has no user `u` (both
 * facts are checked first, with security_check_context and a check under POLICY_A).
 *
 * libselinux on a kernel resolves nothing itself: every check the AVC does not answer from
 * its cache, which a policy load flushes, writes the two context strings to selinuxfs, and the
 * kernel answers EINVAL for a context its policy does not define; the AVC gives -1/EINVAL
 * while enforcing and 0 while permissive (avc.c, avc_has_perm_noaudit: `if (rc && errno ==
 * EINVAL && !avc_enforcing)`). So after the reload, u:r:dom_t:s0 (checked under POLICY_A) and
 * u:object_r:obj_t:s0 (never seen) answer alike: -1/EINVAL enforcing, 0 permissive, through
 * selinux_check_access and avc_has_perm, every time asked; after a reload back to POLICY_A the
 * first answers as it did.
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

#include "expect.h"

/* rc is -1 and errno is e. */
#define FAILS_WITH(call, e, what)                                                          \
	do {                                                                               \
		errno = 0;                                                                 \
		int rc_ = (call);                                                          \
		EXPECT(rc_ == -1 && errno == (e), what);                                   \
	} while (0)

static const char *SEEN = "u:r:dom_t:s0", *UNSEEN = "u:object_r:obj_t:s0";

/* Both contexts, as source and target, with names and with SIDs: the same errno for each. */
static void check_invalid(int enforcing)
{
	security_id_t seen = NULL, unseen = NULL;
	EXPECT(avc_context_to_sid(SEEN, &seen) == 0 && avc_context_to_sid(UNSEEN, &unseen) == 0, "SIDs");
	security_class_t process = string_to_security_class("process");
	access_vector_t fork = string_to_av_perm(process, "fork");
	EXPECT(process && fork, "POLICY_B has process fork");
	for (int round = 0; round < 3; round++) {
		const char *ctx[2] = { SEEN, UNSEEN };
		security_id_t sid[2] = { seen, unseen };
		for (int i = 0; i < 2; i++) {
			char what[160];
			if (enforcing) {
				snprintf(what, sizeof what, "selinux_check_access(%s) fails with EINVAL (round %d)", ctx[i], round);
				FAILS_WITH(selinux_check_access(ctx[i], ctx[i], "process", "fork", NULL), EINVAL, what);
				FAILS_WITH(selinux_check_access(ctx[i], ctx[i], "file", "read", NULL), EINVAL, what);
				snprintf(what, sizeof what, "avc_has_perm(%s) fails with EINVAL (round %d)", ctx[i], round);
				FAILS_WITH(avc_has_perm(sid[i], sid[i], process, fork, NULL, NULL), EINVAL, what);
				FAILS_WITH(avc_has_perm_noaudit(sid[i], sid[i], process, fork, NULL, NULL), EINVAL, what);
			} else {
				snprintf(what, sizeof what, "permissive: selinux_check_access(%s) passes (round %d)", ctx[i], round);
				EXPECT(selinux_check_access(ctx[i], ctx[i], "process", "fork", NULL) == 0, what);
				snprintf(what, sizeof what, "permissive: avc_has_perm(%s) passes (round %d)", ctx[i], round);
				EXPECT(avc_has_perm(sid[i], sid[i], process, fork, NULL, NULL) == 0, what);
			}
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 || getenv("SEACCESS_POLICY")) {
		fprintf(stderr, "usage: stale_context POLICY_A POLICY_B (with SEACCESS_POLICY unset)\n");
		return 2;
	}
	alarm(30);
	EXPECT(seaccess_load_policy(argv[1]) == 0, "load POLICY_A");
	EXPECT(security_check_context(SEEN) == 0, "POLICY_A defines the seen context");
	security_id_t seen = NULL;
	EXPECT(avc_context_to_sid(SEEN, &seen) == 0, "avc_context_to_sid");
	for (int i = 0; i < 3; i++) {
		EXPECT(selinux_check_access(SEEN, SEEN, "process", "fork", NULL) == 0, "POLICY_A: process fork allowed");
		EXPECT(avc_has_perm(seen, seen, string_to_security_class("process"),
				    string_to_av_perm(string_to_security_class("process"), "fork"), NULL, NULL) == 0,
		       "POLICY_A: avc_has_perm process fork allowed");
		FAILS_WITH(selinux_check_access(SEEN, SEEN, "file", "read", NULL), EACCES, "POLICY_A: file read denied");
	}

	EXPECT(seaccess_reload_policy(argv[2]) == 0, "reload POLICY_B");
	FAILS_WITH(security_check_context(SEEN), EINVAL, "POLICY_B does not define the seen context");
	FAILS_WITH(security_check_context(UNSEEN), EINVAL, "POLICY_B does not define the unseen context");
	check_invalid(1);
	EXPECT(security_setenforce(0) == 0, "setenforce 0");
	check_invalid(0);
	EXPECT(security_setenforce(1) == 0, "setenforce 1");
	check_invalid(1);

	/* Back to POLICY_A: valid again, answered as before. */
	EXPECT(seaccess_reload_policy(argv[1]) == 0, "reload POLICY_A");
	for (int i = 0; i < 3; i++) {
		EXPECT(selinux_check_access(SEEN, SEEN, "process", "fork", NULL) == 0, "POLICY_A again: process fork allowed");
		EXPECT(avc_has_perm(seen, seen, string_to_security_class("process"),
				    string_to_av_perm(string_to_security_class("process"), "fork"), NULL, NULL) == 0,
		       "POLICY_A again: avc_has_perm process fork allowed");
		FAILS_WITH(selinux_check_access(SEEN, SEEN, "file", "read", NULL), EACCES, "POLICY_A again: file read denied");
	}
	printf("stale_context: %s\n", failures ? "FAILED" : "all passed");
	return failures ? 1 : 0;
}
