/* An object manager written for libselinux, unchanged: build it against libseaccess with
 *   cc example.c $(PKG_CONFIG_PATH=target/pkgconfig pkg-config --cflags --libs seaccess)
 * and run it with SEACCESS_POLICY=/etc/selinux/default/policy/policy.33 ./a.out */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>

/* Audit records go where the program wants them (libselinux's default is standard error). */
static int log_cb(int type, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (type == SELINUX_AVC)
		fputs("audit: ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	return 0;
}

int main(void)
{
	union selinux_callback cb;
	security_id_t subject, object;

	cb.func_log = log_cb;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	if (is_selinux_enabled() != 1 || avc_open(NULL, 0) < 0) {
		fprintf(stderr, "no policy: %s\n", strerror(errno));
		return 1;
	}

	/* Label once, check by SID many times. */
	avc_context_to_sid("user_u:user_r:user_t:s0", &subject);
	avc_context_to_sid("system_u:object_r:etc_t:s0", &object);
	security_class_t file = string_to_security_class("file");
	access_vector_t read = string_to_av_perm(file, "read"), write = string_to_av_perm(file, "write");

	printf("read:  %s\n", avc_has_perm(subject, object, file, read, NULL, NULL) == 0 ? "allowed" : "denied");
	printf("write: %s\n", avc_has_perm(subject, object, file, write, NULL, NULL) == 0 ? "allowed" : "denied");

	/* Or by strings, as systemd and D-Bus do. */
	int rc = selinux_check_access("user_u:user_r:user_t:s0", "system_u:object_r:shadow_t:s0", "file", "read", NULL);
	printf("read shadow: %s\n", rc == 0 ? "allowed" : errno == EACCES ? "denied" : strerror(errno));

	avc_destroy();
	return 0;
}
