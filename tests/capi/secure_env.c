/* What a program on the libselinux drop-in decides, with the facts a test needs to tell where
 * its policy and context came from (tests/capi/secure_env.sh runs it setuid root and not, as
 * nobody, with SEACCESS_POLICY and SEACCESS_SUBJECTS naming nobody's own files).
 *
 *   secure_env SCON TCON CLASS PERM
 *
 * Prints one fact a line:
 *   at_secure=N         getauxval(AT_SECURE): 1 when the exec made it a secure-execution process
 *   enabled=N           is_selinux_enabled()
 *   policy=PATH         selinux_current_policy_path(), (null) for none
 *   getcon=RC CONTEXT   getcon()'s result and context ((null) on failure)
 *   check=RC ERRNO      selinux_check_access(SCON, TCON, CLASS, PERM) and errno (0 when granted)
 * Built against libselinux's header and linked -lselinux, with a run path to the drop-in. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <selinux/selinux.h>

int main(int argc, char **argv)
{
	char *con = NULL;
	if (argc != 5) {
		fprintf(stderr, "usage: secure_env SCON TCON CLASS PERM\n");
		return 2;
	}
	printf("at_secure=%lu\n", getauxval(AT_SECURE));
	printf("enabled=%d\n", is_selinux_enabled());
	const char *p = selinux_current_policy_path();
	printf("policy=%s\n", p ? p : "(null)");
	int rc = getcon(&con);
	printf("getcon=%d %s\n", rc, rc == 0 && con ? con : "(null)");
	freecon(con);
	errno = 0;
	rc = selinux_check_access(argv[1], argv[2], argv[3], argv[4], NULL);
	printf("check=%d %d\n", rc, rc == 0 ? 0 : errno);
	return 0;
}
