/*
 * A witness for tests/capi/dropin_utils.sh, preloaded (LD_PRELOAD) into an unmodified
 * program: when the program exits, it asks the program's libselinux.so.1 (the drop-in) what
 * the process's own in-process kernel now holds, and appends it to the file $DROPIN_WATCH:
 * "enforce=N" (security_getenforce) and, for each name in $DROPIN_WATCH_BOOLS (separated by
 * commas), "NAME active=N pending=N". It changes nothing in the program; its destructor runs
 * before the library's (it depends on the library), at exit() or a return from main.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <selinux/selinux.h>

__attribute__((destructor)) static void watch(void)
{
	const char *out = getenv("DROPIN_WATCH");
	if (!out)
		return;
	FILE *f = fopen(out, "a");
	if (!f)
		return;
	fprintf(f, "enforce=%d\n", security_getenforce());
	const char *bools = getenv("DROPIN_WATCH_BOOLS");
	if (bools) {
		char *copy = strdup(bools), *save = NULL;
		for (char *b = copy ? strtok_r(copy, ",", &save) : NULL; b; b = strtok_r(NULL, ",", &save))
			fprintf(f, "%s active=%d pending=%d\n", b, security_get_boolean_active(b),
				security_get_boolean_pending(b));
		free(copy);
	}
	fclose(f);
}
