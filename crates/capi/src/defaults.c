/* The default callbacks selinux_get_callback hands back for the ones a program never set,
 * written in C because a printf-like function is variadic and stable Rust cannot define
 * one. They do what libselinux's defaults do: the log writes through stdio's stderr, the
 * validator asks security_check_context, the others do nothing and succeed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

int security_check_context(const char *con);

int seaccess_default_log(int type, const char *fmt, ...)
{
	va_list ap;
	int rc;
	(void)type;
	va_start(ap, fmt);
	rc = vfprintf(stderr, fmt, ap);
	va_end(ap);
	return rc;
}

int seaccess_default_audit(void *data, unsigned short cls, char *buf, size_t len)
{
	(void)data, (void)cls, (void)buf, (void)len;
	return 0;
}

int seaccess_default_validate(char **ctx)
{
	return security_check_context(*ctx);
}

int seaccess_default_setenforce(int enforcing)
{
	(void)enforcing;
	return 0;
}

int seaccess_default_policyload(int seqno)
{
	(void)seqno;
	return 0;
}
