/* selinux_set_mapping: a program's own class and permission numbering, as libselinux 3.4's
 * mapping.c gives it to every call that takes or returns class numbers or permission bits.
 *
 *   mapping ALLOW_POLICY DENY_POLICY REJECT_POLICY RENUMBER_A RENUMBER_B
 *
 * ALLOW, DENY and REJECT are testdata/policies/unknown.cil, unknown_deny.cil and
 * unknown_reject.cil compiled (handle_unknown allow, deny, reject; each defines `process` and
 * `file (read write getattr)`, u:r:dom_t:s0 and u:object_r:obj_t:s0); RENUMBER_A and _B
 * renumber_a.cil and renumber_b.cil (the same policy with `process` and `file` swapped in
 * classorder). Every expected answer is the same library's answer without a map (itself
 * compared with libsepol by run.sh), turned into the program's numbering by mapping.c's rules:
 * - string_to_security_class: the first entry naming the class, 0/EINVAL for a class the map
 *   or the policy lacks; string_to_av_perm: the program's bit, 0/EINVAL for a permission the
 *   map or the policy lacks; the _to_string calls name what the numbers map to, NULL for a
 *   class or permission the policy lacks;
 * - map_decision: a program bit is allowed (decided) when its policy bit is, or when the policy
 *   lacks it and handle_unknown is allow; audited on denial when its bit is, or when the policy
 *   lacks it and handle_unknown is not allow; bits past the program's permissions always
 *   audited; a class the policy lacks is class 0 to the kernel (everything allowed under allow,
 *   nothing otherwise);
 * - avc_has_perm: refused (EACCES, enforcing) when a requested program bit is not allowed;
 * - selinux_check_access: a name string_to_security_class or string_to_av_perm answers 0 for is
 *   0 when security_deny_unknown() is 0, else -1/EINVAL, whatever the contexts (checked before
 *   them; see check_access_order);
 * - set under handle_unknown reject with a name the policy lacks: -1, and no map is left.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>
#include "seaccess.h"
#include "expect.h"

static const char *DOM = "u:r:dom_t:s0", *OBJ = "u:object_r:obj_t:s0";
static char logged[8192];

static int log_line(int type, const char *fmt, ...)
{
	size_t n = strlen(logged);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(logged + n, sizeof logged - n, fmt, ap);
	va_end(ap);
	return 0;
}

static struct security_class_mapping MAP[] = {
	{"process", {"signal", "fork", NULL}},
	{"file", {"write", "read", "nosuch", "getattr", NULL}},
	{"nosuchclass", {"x", NULL}},
	{NULL, {NULL}},
};

/* The program's bit `bit` is set in `v` exactly when `want`. */
#define BIT(v, bit, want) ((((v) >> (bit)) & 1) == !!(want))

/* A selinux_check_access `call` that handle_unknown answers: 0 when the policy allows unknown
 * permissions, else -1/EINVAL. */
#define BY_HANDLE_UNKNOWN(allow_unknown, call, what)                                           \
	do {                                                                                   \
		errno = 0;                                                                     \
		int rc_ = (call);                                                              \
		EXPECT((allow_unknown) ? rc_ == 0 : rc_ == -1 && errno == EINVAL, what);       \
	} while (0)

/* selinux_check_access's order, libselinux's (checkAccess.c), with a map set or not (`which`
 * says): the names first, an unknown one answered by handle_unknown whatever the contexts
 * (avc_context_to_sid interns a context without looking at it); a name or context that is not
 * UTF-8 names nothing. Then the check, where a context the policy cannot take is EINVAL when
 * enforcing and a pass when not (avc_has_perm_noaudit ignores the kernel's EINVAL in permissive
 * mode). */
