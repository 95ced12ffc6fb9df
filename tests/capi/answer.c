/* Answers sepol-oracle's queries ("SCON TCON CLASS" lines on standard input) through
 * libselinux's API, written only against <selinux/selinux.h> and <selinux/avc.h>, so that the
 * same program linked against libseaccess is compared with libsepol by tests/capi/run.sh.
 *
 *   answer av       per query: ALLOWED AUDITALLOW AUDITDENY FLAGS CHECK AVC NOAUDIT MASK (hex)
 *                   from security_compute_av_flags, selinux_check_access per permission
 *                   and avc_has_perm per permission (each asked three times, "error" unless
 *                   each answers alike), avc_has_perm_noaudit's decision, and the
 *                   class's named permissions; "error" when a call fails unexpectedly.
 *   answer create|relabel|member   per query: the new context, or "error".
 *
 * The policy comes from SEACCESS_POLICY, as it would come from the kernel under libselinux. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>

static unsigned long records;

/* Denials are many; count them instead of printing each. */
static int quiet_log(int type, const char *fmt, ...)
{
	(void)fmt;
	if (type == SELINUX_AVC)
		records++;
	return 0;
}

static int answer_av(const char *s, const char *t, const char *cls)
{
	security_class_t c = string_to_security_class(cls);
	struct av_decision avd;
	security_id_t ssid, tsid;
	unsigned check = 0, avc = 0, mask = 0;
	int i;

	if (!c || security_compute_av_flags(s, t, c, 0, &avd) < 0)
		return -1;
	if (avc_context_to_sid(s, &ssid) < 0 || avc_context_to_sid(t, &tsid) < 0)
		return -1;
	for (i = 0; i < 32; i++) {
		access_vector_t bit = 1u << i;
		const char *name = security_av_perm_to_string(c, bit);
		int rc;
		if (!name)
			continue;
		mask |= bit;
		if (string_to_av_perm(c, name) != bit)
			return -1;
		rc = selinux_check_access(s, t, cls, name, NULL);
		if (rc == 0)
			check |= bit;
		else if (errno != EACCES)
			return -1;
		/* Asked three times too: the memo and the cache, then the thread's query table. */
		for (int again = 0; again < 2; again++) {
			errno = 0;
			int rc2 = selinux_check_access(s, t, cls, name, NULL);
			if (rc2 != rc || (rc2 != 0 && errno != EACCES))
				return -1;
		}
		/* Asked three times: the first goes the full way, the second is answered by the
		 * cache and remembered on this thread's front, the third by the front. Each must
		 * give the first's answer. */
		rc = avc_has_perm(ssid, tsid, c, bit, NULL, NULL);
		if (rc == 0)
			avc |= bit;
		else if (errno != EACCES)
			return -1;
		for (int again = 0; again < 2; again++) {
			errno = 0;
			int rc2 = avc_has_perm(ssid, tsid, c, bit, NULL, NULL);
			if (rc2 != rc || (rc2 != 0 && errno != EACCES))
				return -1;
		}
	}
	struct av_decision nd;
	if (avc_has_perm_noaudit(ssid, tsid, c, avd.allowed & mask ? avd.allowed & mask : 0, NULL, &nd) < 0 &&
	    errno != EACCES)
		return -1;
	printf("%x %x %x %x %x %x %x %x\n", avd.allowed, avd.auditallow, avd.auditdeny, avd.flags, check, avc,
	       nd.allowed, mask);
	return 0;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;
	union selinux_callback cb;
	int mode;

	if (argc != 2) {
		fprintf(stderr, "usage: answer av|create|relabel|member < queries\n");
		return 2;
	}
	mode = !strcmp(argv[1], "av") ? 0 : !strcmp(argv[1], "create") ? 1 : !strcmp(argv[1], "relabel") ? 2 :
	       !strcmp(argv[1], "member") ? 3 : -1;
	if (mode < 0)
		return 2;
	cb.func_log = quiet_log;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	if (is_selinux_enabled() != 1 || avc_open(NULL, 0) < 0) {
		fprintf(stderr, "answer: no policy (set SEACCESS_POLICY): %s\n", strerror(errno));
		return 1;
	}
	while (getline(&line, &cap, stdin) > 0) {
		char s[1024], t[1024], cls[256];
		if (sscanf(line, "%1023s %1023s %255s", s, t, cls) != 3) {
			puts("error");
			continue;
		}
		if (mode == 0) {
			if (answer_av(s, t, cls) < 0)
				puts("error");
		} else {
			char *newcon = NULL;
			security_class_t c = string_to_security_class(cls);
			int rc = !c ? -1 :
				 mode == 1 ? security_compute_create(s, t, c, &newcon) :
				 mode == 2 ? security_compute_relabel(s, t, c, &newcon) :
					     security_compute_member(s, t, c, &newcon);
			if (rc < 0)
				puts("error");
			else
				puts(newcon);
			freecon(newcon);
		}
	}
	free(line);
	avc_destroy();
	fprintf(stderr, "answer: %lu audit records\n", records);
	return 0;
}
