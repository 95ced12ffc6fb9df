/* system() and popen() under `seaccess run` (tests/run/labels.sh): the shell they start goes
 * through the interposer's checked exec. Each argument is a step, done in order, each printing
 * one line:
 *   setexeccon CTX  setexeccon(CTX): "setexeccon=ok" or "setexeccon=failed"
 *   system CMD      system(CMD): "system=exited N" (the shell's exit status), "system=signal N"
 *                   or "system=-1"
 *   null            system(NULL): "null=N"
 *   popen CMD       popen(CMD, "r"), its output (newlines as spaces), and pclose's status:
 *                   "popen=OUTPUT pclose=exited N", or "popen=NULL ERRNO" when refused
 *   popenw CMD      popen(CMD, "we") fed "fed\n": "popenw pclose=exited N"
 *   nested CMD      popen("cat > /dev/null", "w") then popen(CMD, "r"), CMD lasting a few
 *                   seconds: whether the second shell held the first's stream open (cat then
 *                   sees no end of its input, and the first pclose waits for CMD's end):
 *                   "nested=ok" (the first pclose took under a second) or "nested=leaked" */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern int setexeccon(const char *con);

static void status(const char *what, int st) {
	if (st == -1) printf("%s=-1\n", what);
	else if (WIFEXITED(st)) printf("%s=exited %d\n", what, WEXITSTATUS(st));
	else if (WIFSIGNALED(st)) printf("%s=signal %d\n", what, WTERMSIG(st));
	else printf("%s=%d\n", what, st);
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	for (int i = 1; i + 1 < argc || (i < argc && strcmp(argv[i], "null") == 0); i++) {
		const char *step = argv[i], *arg = i + 1 < argc ? argv[i + 1] : "";
		if (strcmp(step, "null") == 0) {
			printf("null=%d\n", system(NULL));
			continue;
		}
		i++;
		if (strcmp(step, "setexeccon") == 0) {
			printf("setexeccon=%s\n", setexeccon(arg) == 0 ? "ok" : "failed");
		} else if (strcmp(step, "system") == 0) {
			status("system", system(arg));
		} else if (strcmp(step, "popen") == 0) {
			FILE *f = popen(arg, "r");
			if (!f) {
				printf("popen=NULL %s\n", strerror(errno));
				continue;
			}
			char buf[4096];
			size_t n = fread(buf, 1, sizeof buf - 1, f);
			buf[n] = 0;
			for (char *c = buf; *c; c++)
				if (*c == '\n') *c = ' ';
			printf("popen=%s ", buf);
			status("pclose", pclose(f));
		} else if (strcmp(step, "popenw") == 0) {
			FILE *f = popen(arg, "we");
			if (!f) {
				printf("popenw=NULL %s\n", strerror(errno));
				continue;
			}
			fputs("fed\n", f);
			printf("popenw ");
			status("pclose", pclose(f));
		} else if (strcmp(step, "nested") == 0) {
			FILE *a = popen("cat > /dev/null", "w");
			FILE *b = popen(arg, "r");
			if (!a || !b) {
				printf("nested=NULL\n");
				continue;
			}
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			int st = pclose(a);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			pclose(b);
			double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
			st = WIFEXITED(st) && WEXITSTATUS(st) == 0 && took < 1.0 ? 0 : 1;
			printf("nested=%s\n", st == 0 ? "ok" : "leaked");
		} else {
			printf("unknown step %s\n", step);
			return 2;
		}
	}
	return 0;
}
