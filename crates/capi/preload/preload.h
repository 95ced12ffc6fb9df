/* What preload.c and shell.c share: libseaccess's entry points for the interposer and the
 * checked exec path. */
#ifndef SEACCESS_PRELOAD_H
#define SEACCESS_PRELOAD_H

#include <dlfcn.h>

extern char **environ;

/* libseaccess (libselinux.so.1), version SEACCESS_RUN_1. */
int seaccess_run_attach(void);
int seaccess_run_create(int dirfd, const char *path, unsigned mode, char **con);
int seaccess_run_label(int fd, int dirfd, const char *path, const char *con);
int seaccess_run_exec(const char *path, char **con, char **prev, int *secure);
int seaccess_run_setcon(void);
void freecon(char *con);

/* The C library's own `name`, found once. */
#define REAL(name) \
	static __typeof__(&name) real_##name; \
	if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

/* Set while the interposer calls libseaccess: a wrapper inside another passes straight
 * through. */
#define HIDDEN __attribute__((visibility("hidden")))
extern __thread int busy HIDDEN;

/* The exec's checks and the environment to exec `path` with: 0 with *out (NULL: exec with
 * envp as it is), or -1 with errno (EACCES: the policy refuses the exec, with its record). */
HIDDEN int prepare_exec(const char *path, char *const envp[], char ***out);
/* Frees what prepare_exec gave. */
HIDDEN void free_env(char **env);

#endif
