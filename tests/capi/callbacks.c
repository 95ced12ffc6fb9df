/* What a reload's callbacks see, and that they may call back into the library: policy A
 * (callbacks_a) allows init_t to read shadow_t, policy B (callbacks_b) does not. Inside the
 * SELINUX_CB_POLICYLOAD and AVC_CALLBACK_RESET callbacks of a reload, selinux_check_access and
 * avc_has_perm answer as the NEW policy says, even for a query the cache held under the old
 * one. A policyload callback that reloads does not deadlock (alarm).
 *
 *   callbacks POLICY_A POLICY_B      (with SEACCESS_POLICY unset; exits 1 on any failure) */
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

static const char *S = "system_u:system_r:init_t:s0", *T = "system_u:object_r:shadow_t:s0";
static security_id_t ssid, tsid;
static const char *reload_inside; /* a policy the policyload callback loads, once */
static int inner_rc = -2;

/* What a callback saw: selinux_check_access's and avc_has_perm's results (0, or errno). */
struct seen {
	int calls, check, avc;
};
static struct seen at_policyload, at_reset;

static int result(int rc)
{
	return rc == 0 ? 0 : errno;
}

static void look(struct seen *s)
{
	security_class_t c = string_to_security_class("file");
	access_vector_t r = string_to_av_perm(c, "read");
	s->calls++;
	s->check = result(selinux_check_access(S, T, "file", "read", NULL));
	s->avc = result(avc_has_perm(ssid, tsid, c, r, NULL, NULL));
}

static int on_policyload(int seqno)
{
	(void)seqno;
	look(&at_policyload);
	if (reload_inside) {
		const char *p = reload_inside;
		reload_inside = NULL;
		inner_rc = seaccess_reload_policy(p);
	}
	return 0;
}

static int on_reset(uint32_t event, security_id_t s, security_id_t t, security_class_t c, access_vector_t p,
		    access_vector_t *r)
{
	(void)s; (void)t; (void)c; (void)p; (void)r;
	if (event == AVC_CALLBACK_RESET)
		look(&at_reset);
	return 0;
}

static int quiet(int type, const char *fmt, ...)
{
	(void)type; (void)fmt;
	return 0;
}

/* Reloads `to` and checks what both callbacks saw: `want` (0 or EACCES) from each call. */
static void reload_and_see(const char *to, int want, const char *what)
{
	memset(&at_policyload, 0, sizeof at_policyload);
	memset(&at_reset, 0, sizeof at_reset);
	EXPECT(seaccess_reload_policy(to) == 0, what);
	printf("%s: policyload saw check=%d avc=%d (%d calls), reset saw check=%d avc=%d (%d calls)\n", what,
	       at_policyload.check, at_policyload.avc, at_policyload.calls, at_reset.check, at_reset.avc, at_reset.calls);
	EXPECT(at_policyload.calls >= 1 && at_reset.calls >= 1, "both callbacks ran");
	EXPECT(at_policyload.check == want, "selinux_check_access in the policyload callback answers the new policy");
	EXPECT(at_policyload.avc == want, "avc_has_perm in the policyload callback answers the new policy");
	EXPECT(at_reset.check == want, "selinux_check_access in the reset callback answers the new policy");
	EXPECT(at_reset.avc == want, "avc_has_perm in the reset callback answers the new policy");
}

int main(int argc, char **argv)
{
	union selinux_callback cb;
	setvbuf(stdout, NULL, _IONBF, 0);

	if (argc != 3 || getenv("SEACCESS_POLICY")) {
		fprintf(stderr, "usage: callbacks POLICY_A POLICY_B (with SEACCESS_POLICY unset)\n");
		return 2;
	}
	const char *a = argv[1], *b = argv[2];
	alarm(20); /* a deadlock fails the test */
	cb.func_log = quiet;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	EXPECT(seaccess_load_policy(a) == 0, "load A");
	EXPECT(avc_open(NULL, 0) == 0, "avc_open");
	EXPECT(avc_context_to_sid(S, &ssid) == 0 && avc_context_to_sid(T, &tsid) == 0, "SIDs");
	/* The cache holds A's grant before each reload. */
	struct seen warm = {0, 0, 0};
	look(&warm);
	EXPECT(warm.check == 0 && warm.avc == 0, "A allows init_t to read shadow_t");

	cb.func_policyload = on_policyload;
	selinux_set_callback(SELINUX_CB_POLICYLOAD, cb);
	EXPECT(avc_add_callback(on_reset, AVC_CALLBACK_RESET, NULL, NULL, 0, 0) == 0, "avc_add_callback");

	reload_and_see(b, EACCES, "A to B");
	reload_and_see(a, 0, "B to A");
	look(&warm);
	reload_and_see(b, EACCES, "A to B again");

	/* A policyload callback that reloads: both reloads finish (no deadlock), the inner one last. */
	reload_inside = b;
	EXPECT(seaccess_reload_policy(a) == 0, "the outer reload");
	EXPECT(inner_rc == 0, "the reload inside the policyload callback");
	errno = 0;
	EXPECT(selinux_check_access(S, T, "file", "read", NULL) == -1 && errno == EACCES, "B, loaded last, is in force");

	printf("callbacks: %d failures\n", failures);
	return failures ? 1 : 0;
}
