/* A process of a `seaccess run` session that changes its context with setcon, then writes the
 * session's selinuxfs (tests/run/session.sh). Each argument is a step, done in order, each
 * printing one line:
 *   setcon CTX      setcon(CTX): "setcon=ok" or "setcon=ERRNO-NAME"
 *   publish CTX     what libseaccess's setcon tells the session, done by hand (a setxattr of
 *                   system.seaccess.current on the view's root, no check here first):
 *                   "publish=ok" or "publish=ERRNO-NAME"
 *   await PATH      waits (10 s at most) until PATH exists: "await=ok" or "await=timeout"
 *   touch PATH      creates PATH: "touch=ok"
 *   fork            forks: the child goes on with the next steps and prints "fork=ok", the
 *                   parent waits for it and exits with its status
 *   write           writes 0 to /sys/fs/selinux/enforce: "write=ok" or "write=ERRNO-NAME"
 *   rawexec ARGS... executes this program again with ARGS and the environment it started
 *                   with, by the execve system call (around the interposer, as a static program
 *                   would): nothing after it runs here. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

extern int setcon(const char *con);
extern char **environ;

static const char *name(int e) {
	switch (e) {
	case 0: return "ok";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case ENOTSUP: return "ENOTSUP";
	case ESRCH: return "ESRCH";
	default: return strerror(e);
	}
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *step = argv[i];
		const char *arg = i + 1 < argc ? argv[i + 1] : "";
		if (strcmp(step, "setcon") == 0) {
			printf("setcon=%s\n", name(setcon(arg) == 0 ? 0 : errno));
			i++;
		} else if (strcmp(step, "publish") == 0) {
			int r = setxattr("/sys/fs/selinux", "system.seaccess.current", arg, strlen(arg), 0);
			printf("publish=%s\n", name(r == 0 ? 0 : errno));
			i++;
		} else if (strcmp(step, "await") == 0) {
			int n = 0;
			while (access(arg, F_OK) != 0 && n++ < 1000) usleep(10000);
			printf("await=%s\n", access(arg, F_OK) == 0 ? "ok" : "timeout");
			i++;
		} else if (strcmp(step, "touch") == 0) {
			int fd = open(arg, O_WRONLY | O_CREAT, 0644);
			if (fd >= 0) close(fd);
			printf("touch=%s\n", name(fd >= 0 ? 0 : errno));
			i++;
		} else if (strcmp(step, "fork") == 0) {
			pid_t c = fork();
			if (c > 0) {
				int st;
				if (waitpid(c, &st, 0) != c) return 1;
				return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
			}
			printf("fork=%s\n", name(c == 0 ? 0 : errno));
			if (c < 0) return 1;
		} else if (strcmp(step, "write") == 0) {
			int fd = open("/sys/fs/selinux/enforce", O_WRONLY);
			int e = fd < 0 ? errno : 0;
			if (fd >= 0) {
				if (write(fd, "0", 1) != 1) e = errno;
				close(fd);
			}
			printf("write=%s\n", name(e));
		} else if (strcmp(step, "rawexec") == 0) {
			argv[i] = argv[0];
			syscall(SYS_execve, "/proc/self/exe", &argv[i], environ);
			printf("rawexec=%s\n", name(errno));
			return 1;
		} else {
			printf("unknown step %s\n", step);
			return 2;
		}
	}
	return 0;
}
