/* libseaccess-preload.so: what `seaccess run` puts in front of the C library (LD_PRELOAD) so
 * that the exec and fscreate contexts a program asks for take effect, as on an SELinux kernel.
 *
 * A kernel without SELinux labels no new file and changes no context at exec, and libseaccess
 * cannot see the C library's open or execve by itself. This object wraps the calls that create
 * a file or execute a program and asks libseaccess (crates/capi/src/interpose.rs: it needs
 * libselinux.so.1, which is libseaccess, so the state is the program's own) for the kernel's
 * checks and labels:
 *
 * - a creation (open/openat/creat with O_CREAT, fopen for writing, the mkstemp family,
 *   mkdtemp, mkdir, mknod, mkfifo, symlink and their *at forms): may_create's checks of the
 *   caller's context first, a refusal failing the call with EACCES before anything is created,
 *   then the call, then the label selinux_inode_init_security gives (the fscreate context, else
 *   the type transition on the parent's label) written to the label store. The new file exists
 *   unlabelled between the creation and the label's write (a window the kernel does not have:
 *   it labels the inode before it is linked in); a label that cannot be written undoes the
 *   creation and fails the call.
 * - an exec (execve, execv, execvp, execvpe, the execl family, fexecve, posix_spawn,
 *   posix_spawnp): selinux_bprm_creds_for_exec's checks, a refusal failing the exec with EACCES,
 *   then the exec with SEACCESS_CONTEXT (the new context) and SEACCESS_PREVCON in the program's
 *   environment, which libseaccess reads as the process's context (before the subjects rules).
 *   SEACCESS_EXEC (drawn anew at each exec: the session's supervisor tells by it an exec that
 *   went through here from one that went around, crates/cli/src/session_state/procs.rs). An
 *   exec that keeps the context of a process neither an exec nor setcon changed leaves the
 *   environment alone, so the subjects rules (`exe=`) still give programs their contexts. A
 *   transition `process {noatsecure}` does not allow gets the environment glibc's secure mode
 *   leaves (the kernel would set AT_SECURE), but for LD_PRELOAD and LD_LIBRARY_PATH reduced
 *   to this interposer and libseaccess's directory, so that the program stays in the session;
 *   the rest of secure mode (secure_getenv, the rlimits and signals the kernel resets without
 *   rlimitinh and siginh, descriptors the new domain may not use) is not emulated.
 *   system() and popen() are done here (shell.c) through the checked posix_spawn, since the C
 *   library's exec the shell where nothing sees it.
 *
 * What the C library does internally with its own calls (tmpfile, fopen's internal open is
 * wrapped through fopen only, O_TMPFILE files) is not seen; link, rename and the other calls
 * that keep an inode's label are not checked here. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload.h"

__attribute__((constructor)) static void attach(void) { seaccess_run_attach(); }

/* A wrapper inside another (libseaccess's own calls) passes straight through. */
__thread int busy;

/* open with O_CREAT: an existing file is opened as it is (no creation, no label); otherwise
 * the checks, an exclusive creation, and the label on the new descriptor. */
static int create_open(int dirfd, const char *path, int flags, mode_t mode) {
	REAL(openat);
	if (busy || !(flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE) return real_openat(dirfd, path, flags, mode);
	for (int tries = 0; tries < 8; tries++) {
		if (!(flags & O_EXCL)) {
			int fd = real_openat(dirfd, path, flags & ~O_CREAT, mode);
			if (fd >= 0 || errno != ENOENT) return fd;
		}
		char *con = NULL;
		busy = 1;
		int r = seaccess_run_create(dirfd, path, S_IFREG | (mode & 07777), &con);
		busy = 0;
		if (r < 0) return -1;
		if (!con) return real_openat(dirfd, path, flags, mode);
		int fd = real_openat(dirfd, path, flags | O_EXCL, mode);
		if (fd < 0) {
			int e = errno;
			freecon(con);
			/* Created by someone else meanwhile: open it as it is. */
			if (e == EEXIST && !(flags & O_EXCL)) continue;
			errno = e;
			return -1;
		}
		busy = 1;
		r = seaccess_run_label(fd, dirfd, path, con);
		busy = 0;
		freecon(con);
		if (r < 0) {
			int e = errno;
			close(fd);
			unlinkat(dirfd, path, 0);
			errno = e;
			return -1;
		}
		return fd;
	}
	errno = EEXIST;
	return -1;
}

static mode_t mode_arg(int flags, va_list ap) {
	return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN(name) \
	int name(const char *path, int flags, ...) { \
		va_list ap; va_start(ap, flags); mode_t m = mode_arg(flags, ap); va_end(ap); \
		return create_open(AT_FDCWD, path, flags, m); \
	}
#define OPENAT(name) \
	int name(int dirfd, const char *path, int flags, ...) { \
		va_list ap; va_start(ap, flags); mode_t m = mode_arg(flags, ap); va_end(ap); \
		return create_open(dirfd, path, flags, m); \
	}
OPEN(open)
OPEN(open64)
OPENAT(openat)
OPENAT(openat64)
int __open_2(const char *path, int flags) { return create_open(AT_FDCWD, path, flags, 0); }
int __open64_2(const char *path, int flags) { return create_open(AT_FDCWD, path, flags, 0); }
int __openat_2(int dirfd, const char *path, int flags) { return create_open(dirfd, path, flags, 0); }
int __openat64_2(int dirfd, const char *path, int flags) { return create_open(dirfd, path, flags, 0); }
int creat(const char *path, mode_t mode) { return create_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode); }
int creat64(const char *path, mode_t mode) { return create_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode); }