static void check_access_order(int allow_unknown, const char *which)
{
	const char *BAD = "u:r:dom\xff_t:s0", *UNDEFINED = "u:r:nosuch_t:s0";
	printf("check_access_order: %s\n", which);
	BY_HANDLE_UNKNOWN(allow_unknown, selinux_check_access(DOM, OBJ, "fil\xff", "read", NULL),
			  "a class name that is not UTF-8: handle_unknown");
	BY_HANDLE_UNKNOWN(allow_unknown, selinux_check_access(DOM, OBJ, "file", "rea\xff", NULL),
			  "a permission name that is not UTF-8: handle_unknown");
	BY_HANDLE_UNKNOWN(allow_unknown, selinux_check_access(BAD, BAD, "nosuchclass", "x", NULL),
			  "an unknown class before contexts that are not UTF-8");
	BY_HANDLE_UNKNOWN(allow_unknown, selinux_check_access(UNDEFINED, BAD, "file", "nosuch", NULL),
			  "an unknown permission before the contexts");
	errno = 0;
	int rc = selinux_check_access(BAD, OBJ, "file", "read", NULL);
	EXPECT(rc == -1 && errno == EINVAL, "enforcing: a context that is not UTF-8 is EINVAL");
	EXPECT(security_setenforce(0) == 0, "permissive");
	EXPECT(selinux_check_access(BAD, OBJ, "file", "read", NULL) == 0, "permissive: a context that is not UTF-8 passes");
	EXPECT(selinux_check_access(UNDEFINED, OBJ, "file", "read", NULL) == 0, "permissive: an undefined context passes");
	EXPECT(security_setenforce(1) == 0, "enforcing");
}

