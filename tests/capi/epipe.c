/* The default logger (standard error) ignores write errors, as libselinux's fprintf does: with
 * standard error a pipe nobody reads and SIGPIPE ignored (as daemons run), an audited grant
 * still returns 0, reloads and security_setenforce still return 0, a permissive denial still
 * returns 0, and the cache still follows each reload.
 *
 *   epipe POLICY_A POLICY_B      (with SEACCESS_POLICY unset; exits 1 on any failure; reports
 *                                 on standard output, since standard error is the broken pipe) */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>
#include "seaccess.h"

#include "expect.h"

int main(int argc, char **argv)
{
	const char *S = "system_u:system_r:init_t:s0", *T = "system_u:object_r:shadow_t:s0";
	security_id_t ssid, tsid;
	int p[2];
	setvbuf(stdout, NULL, _IONBF, 0);

	if (argc != 3 || getenv("SEACCESS_POLICY")) {
		fprintf(stderr, "usage: epipe POLICY_A POLICY_B (with SEACCESS_POLICY unset)\n");
		return 2;
	}
	alarm(20);
	signal(SIGPIPE, SIG_IGN);
	if (pipe(p) != 0 || close(p[0]) != 0 || dup2(p[1], 2) != 2) {
		perror("pipe");
		return 2;
	}
	EXPECT(write(2, "x", 1) == -1 && errno == EPIPE, "standard error is a broken pipe");

	EXPECT(seaccess_load_policy(argv[1]) == 0, "load A");
	EXPECT(avc_open(NULL, 0) == 0, "avc_open");
	EXPECT(avc_context_to_sid(S, &ssid) == 0 && avc_context_to_sid(T, &tsid) == 0, "SIDs");
	security_class_t c = string_to_security_class("file");
	access_vector_t r = string_to_av_perm(c, "read");
	EXPECT(c != 0 && r != 0, "file read");

	/* callbacks_a auditallows the grant: a log line to the broken pipe. */
	for (int i = 0; i < 2; i++) {
		EXPECT(avc_has_perm(ssid, tsid, c, r, NULL, NULL) == 0, "an audited grant returns 0");
		EXPECT(selinux_check_access(S, T, "file", "read", NULL) == 0, "an audited grant returns 0 (selinux_check_access)");
	}
	/* The reload's log line goes to the pipe too; the cache must follow all the same. */
	EXPECT(seaccess_reload_policy(argv[2]) == 0, "a reload returns 0");
	errno = 0;
	EXPECT(avc_has_perm(ssid, tsid, c, r, NULL, NULL) == -1 && errno == EACCES, "B denies: the cache followed the reload");
	errno = 0;
	EXPECT(selinux_check_access(S, T, "file", "read", NULL) == -1 && errno == EACCES, "B denies (selinux_check_access)");
	EXPECT(security_setenforce(0) == 0, "security_setenforce returns 0");
	EXPECT(avc_has_perm(ssid, tsid, c, r, NULL, NULL) == 0, "a permissive denial returns 0");
	EXPECT(security_setenforce(1) == 0, "security_setenforce returns 0");
	EXPECT(seaccess_reload_policy(argv[1]) == 0, "a reload returns 0");
	EXPECT(avc_has_perm(ssid, tsid, c, r, NULL, NULL) == 0, "A allows again: the cache followed the reload");
	printf("epipe: %d failures\n", failures);
	return failures ? 1 : 0;
}