/* fopen's modes as open flags (glibc's: r, w, a, with + and the x and e extensions). */
static FILE *create_fopen(const char *path, const char *mode, const char *which) {
	typedef FILE *(*fopen_t)(const char *, const char *);
	fopen_t real = (fopen_t)dlsym(RTLD_NEXT, which);
	if (busy || mode[0] == 'r') return real(path, mode);
	int flags = O_CREAT | (mode[0] == 'w' ? O_TRUNC : O_APPEND);
	int plus = 0;
	for (const char *c = mode + 1; *c && *c != ','; c++) {
		if (*c == '+') plus = 1;
		else if (*c == 'x') flags |= O_EXCL;
		else if (*c == 'e') flags |= O_CLOEXEC;
	}
	flags |= plus ? O_RDWR : O_WRONLY;
	int fd = create_open(AT_FDCWD, path, flags, 0666);
	if (fd < 0) return NULL;
	/* fdopen takes the same mode but for x, which would be refused on an open descriptor. */
	char m[8];
	size_t n = 0;
	for (const char *c = mode; *c && *c != ',' && n + 1 < sizeof m; c++)
		if (*c != 'x') m[n++] = *c;
	m[n] = 0;
	FILE *f = fdopen(fd, m);
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}
FILE *fopen(const char *path, const char *mode) { return create_fopen(path, mode, "fopen"); }
FILE *fopen64(const char *path, const char *mode) { return create_fopen(path, mode, "fopen64"); }

/* The mkstemp family, as glibc's __gen_tempname: the last six X before `suffix` bytes
 * replaced until an exclusive creation succeeds. */
static int temp(char *tmpl, int suffix, int flags, int dir) {
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t len = strlen(tmpl);
	if (suffix < 0 || len < 6 + (size_t)suffix || memcmp(tmpl + len - 6 - suffix, "XXXXXX", 6) != 0) {
		errno = EINVAL;
		return -1;
	}
	char *x = tmpl + len - 6 - suffix;
	for (int attempt = 0; attempt < 62 * 62 * 62; attempt++) {
		unsigned char r[6];
		if (getrandom(r, sizeof r, 0) != sizeof r) return -1;
		for (int i = 0; i < 6; i++) x[i] = letters[r[i] % 62];
		int fd;
		if (dir) {
			fd = mkdir(tmpl, 0700);
		} else {
			fd = create_open(AT_FDCWD, tmpl, (flags & ~O_ACCMODE) | O_RDWR | O_CREAT | O_EXCL, 0600);
		}
		if (fd >= 0 || errno != EEXIST) return fd;
	}
	errno = EEXIST;
	return -1;
}
int mkstemp(char *t) { return temp(t, 0, 0, 0); }
int mkstemp64(char *t) { return temp(t, 0, 0, 0); }
int mkostemp(char *t, int flags) { return temp(t, 0, flags, 0); }
int mkostemp64(char *t, int flags) { return temp(t, 0, flags, 0); }
int mkstemps(char *t, int suffix) { return temp(t, suffix, 0, 0); }
int mkstemps64(char *t, int suffix) { return temp(t, suffix, 0, 0); }
int mkostemps(char *t, int suffix, int flags) { return temp(t, suffix, flags, 0); }
int mkostemps64(char *t, int suffix, int flags) { return temp(t, suffix, flags, 0); }
char *mkdtemp(char *t) { return temp(t, 0, 0, 1) == 0 ? t : NULL; }

