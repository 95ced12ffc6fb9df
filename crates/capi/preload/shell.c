/* system(), popen() and pclose() for the interposer: the C library's run /bin/sh through its
 * own posix_spawn, which nothing here sees, so the shell would start in the caller's context
 * whatever setexeccon asked or the policy's type transition on /bin/sh says. These run
 * `/bin/sh -c -- CMD` through the wrapped posix_spawn instead (preload.c: the exec checked as
 * selinux_bprm_creds_for_exec, the new context handed to the shell), and otherwise do what
 * glibc's do (sysdeps/posix/system.c, libio/iopopen.c) and POSIX asks:
 *
 * - system: SIGINT and SIGQUIT ignored and SIGCHLD blocked in the caller while it waits (the
 *   first of concurrent callers saves the dispositions, the last puts them back), the shell
 *   started with the caller's mask and with SIGINT and SIGQUIT at their defaults unless the
 *   caller ignored them; the shell's wait status; a shell that cannot be started (the policy
 *   refusing the exec, on a kernel too: posix_spawn then fails) answers as if it had exited
 *   with 127; system(NULL) says whether a shell runs (it runs `exit 0`);
 * - popen: "r" or "w" and the "e" extension (close-on-exec on the caller's end), the pipe's
 *   other end the shell's standard output or input, every stream popen gave before and not
 *   yet closed closed in the new shell; a refused exec is popen's NULL with its errno;
 *   pclose waits for the very shell of its stream and gives its wait status.
 *
 * Not done: glibc's system kills the shell when the waiting thread is cancelled; here a
 * cancelled caller leaves it running. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "preload.h"

#define SHELL_PATH "/bin/sh"

/* system's callers in flight and the dispositions the first of them found. */
static pthread_mutex_t sys_lock = PTHREAD_MUTEX_INITIALIZER;
static int sys_refs;
static struct sigaction sys_intr, sys_quit;

static pid_t wait_for(pid_t pid, int *status) {
	pid_t w;
	do w = waitpid(pid, status, 0);
	while (w < 0 && errno == EINTR);
	return w;
}

static int do_system(const char *line) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	pthread_mutex_lock(&sys_lock);
	if (sys_refs++ == 0) {
		sigaction(SIGINT, &sa, &sys_intr);
		sigaction(SIGQUIT, &sa, &sys_quit);
	}
	pthread_mutex_unlock(&sys_lock);
	sigset_t omask, reset;
	sigaddset(&sa.sa_mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sa.sa_mask, &omask);
	sigemptyset(&reset);
	if (sys_intr.sa_handler != SIG_IGN) sigaddset(&reset, SIGINT);
	if (sys_quit.sa_handler != SIG_IGN) sigaddset(&reset, SIGQUIT);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &omask);
	posix_spawnattr_setsigdefault(&attr, &reset);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	char *argv[] = {"sh", "-c", "--", (char *)line, NULL};
	pid_t pid;
	int status;
	if (posix_spawn(&pid, SHELL_PATH, NULL, &attr, argv, environ) == 0) {
		if (wait_for(pid, &status) != pid) status = -1;
	} else {
		/* POSIX: as if the shell had exited with 127. */
		status = 127 << 8;
	}
	int e = errno;
	posix_spawnattr_destroy(&attr);
	pthread_mutex_lock(&sys_lock);
	if (--sys_refs == 0) {
		sigaction(SIGINT, &sys_intr, NULL);
		sigaction(SIGQUIT, &sys_quit, NULL);
	}
	pthread_mutex_unlock(&sys_lock);
	sigprocmask(SIG_SETMASK, &omask, NULL);
	errno = e;
	return status;
}

int system(const char *line) {
	if (!line) return do_system("exit 0") == 0;
	return do_system(line);
}

/* The streams popen gave and their shells, until pclose. */
struct proc {
	FILE *fp;
	pid_t pid;
	struct proc *next;
};
static struct proc *chain;
static pthread_mutex_t chain_lock = PTHREAD_MUTEX_INITIALIZER;

FILE *popen(const char *cmd, const char *mode) {
	int rd = 0, wr = 0, cloexec = 0;
	for (const char *m = mode; *m; m++) {
		if (*m == 'r') rd = 1;
		else if (*m == 'w') wr = 1;
		else if (*m == 'e') cloexec = 1;
		else {
			errno = EINVAL;
			return NULL;
		}
	}
	if (rd == wr) {
		errno = EINVAL;
		return NULL;
	}
	struct proc *p = malloc(sizeof *p);
	if (!p) return NULL;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		free(p);
		return NULL;
	}
	int parent = rd ? fds[0] : fds[1], child = rd ? fds[1] : fds[0], std = rd ? 1 : 0;
	/* Already the descriptor the shell uses: moved, since dup2 onto itself would keep
	 * close-on-exec (glibc does the same). */
	if (child == std) {
		int moved = fcntl(child, F_DUPFD_CLOEXEC, 0);
		if (moved < 0) {
			int e = errno;
			close(fds[0]), close(fds[1]), free(p);
			errno = e;
			return NULL;
		}
		close(child);
		child = moved;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	int r = posix_spawn_file_actions_adddup2(&fa, child, std);
	/* The chain is held across the spawn: a stream made meanwhile by another thread would
	 * otherwise stay open in this shell. */
	pthread_mutex_lock(&chain_lock);
	for (struct proc *q = chain; q && r == 0; q = q->next) {
		int fd = fileno(q->fp);
		if (fd >= 0 && fd != std) r = posix_spawn_file_actions_addclose(&fa, fd);
	}
	char *argv[] = {"sh", "-c", "--", (char *)cmd, NULL};
	if (r == 0) r = posix_spawn(&p->pid, SHELL_PATH, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(child);
	FILE *fp = NULL;
	if (r == 0) {
		if (!cloexec) fcntl(parent, F_SETFD, 0);
		fp = fdopen(parent, rd ? "r" : "w");
		if (fp) {
			p->fp = fp;
			p->next = chain;
			chain = p;
		} else {
			/* The shell runs with nobody to talk to: its end closed, it is waited for. */
			r = errno;
			close(parent);
			int st;
			wait_for(p->pid, &st);
		}
	} else {
		close(parent);
	}
	pthread_mutex_unlock(&chain_lock);
	if (!fp) {
		free(p);
		errno = r;
	}
	return fp;
}

int pclose(FILE *fp) {
	pthread_mutex_lock(&chain_lock);
	struct proc **at = &chain;
	while (*at && (*at)->fp != fp) at = &(*at)->next;
	struct proc *p = *at;
	if (p) *at = p->next;
	pthread_mutex_unlock(&chain_lock);
	if (!p) {
		/* Not a stream of this popen's (one the C library's gave, before this was loaded). */
		REAL(pclose);
		return real_pclose(fp);
	}
	fclose(fp);
	int status;
	pid_t w = wait_for(p->pid, &status);
	free(p);
	return w < 0 ? -1 : status;
}