static void unknowns(const char *policy, int allow_unknown)
{
	EXPECT(seaccess_reload_policy(policy) == 0, policy);
	errno = 0;
	EXPECT(selinux_set_mapping(NULL) == -1 && errno == EINVAL, "a NULL map is EINVAL (and leaves none)");
	/* The policy's own numbers and answers, with no map set. */
	security_class_t kfile = string_to_security_class("file"), kproc = string_to_security_class("process");
	access_vector_t kread = string_to_av_perm(kfile, "read"), kwrite = string_to_av_perm(kfile, "write"),
			kgetattr = string_to_av_perm(kfile, "getattr"), kfork = string_to_av_perm(kproc, "fork");
	EXPECT(kfile && kproc && kread && kwrite && kgetattr && kfork, "the policy's numbers");
	struct av_decision ref, self, d;
	EXPECT(security_compute_av_flags(DOM, OBJ, kfile, 0, &ref) == 0, "compute_av file, unmapped");
	EXPECT(security_compute_av_flags(DOM, DOM, kproc, 0, &self) == 0, "compute_av process, unmapped");
	char *created = NULL;
	EXPECT(security_compute_create(DOM, OBJ, kfile, &created) == 0, "compute_create, unmapped");

	check_access_order(allow_unknown, "no map");

	logged[0] = 0;
	EXPECT(selinux_set_mapping(MAP) == 0, "selinux_set_mapping");
	check_access_order(allow_unknown, "mapped");
	EXPECT(strstr(logged, "SELinux:  Permission nosuch in class file not defined in policy.\n") != NULL, "the unknown permission is logged");
	EXPECT(strstr(logged, "SELinux: Class nosuchclass not defined in policy.\n") != NULL, "the unknown class is logged");
	EXPECT(strstr(logged, allow_unknown ? "will be allowed\n" : "will be denied\n") != NULL, "how unknowns will be handled");

	/* Names and numbers. */
	EXPECT(string_to_security_class("process") == 1 && string_to_security_class("file") == 2, "classes in the map's order");
	errno = 0;
	EXPECT(string_to_security_class("security") == 0 && errno == EINVAL, "a policy class the map lacks");
	errno = 0;
	EXPECT(string_to_security_class("nosuchclass") == 0 && errno == EINVAL, "a mapped class the policy lacks");
	EXPECT(mode_to_security_class(S_IFREG) == 2, "mode_to_security_class through the map");
	EXPECT(string_to_av_perm(2, "write") == 1 && string_to_av_perm(2, "read") == 2 && string_to_av_perm(2, "getattr") == 8,
	       "permissions in the map's order");
	EXPECT(string_to_av_perm(1, "fork") == 2, "process fork is the map's bit 1");
	errno = 0;
	EXPECT(string_to_av_perm(2, "nosuch") == 0 && errno == EINVAL, "a mapped permission the policy lacks");
	const char *s = security_class_to_string(2);
	EXPECT(s && strcmp(s, "file") == 0, "security_class_to_string(2)");
	EXPECT(security_class_to_string(3) == NULL && security_class_to_string(9) == NULL, "no name for an unknown or unmapped class");
	s = security_av_perm_to_string(2, 8);
	EXPECT(s && strcmp(s, "getattr") == 0, "security_av_perm_to_string(2, 8)");
	EXPECT(security_av_perm_to_string(2, 4) == NULL, "no name for the unknown permission");
	char *text = NULL;
	EXPECT(security_av_string(2, 0xf, &text) == 0 && text && strcmp(text, "{ write read getattr }") == 0, "security_av_string(2, 0xf)");
	free(text);

	/* Decisions in the program's bits. */
	EXPECT(security_compute_av_flags(DOM, OBJ, 2, 0, &d) == 0, "compute_av, mapped");
	EXPECT(BIT(d.allowed, 0, ref.allowed & kwrite) && BIT(d.allowed, 1, ref.allowed & kread) && BIT(d.allowed, 2, allow_unknown)
		       && BIT(d.allowed, 3, ref.allowed & kgetattr) && (d.allowed >> 4) == 0,
	       "compute_av's allowed bits are the map's");
	EXPECT(BIT(d.auditdeny, 0, ref.auditdeny & kwrite) && BIT(d.auditdeny, 1, ref.auditdeny & kread) && BIT(d.auditdeny, 2, !allow_unknown)
		       && (d.auditdeny >> 4) == 0xfffffff,
	       "compute_av's auditdeny: unknown bits by handle_unknown, every bit past the map's");
	EXPECT(d.seqno == ref.seqno, "the same policy's seqno");
	EXPECT(security_compute_av_flags(DOM, OBJ, 3, 0, &d) == 0 && BIT(d.allowed, 0, allow_unknown), "a class the policy lacks is class 0 to the kernel");
	EXPECT(security_compute_av_flags(DOM, DOM, 1, 0, &d) == 0 && BIT(d.allowed, 1, self.allowed & kfork), "process fork, mapped");
	char *mapped_created = NULL;
	EXPECT(security_compute_create(DOM, OBJ, 2, &mapped_created) == 0 && created && mapped_created && strcmp(created, mapped_created) == 0,
	       "compute_create of mapped class 2 is the policy's file");
	freecon(created);
	freecon(mapped_created);

	/* The AVC. */
	EXPECT(avc_open(NULL, 0) == 0, "avc_open");
	security_id_t dom = NULL, obj = NULL;
	EXPECT(avc_context_to_sid(DOM, &dom) == 0 && avc_context_to_sid(OBJ, &obj) == 0, "SIDs");
	struct av_decision a;
	int rc = avc_has_perm_noaudit(dom, obj, 2, 2, NULL, &a);
	EXPECT((rc == 0) == !!(ref.allowed & kread), "avc_has_perm_noaudit file read");
	EXPECT(security_compute_av_flags(DOM, OBJ, 2, 0, &d) == 0 && a.allowed == d.allowed && a.auditdeny == d.auditdeny
		       && a.auditallow == d.auditallow,
	       "the AVC's decision is compute_av's, in the map's bits");
	errno = 0;
	rc = avc_has_perm_noaudit(dom, obj, 2, 4, NULL, NULL);
	EXPECT(allow_unknown ? rc == 0 : rc == -1 && errno == EACCES, "the unknown permission by handle_unknown");
	logged[0] = 0;
	errno = 0;
	rc = avc_has_perm(dom, obj, 2, 1, NULL, NULL);
	EXPECT(ref.allowed & kwrite ? rc == 0 : rc == -1 && errno == EACCES, "avc_has_perm file write");
	if (!(ref.allowed & kwrite))
		EXPECT(strstr(logged, "denied  { write } for") && strstr(logged, "tclass=file"), "the record names the map's class and permission");
	/* selinux_check_access goes through the map too. */
	EXPECT(selinux_check_access(DOM, OBJ, "file", "read", NULL) == ((ref.allowed & kread) ? 0 : -1), "check_access file read");
	errno = 0;
	rc = selinux_check_access(DOM, OBJ, "security", "compute_av", NULL);
	EXPECT(allow_unknown ? rc == 0 : rc == -1 && errno == EINVAL, "check_access on a class the map lacks: handle_unknown");
	errno = 0;
	rc = selinux_check_access(DOM, OBJ, "file", "nosuch", NULL);
	EXPECT(allow_unknown ? rc == 0 : rc == -1 && errno == EINVAL, "check_access on a permission the policy lacks: handle_unknown");
	avc_destroy();
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: mapping ALLOW DENY REJECT RENUMBER_A RENUMBER_B\n");
		return 2;
	}
	selinux_set_callback(SELINUX_CB_LOG, (union selinux_callback){.func_log = log_line});
	EXPECT(seaccess_load_policy(argv[1]) == 0, "load");
	unknowns(argv[1], 1);
	unknowns(argv[2], 0);

	/* handle_unknown reject: the set fails and leaves no map. */
	EXPECT(seaccess_reload_policy(argv[3]) == 0, "reload REJECT");
	security_class_t kfile = (selinux_set_mapping(NULL), string_to_security_class("file"));
	errno = 0;
	EXPECT(selinux_set_mapping(MAP) == -1 && errno == EINVAL, "reject: a name the policy lacks fails the set");
	EXPECT(string_to_security_class("file") == kfile && kfile != 2, "reject: no map is left");

	/* A reload that renumbers classes: the program's numbers keep naming what they named. */
	struct security_class_mapping small[] = {{"file", {"read", NULL}}, {"process", {"fork", NULL}}, {NULL, {NULL}}};
	EXPECT(seaccess_reload_policy(argv[4]) == 0, "reload RENUMBER_A");
	EXPECT(selinux_set_mapping(small) == 0, "set the small map");
	EXPECT(avc_open(NULL, 0) == 0, "avc_open");
	security_id_t dom = NULL;
	EXPECT(avc_context_to_sid(DOM, &dom) == 0, "SID");
	for (int round = 0; round < 2; round++) {
		const char *which = round ? "after the renumbering reload" : "before";
		errno = 0;
		int rc = avc_has_perm_noaudit(dom, dom, 2, 1, NULL, NULL);
		EXPECT(rc == 0, which);
		errno = 0;
		rc = avc_has_perm_noaudit(dom, dom, 1, 1, NULL, NULL);
		EXPECT(rc == -1 && errno == EACCES, which);
		EXPECT(string_to_security_class("file") == 1 && string_to_security_class("process") == 2, which);
		if (!round) {
			security_class_t a = (selinux_set_mapping(NULL), string_to_security_class("file"));
			EXPECT(selinux_set_mapping(small) == 0, "set again");
			EXPECT(seaccess_reload_policy(argv[5]) == 0, "reload RENUMBER_B");
			security_class_t b = (selinux_set_mapping(NULL), string_to_security_class("file"));
			EXPECT(selinux_set_mapping(small) == 0, "set again");
			EXPECT(a != b, "the reload really renumbers file");
		}
	}
	avc_destroy();
	if (failures)
		printf("mapping: %d failures\n", failures);
	else
		printf("mapping: all passed\n");
	return failures ? 1 : 0;
}
