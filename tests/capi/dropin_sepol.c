/*
 * libsepol's answer to selinuxfs's validatetrans question, for tests/capi/dropin_utils.sh
 * (the seaccess command has no validatetrans query). Usage: dropin_sepol POLICY; reads
 * "OLDCON NEWCON CLASS TASKCON" lines (the order selinuxfs's validatetrans file takes, and
 * libselinux's security_validatetrans(scon, tcon, tclass, newcon) writes) and prints one line
 * each: "allowed", "denied" (the validatetrans/mlsvalidatetrans rules refuse it) or "error"
 * (a context or class the policy does not define).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sepol/debug.h>
#include <sepol/policydb/services.h>
#include <sepol/sepol.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POLICY < queries\n", argv[0]);
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f || sepol_set_policydb_from_file(f) < 0) {
		fprintf(stderr, "%s: cannot load %s\n", argv[0], argv[1]);
		return 2;
	}
	fclose(f);
	sepol_debug(0);
	char line[4096], old[1024], new[1024], cls[256], task[1024];
	while (fgets(line, sizeof line, stdin)) {
		sepol_security_id_t o, n, t;
		sepol_security_class_t c;
		if (sscanf(line, "%1023s %1023s %255s %1023s", old, new, cls, task) != 4
		    || sepol_context_to_sid(old, strlen(old) + 1, &o) < 0
		    || sepol_context_to_sid(new, strlen(new) + 1, &n) < 0
		    || sepol_context_to_sid(task, strlen(task) + 1, &t) < 0
		    || sepol_string_to_security_class(cls, &c) < 0) {
			puts("error");
			continue;
		}
		char *reason = NULL;
		int rc = sepol_validate_transition_reason_buffer(o, n, t, c, &reason, 0);
		free(reason);
		puts(rc == 0 ? "allowed" : rc == -EPERM ? "denied" : "error");
	}
	return 0;
}
