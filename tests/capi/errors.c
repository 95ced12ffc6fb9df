/* Error conventions of libseaccess, written against libselinux's headers (and seaccess.h for
 * loading the policy): without a policy every call fails as libselinux 3.4's does on a kernel
 * without SELinux; NULL and invalid arguments give -1 and EINVAL, never a crash.
 *
 *   errors POLICY   (with SEACCESS_POLICY unset)
 * Prints one line per failed expectation and exits 1 if there was any. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>
#include "seaccess.h"

/* sidget and sidput are deprecated in libselinux, and still part of its API. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "expect.h"

/* rc is -1 and errno is e. */
#define FAILS_WITH(call, e)                                                       \
	do {                                                                      \
		errno = 0;                                                        \
		int rc_ = (call);                                                 \
		EXPECT(rc_ == -1 && errno == (e), #call " fails with " #e);       \
	} while (0)

static char last_log[2048];
static int policyloads, last_seqno, setenforces, resets;

static int capture_log(int type, const char *fmt, ...)
{
	va_list ap;
	(void)type;
	va_start(ap, fmt);
	vsnprintf(last_log, sizeof last_log, fmt, ap);
	va_end(ap);
	return 0;
}

static int audit_supplement(void *data, security_class_t cls, char *buf, size_t len)
{
	(void)cls;
	snprintf(buf, len, "%s", (const char *)data);
	return 0;
}

static int on_policyload(int seqno)
{
	policyloads++;
	last_seqno = seqno;
	return 0;
}

static int on_setenforce(int enforcing)
{
	(void)enforcing;
	setenforces++;
	return 0;
}

static int on_reset(uint32_t event, security_id_t s, security_id_t t, security_class_t c, access_vector_t p,
		    access_vector_t *r)
{
	(void)s; (void)t; (void)c; (void)p; (void)r;
	if (event == AVC_CALLBACK_RESET)
		resets++;
	return 0;
}

int main(int argc, char **argv)
{
	struct av_decision avd;
	char *con = NULL;
	security_id_t sid = NULL, sid2 = NULL;
	union selinux_callback cb;

	if (argc != 2 || getenv("SEACCESS_POLICY")) {
		fprintf(stderr, "usage: errors POLICY (with SEACCESS_POLICY unset)\n");
		return 2;
	}
	cb.func_log = capture_log;
	selinux_set_callback(SELINUX_CB_LOG, cb);

	/* No policy: libselinux 3.4 without selinuxfs. */
	EXPECT(is_selinux_enabled() == 0, "is_selinux_enabled is 0 without a policy");
	FAILS_WITH(security_compute_av("a", "b", 1, 0, &avd), ENOENT);
	FAILS_WITH(security_compute_av_flags_raw("a", "b", 1, 0, &avd), ENOENT);
	FAILS_WITH(security_compute_create("a", "b", 1, &con), ENOENT);
	FAILS_WITH(security_compute_relabel("a", "b", 1, &con), ENOENT);
	FAILS_WITH(security_compute_member("a", "b", 1, &con), ENOENT);
	FAILS_WITH(security_validatetrans("a", "b", 1, "c"), ENOENT);
	FAILS_WITH(security_check_context("a"), ENOENT);
	FAILS_WITH(security_canonicalize_context("a", &con), ENOENT);
	FAILS_WITH(security_getenforce(), ENOENT);
	FAILS_WITH(security_setenforce(0), ENOENT);
	FAILS_WITH(security_deny_unknown(), ENOENT);
	FAILS_WITH(security_policyvers(), ENOENT);
	FAILS_WITH(security_set_boolean("x", 1), ENOENT);
	FAILS_WITH(security_commit_booleans(), ENOENT);
	FAILS_WITH(security_get_boolean_active("x"), ENOENT);
	{
		char **names;
		int len;
		FAILS_WITH(security_get_boolean_names(&names, &len), ENOENT);
	}
	FAILS_WITH(avc_open(NULL, 0), ENOENT);
	errno = 0;
	EXPECT(string_to_security_class("file") == 0 && errno == EINVAL, "string_to_security_class: 0, EINVAL");
	EXPECT(security_class_to_string(1) == NULL, "security_class_to_string is NULL");
	EXPECT(selinux_check_access("a", "b", "file", "read", NULL) == 0, "selinux_check_access allows when disabled");
	FAILS_WITH(seaccess_load_policy("/nonexistent/policy"), ENOENT);
	FAILS_WITH(seaccess_load_policy(NULL), EINVAL);
	FAILS_WITH(seaccess_load_policy("/etc/hostname"), EINVAL);
	EXPECT(is_selinux_enabled() == 0, "a failed load loads nothing");

	/* With a policy. */
	EXPECT(seaccess_load_policy(argv[1]) == 0, "seaccess_load_policy");
	EXPECT(is_selinux_enabled() == 1, "is_selinux_enabled is 1 with a policy");
	EXPECT(security_getenforce() == 1, "enforcing at load");
	EXPECT(avc_open(NULL, 0) == 0, "avc_open");
	EXPECT(security_policyvers() >= 33, "security_policyvers");
	cb.func_policyload = on_policyload;
	selinux_set_callback(SELINUX_CB_POLICYLOAD, cb);
	cb.func_setenforce = on_setenforce;
	selinux_set_callback(SELINUX_CB_SETENFORCE, cb);
	EXPECT(avc_add_callback(on_reset, AVC_CALLBACK_RESET, NULL, NULL, 0, 0) == 0, "avc_add_callback");

	const char *s = "system_u:system_r:init_t:s0", *t = "system_u:object_r:shadow_t:s0";
	security_class_t file = string_to_security_class("file");
	EXPECT(file != 0 && strcmp(security_class_to_string(file), "file") == 0, "file class round trip");
	access_vector_t rd = string_to_av_perm(file, "read");
	EXPECT(rd != 0 && strcmp(security_av_perm_to_string(file, rd), "read") == 0, "read perm round trip");
	errno = 0;
	EXPECT(string_to_av_perm(file, "no_such_perm") == 0 && errno == EINVAL, "unknown perm: 0, EINVAL");
	errno = 0;
	EXPECT(string_to_security_class("no_such_class") == 0 && errno == EINVAL, "unknown class: 0, EINVAL");
	EXPECT(string_to_security_class(NULL) == 0 && errno == EINVAL, "NULL class name: 0, EINVAL");

	/* A class number the policy does not define: the kernel's selinuxfs answers nothing allowed
	 * (services.c, security_compute_av_user), and the AVC refuses. */
	memset(&avd, 0xff, sizeof avd);
	EXPECT(security_compute_av(s, t, 4000, rd, &avd) == 0 && avd.allowed == 0 && avd.decided == 0xffffffff,
	       "an undefined class number: nothing allowed");
	EXPECT(avc_context_to_sid(s, &sid) == 0 && avc_context_to_sid(t, &sid2) == 0, "SIDs for the undefined class");
	FAILS_WITH(avc_has_perm_noaudit(sid, sid2, 4000, 1, NULL, &avd), EACCES);
	sid = sid2 = NULL;

	/* NULL and invalid arguments. */
	FAILS_WITH(security_compute_av(NULL, t, file, rd, &avd), EINVAL);
	FAILS_WITH(security_compute_av(s, NULL, file, rd, &avd), EINVAL);
	FAILS_WITH(security_compute_av(s, t, file, rd, NULL), EINVAL);
	FAILS_WITH(security_compute_av("not a context", t, file, rd, &avd), EINVAL);
	FAILS_WITH(security_compute_av("system_u:system_r:no_such_t:s0", t, file, rd, &avd), EINVAL);
	FAILS_WITH(security_compute_create(s, t, file, NULL), EINVAL);
	FAILS_WITH(security_compute_create(NULL, t, file, &con), EINVAL);
	FAILS_WITH(security_compute_relabel(s, "junk", file, &con), EINVAL);
	FAILS_WITH(security_compute_member(s, t, file, NULL), EINVAL);
	FAILS_WITH(security_check_context(NULL), EINVAL);
	FAILS_WITH(security_check_context("user_u:bogus_r:x_t:s0"), EINVAL);
	EXPECT(security_check_context(s) == 0, "a valid context checks");
	FAILS_WITH(security_canonicalize_context(s, NULL), EINVAL);
	FAILS_WITH(security_validatetrans(NULL, t, file, s), EINVAL);
	FAILS_WITH(security_set_boolean("no_such_boolean", 1), ENOENT);
	FAILS_WITH(security_get_boolean_active("no_such_boolean"), ENOENT);
	FAILS_WITH(security_get_boolean_pending(NULL), EINVAL);
	FAILS_WITH(security_get_boolean_names(NULL, NULL), EINVAL);
	FAILS_WITH(security_av_string(file, rd, NULL), EINVAL);
	FAILS_WITH(avc_context_to_sid(NULL, &sid), EINVAL);
	FAILS_WITH(avc_context_to_sid(s, NULL), EINVAL);
	FAILS_WITH(avc_sid_to_context(NULL, &con), EINVAL);
	FAILS_WITH(avc_has_perm(NULL, NULL, file, rd, NULL, NULL), EINVAL);
	FAILS_WITH(avc_has_perm_noaudit(NULL, NULL, file, rd, NULL, &avd), EINVAL);
	FAILS_WITH(selinux_check_access(NULL, t, "file", "read", NULL), EINVAL);
	FAILS_WITH(selinux_check_access(s, t, NULL, "read", NULL), EINVAL);
	FAILS_WITH(avc_open(NULL, 1), EINVAL);
	FAILS_WITH(avc_get_initial_sid(NULL, &sid), EINVAL);
	FAILS_WITH(avc_get_initial_sid("no_such_isid", &sid), ENOENT);
	{
		/* A pointer that is no SID of the library's: refused without being read. */
		struct security_id fake = { "system_u:system_r:init_t:s0", 1 };
		FAILS_WITH(avc_has_perm(&fake, &fake, file, rd, NULL, NULL), EINVAL);
		FAILS_WITH(sidget(&fake), EINVAL);
		FAILS_WITH(avc_sid_to_context((security_id_t)((char *)&fake + 1), &con), EINVAL);
	}

	/* SIDs: one per context, readable ->ctx, counted references. */
	EXPECT(avc_context_to_sid(s, &sid) == 0 && sid && strcmp(sid->ctx, s) == 0, "avc_context_to_sid");
	EXPECT(avc_context_to_sid(s, &sid2) == 0 && sid2 == sid, "one SID per context");
	EXPECT(avc_sid_to_context(sid, &con) == 0 && strcmp(con, s) == 0, "avc_sid_to_context");
	freecon(con);
	con = NULL;
	{
		unsigned before = sid->refcnt;
		EXPECT(sidget(sid) == (int)before + 1 && sid->refcnt == before + 1, "sidget counts");
		EXPECT(sidput(sid) == (int)before && sid->refcnt == before, "sidput counts");
	}
	EXPECT(avc_get_initial_sid("kernel", &sid2) == 0 && sid2->ctx[0], "avc_get_initial_sid(kernel)");

	/* A denial is refused with EACCES and audited in libselinux's text. */
	EXPECT(avc_context_to_sid(t, &sid2) == 0, "target SID");
	access_vector_t ex = string_to_av_perm(file, "execute");
	errno = 0;
	last_log[0] = 0;
	cb.func_audit = audit_supplement;
	selinux_set_callback(SELINUX_CB_AUDIT, cb);
	{
		const char *tt = "system_u:object_r:etc_t:s0";
		security_id_t user, etc;
		EXPECT(avc_context_to_sid("user_u:user_r:user_t:s0", &user) == 0 && avc_context_to_sid(tt, &etc) == 0, "SIDs");
		access_vector_t wr = string_to_av_perm(file, "write");
		int rc = avc_has_perm(user, etc, file, wr, NULL, "pid=42 comm=\"errors\"");
		EXPECT(rc == -1 && errno == EACCES, "user_t may not write etc_t: EACCES");
		EXPECT(strcmp(last_log, "avc:  denied  { write } for pid=42 comm=\"errors\" scontext=user_u:user_r:user_t:s0 "
					"tcontext=system_u:object_r:etc_t:s0 tclass=file permissive=0\n") == 0,
		       "the denial's record in libselinux's text");
		if (strncmp(last_log, "avc:  denied", 12))
			printf("  got: %s", last_log);
		EXPECT(selinux_check_access("user_u:user_r:user_t:s0", tt, "file", "write", NULL) == -1 && errno == EACCES,
		       "selinux_check_access denies with EACCES");
		EXPECT(selinux_check_access("user_u:user_r:user_t:s0", tt, "file", "read", NULL) == 0,
		       "selinux_check_access allows user_t to read etc_t");
		EXPECT(avc_has_perm(user, etc, file, 0, NULL, NULL) == -1 && errno == EACCES,
		       "an empty request is refused while enforcing");
		/* Permissive mode: granted, audited with permissive=1, callback told. */
		EXPECT(security_setenforce(0) == 0 && security_getenforce() == 0, "setenforce 0");
		EXPECT(setenforces == 1, "the setenforce callback is told");
		EXPECT(avc_has_perm(user, etc, file, wr, NULL, "x") == 0, "permissive: granted");
		EXPECT(strstr(last_log, "permissive=1") != NULL, "permissive=1 in the record");
		EXPECT(security_setenforce(1) == 0, "setenforce 1");
		EXPECT(avc_has_perm(user, etc, file, wr, NULL, NULL) == -1 && errno == EACCES, "enforcing again: denied");
		EXPECT(avc_has_perm_noaudit(user, etc, file, wr, NULL, &avd) == -1 && errno == EACCES &&
			       !(avd.allowed & wr) && (avd.allowed & string_to_av_perm(file, "read")),
		       "avc_has_perm_noaudit fills the decision");
	}
	(void)ex;
	{
		char *str = NULL;
		EXPECT(security_av_string(file, rd | string_to_av_perm(file, "write"), &str) == 0 &&
			       strcmp(str, "{ read write }") == 0, "security_av_string");
		free(str);
		EXPECT(security_av_string(file, 0, &str) == 0 && strcmp(str, "null") == 0, "security_av_string(0)");
		free(str);
	}
	{
		struct avc_cache_stats st;
		avc_cache_stats(&st);
		EXPECT(st.entry_lookups > 0 && st.cav_misses > 0, "avc_cache_stats counts");
	}

	/* Booleans: pending, commit, policyload. */
	{
		char **names = NULL;
		int len = 0;
		EXPECT(security_get_boolean_names(&names, &len) == 0 && len > 0, "security_get_boolean_names");
		if (len > 0) {
			const char *b = names[0];
			int v = security_get_boolean_active(b);
			EXPECT(v == 0 || v == 1, "security_get_boolean_active");
			FAILS_WITH(security_set_boolean(b, 2), EINVAL);
			EXPECT(security_set_boolean(b, !v) == 0, "security_set_boolean");
			EXPECT(security_get_boolean_pending(b) == !v && security_get_boolean_active(b) == v, "pending, not active");
			int loads = policyloads, rs = resets;
			EXPECT(security_commit_booleans() == 0 && security_get_boolean_active(b) == !v, "commit");
			EXPECT(policyloads == loads + 1 && resets == rs + 1, "a commit is a policyload and a reset");
		}
		freeconary(names);
	}
	{
		int loads = policyloads;
		EXPECT(seaccess_reload_policy(argv[1]) == 0, "seaccess_reload_policy");
		EXPECT(policyloads == loads + 1 && last_seqno > 1, "a reload is a policyload with the new seqno");
		EXPECT(selinux_check_access("user_u:user_r:user_t:s0", "system_u:object_r:etc_t:s0", "file", "read", NULL) == 0,
		       "answers after the reload");
	}
	EXPECT(avc_reset() == 0, "avc_reset");
	avc_destroy();
	if (failures)
		printf("errors: %d failures\n", failures);
	else
		printf("errors: all passed\n");
	return failures ? 1 : 0;
}