/* A creation that gives no descriptor: checks, the call, then the label by name (a final
 * symbolic link labelled itself); a label that cannot be written undoes it. */
typedef int (*make_t)(void *ctx);
static int create_named(int dirfd, const char *path, mode_t mode, make_t make, void *ctx, int undo_flags) {
	if (busy) return make(ctx);
	char *con = NULL;
	busy = 1;
	int r = seaccess_run_create(dirfd, path, mode, &con);
	busy = 0;
	if (r < 0) return -1;
	if (make(ctx) < 0) {
		int e = errno;
		freecon(con);
		errno = e;
		return -1;
	}
	if (!con) return 0;
	busy = 1;
	r = seaccess_run_label(-1, dirfd, path, con);
	busy = 0;
	freecon(con);
	if (r < 0) {
		int e = errno;
		unlinkat(dirfd, path, undo_flags);
		errno = e;
		return -1;
	}
	return 0;
}

struct mk { int dirfd; const char *path; const char *target; mode_t mode; dev_t dev; };

static int do_mkdirat(void *p) {
	struct mk *m = p;
	REAL(mkdirat);
	return real_mkdirat(m->dirfd, m->path, m->mode);
}
static int do_mknodat(void *p) {
	struct mk *m = p;
	REAL(mknodat);
	return real_mknodat(m->dirfd, m->path, m->mode, m->dev);
}
static int do_symlinkat(void *p) {
	struct mk *m = p;
	REAL(symlinkat);
	return real_symlinkat(m->target, m->dirfd, m->path);
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
	struct mk m = {dirfd, path, NULL, mode, 0};
	return create_named(dirfd, path, S_IFDIR | (mode & 07777), do_mkdirat, &m, AT_REMOVEDIR);
}
int mkdir(const char *path, mode_t mode) { return mkdirat(AT_FDCWD, path, mode); }
int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev) {
	struct mk m = {dirfd, path, NULL, mode, dev};
	return create_named(dirfd, path, (mode & S_IFMT ? mode : S_IFREG | mode), do_mknodat, &m, 0);
}
int mknod(const char *path, mode_t mode, dev_t dev) { return mknodat(AT_FDCWD, path, mode, dev); }
int mkfifoat(int dirfd, const char *path, mode_t mode) { return mknodat(dirfd, path, S_IFIFO | (mode & 07777), 0); }
int mkfifo(const char *path, mode_t mode) { return mknodat(AT_FDCWD, path, S_IFIFO | (mode & 07777), 0); }
int symlinkat(const char *target, int dirfd, const char *path) {
	struct mk m = {dirfd, path, target, 0, 0};
	return create_named(dirfd, path, S_IFLNK | 0777, do_symlinkat, &m, 0);
}
int symlink(const char *target, const char *path) { return symlinkat(target, AT_FDCWD, path); }

/* ---- exec ---- */

/* The variables an exec through here sets. */
#define CONTEXT_VAR "SEACCESS_CONTEXT="
#define PREV_VAR "SEACCESS_PREVCON="
#define EXEC_VAR "SEACCESS_EXEC="

/* What glibc drops from a secure-execution program's environment (elf/unsecvars.h; from
 * memory of glibc 2.36+): the kernel sets AT_SECURE on a transition `process {noatsecure}`
 * does not allow, and a process this interposer moves to another context gets no AT_SECURE
 * from the kernel, so the variables are dropped here instead. */
static const char *const unsecure[] = {
	"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LD_AUDIT", "LD_BIND_NOT",
	"LD_BIND_NOW", "LD_DEBUG", "LD_DEBUG_OUTPUT", "LD_DYNAMIC_WEAK", "LD_HWCAP_MASK",
	"LD_LIBRARY_PATH", "LD_ORIGIN_PATH", "LD_PRELOAD", "LD_PROFILE", "LD_SHOW_AUXV",
	"LD_USE_LOAD_BIAS", "LOCALDOMAIN", "LOCPATH", "MALLOC_ARENA_MAX", "MALLOC_ARENA_TEST",
	"MALLOC_MMAP_MAX_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_PERTURB_", "MALLOC_TCACHE_COUNT",
	"MALLOC_TOP_PAD_", "MALLOC_TRACE", "MALLOC_TRIM_THRESHOLD_", "NIS_PATH", "NLSPATH",
	"RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR", NULL};

