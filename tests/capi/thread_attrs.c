/* The attributes a thread sets for what it does next are its own, as on Linux
 * (/proc/thread-self/attr/sockcreate, which libselinux writes): another thread does not see
 * them, and a forked child starts with the forking thread's.
 * Usage: thread_attrs CONTEXT OTHER_CONTEXT (two contexts of the loaded policy).
 * Break it catches: the attributes kept once a process (another thread sees CONTEXT). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern int setsockcreatecon(const char *con);
extern int getsockcreatecon(char **con);
extern void freecon(char *con);

static const char *mine, *theirs;
static int fails;

static void expect(const char *who, const char *want) {
	char *c = NULL;
	if (getsockcreatecon(&c) < 0) {
		printf("%s: getsockcreatecon failed\n", who);
		fails++;
		return;
	}
	if ((want == NULL) != (c == NULL) || (want && strcmp(want, c) != 0)) {
		printf("%s: sockcreate is %s, not %s\n", who, c ? c : "(null)", want ? want : "(null)");
		fails++;
	}
	freecon(c);
}

static void *other(void *arg) {
	(void)arg;
	expect("a new thread", NULL);
	if (setsockcreatecon(theirs) < 0) {
		printf("a new thread: setsockcreatecon(%s) failed\n", theirs);
		fails++;
	}
	expect("the new thread after its own set", theirs);
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 3) return 2;
	mine = argv[1];
	theirs = argv[2];
	if (setsockcreatecon(mine) < 0) {
		printf("setsockcreatecon(%s) failed\n", mine);
		return 1;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, other, NULL) != 0) return 1;
	pthread_join(t, NULL);
	expect("the first thread after the other's set", mine);
	pid_t p = fork();
	if (p == 0) {
		expect("a forked child", mine);
		_exit(fails ? 1 : 0);
	}
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) fails++;
	if (fails) return 1;
	printf("thread_attrs: a thread's sockcreate is its own; a forked child has the forking thread's\n");
	return 0;
}