static int is_unsecure(const char *kv) {
	for (const char *const *u = unsecure; *u; u++) {
		size_t n = strlen(*u);
		if (strncmp(kv, *u, n) == 0 && kv[n] == '=') return 1;
	}
	return 0;
}

/* The file an address of this object or of libseaccess was loaded from. */
static const char *object_of(void *addr) {
	Dl_info info;
	return dladdr(addr, &info) && info.dli_fname ? info.dli_fname : NULL;
}

/* `envp` without the context variables, with `con`, `prev` and a new SEACCESS_EXEC added
 * (malloc'd; the strings of envp are shared, the new ones are in one block after the array's
 * NULL). With `secure`, glibc's unsecure variables are dropped too, but for the two that keep
 * the program in the session: LD_PRELOAD naming this interposer and LD_LIBRARY_PATH naming
 * libseaccess's directory, each alone, where envp had them. */
static char **with_context(char *const envp[], const char *con, const char *prev, int secure) {
	size_t n = 0;
	while (envp && envp[n]) n++;
	unsigned char r[8];
	if (getrandom(r, sizeof r, 0) != sizeof r) return NULL;
	const char *self = object_of((void *)with_context), *lib = object_of((void *)seaccess_run_exec);
	size_t libdir = lib && strrchr(lib, '/') ? (size_t)(strrchr(lib, '/') - lib) : 0;
	int had_preload = 0, had_path = 0;
	size_t size = strlen(con) + strlen(prev) + sizeof CONTEXT_VAR + sizeof PREV_VAR + sizeof EXEC_VAR + 2 * sizeof r;
	if (secure) size += (self ? strlen(self) : 0) + sizeof "LD_PRELOAD=" + libdir + sizeof "LD_LIBRARY_PATH=";
	char **out = malloc((n + 7) * sizeof *out);
	char *block = malloc(size), *b = block;
	if (!out || !block) {
		free(out), free(block);
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(envp[i], CONTEXT_VAR, strlen(CONTEXT_VAR)) == 0 || strncmp(envp[i], PREV_VAR, strlen(PREV_VAR)) == 0 ||
		    strncmp(envp[i], EXEC_VAR, strlen(EXEC_VAR)) == 0)
			continue;
		if (secure && is_unsecure(envp[i])) {
			had_preload |= strncmp(envp[i], "LD_PRELOAD=", 11) == 0;
			had_path |= strncmp(envp[i], "LD_LIBRARY_PATH=", 16) == 0;
			continue;
		}
		out[k++] = envp[i];
	}
	out[k++] = b, b += sprintf(b, "%s%s", CONTEXT_VAR, con) + 1;
	out[k++] = b, b += sprintf(b, "%s%s", PREV_VAR, prev) + 1;
	out[k++] = b, b += sprintf(b, "%s", EXEC_VAR);
	for (size_t i = 0; i < sizeof r; i++) b += sprintf(b, "%02x", r[i]);
	b++;
	if (secure && had_preload && self) out[k++] = b, b += sprintf(b, "LD_PRELOAD=%s", self) + 1;
	if (secure && had_path && libdir) out[k++] = b, b += sprintf(b, "LD_LIBRARY_PATH=%.*s", (int)libdir, lib) + 1;
	out[k] = NULL;
	out[k + 1] = block;
	return out;
}

void free_env(char **env) {
	if (!env) return;
	size_t n = 0;
	while (env[n]) n++;
	free(env[n + 1]);
	free(env);
}

/* The exec's checks and the environment to exec with: 0 with *out (NULL: exec as asked), or
 * -1 with errno. */
int prepare_exec(const char *path, char *const envp[], char ***out) {
	*out = NULL;
	if (busy) return 0;
	char *con = NULL, *prev = NULL;
	int secure = 0;
	busy = 1;
	int r = seaccess_run_exec(path, &con, &prev, &secure);
	busy = 0;
	if (r < 0) return -1;
	if (!con) return 0;
	/* An exec that keeps the context, in a process whose context neither an exec nor setcon
	 * changed: the program gets its context as the first one did (the subjects rules), not
	 * this one's. */
	int carried = 0;
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], CONTEXT_VAR, strlen(CONTEXT_VAR)) == 0) carried = 1;
	if (!carried && seaccess_run_setcon() == 0 && strcmp(con, prev) == 0) {
		freecon(con);
		freecon(prev);
		return 0;
	}
	*out = with_context(envp, con, prev, secure);
	freecon(con);
	freecon(prev);
	if (!*out) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The file execvp would run for `file`: itself if it names a path, else the first executable
 * regular file of that name on PATH (NULL: none; execvp then fails by itself). */
static char *search(const char *file, char *buf, size_t size) {
	if (strchr(file, '/')) return (char *)file;
	const char *path = getenv("PATH");
	if (!path) path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dl = (size_t)(end - p);
		if (dl == 0) dl = 1, p = ".";
		if (dl + strlen(file) + 2 <= size) {
			memcpy(buf, p, dl);
			buf[dl] = '/';
			strcpy(buf + dl + 1, file);
			struct stat st;
			if (access(buf, X_OK) == 0 && stat(buf, &st) == 0 && S_ISREG(st.st_mode)) return buf;
		}
		if (!*end) return NULL;
		p = end;
	}
}

int execve(const char *path, char *const argv[], char *const envp[]) {
	REAL(execve);
	char **env;
	if (prepare_exec(path, envp, &env) < 0) return -1;
	int r = real_execve(path, argv, env ? env : envp);
	int e = errno;
	free_env(env);
	errno = e;
	return r;
}
int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

int execvpe(const char *file, char *const argv[], char *const envp[]) {
	REAL(execvpe);
	char buf[4096];
	const char *found = search(file, buf, sizeof buf);
	char **env = NULL;
	if (found && prepare_exec(found, envp, &env) < 0) return -1;
	int r = real_execvpe(file, argv, env ? env : envp);
	int e = errno;
	free_env(env);
	errno = e;
	return r;
}
int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

int fexecve(int fd, char *const argv[], char *const envp[]) {
	REAL(fexecve);
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	char **env;
	if (prepare_exec(p, envp, &env) < 0) return -1;
	int r = real_fexecve(fd, argv, env ? env : envp);
	int e = errno;
	free_env(env);
	errno = e;
	return r;
}

/* The execl family: the variadic arguments as an array, then the v form. */
#define ARGS(first, last_is_env) \
	size_t n = 1; \
	va_list ap; \
	va_start(ap, first); \
	while (va_arg(ap, char *)) n++; \
	va_end(ap); \
	char **argv = malloc((n + 1) * sizeof *argv); \
	if (!argv) { errno = ENOMEM; return -1; } \
	argv[0] = (char *)first; \
	va_start(ap, first); \
	for (size_t i = 1; i <= n; i++) argv[i] = i < n ? va_arg(ap, char *) : NULL; \
	if (last_is_env) { (void)va_arg(ap, char *); envp = va_arg(ap, char **); } \
	va_end(ap);

/* exec(p, argv, envp) (our checked execve or execvpe), the array freed when it returns. */
static int exec_array(int (*exec)(const char *, char *const[], char *const[]), const char *p, char **argv, char **envp) {
	int r = exec(p, argv, envp);
	int e = errno;
	free(argv);
	errno = e;
	return r;
}

int execl(const char *path, const char *arg, ...) {
	char **envp = environ;
	ARGS(arg, 0)
	return exec_array(execve, path, argv, envp);
}
int execlp(const char *file, const char *arg, ...) {
	char **envp = environ;
	ARGS(arg, 0)
	return exec_array(execvpe, file, argv, envp);
}
int execle(const char *path, const char *arg, ...) {
	char **envp = environ;
	ARGS(arg, 1)
	return exec_array(execve, path, argv, envp);
}

typedef int (*spawn_t)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, char *const[], char *const[]);

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
	REAL(posix_spawn);
	char **env;
	if (prepare_exec(path, envp, &env) < 0) return errno;
	int r = real_posix_spawn(pid, path, fa, attr, argv, env ? env : envp);
	free_env(env);
	return r;
}
int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
	REAL(posix_spawnp);
	char buf[4096];
	const char *found = search(file, buf, sizeof buf);
	char **env = NULL;
	if (found && prepare_exec(found, envp, &env) < 0) return errno;
	int r = real_posix_spawnp(pid, file, fa, attr, argv, env ? env : envp);
	free_env(env);
	return r;
}
