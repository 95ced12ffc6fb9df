/* Renames this process's executable (/proc/self/exe) to TARGET with prctl(PR_SET_MM_MAP),
 * then reads FILE: what a user who may create a user namespace can do to an `exe=` rule
 * (tests/mount/callers.sh). MODE 0: the process itself enters a new user namespace, where it
 * holds CAP_SYS_ADMIN; MODE 1: a child sharing its memory (CLONE_VM) does it from a new user
 * namespace, and this process stays in its own.
 *
 * The kernel refuses while the old executable is still mapped, so main() only calls into the
 * library half (forge_run, built into a shared object with -z now: nothing left to resolve in
 * the executable's pages), which unmaps the executable and never returns into it.
 *
 * Build: cc -O2 -shared -fPIC -Wl,-z,now -DFORGE_LIB -o libforge.so forge_exe.c
 *        cc -O2 -Wl,-z,now -o forge forge_exe.c -L. -lforge -Wl,-rpath,DIR
 * Run:   forge TARGET FILE MODE   (prints FILE's first line, or "ERRNAME" and exits 1)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/prctl.h>

#ifdef FORGE_LIB
static char target[4096];
static struct prctl_mm_map map;

/* The fields PR_SET_MM_MAP must be given, as they are now (/proc/self/stat). */
static int fill_map(void) {
  char buf[4096];
  int fd = open("/proc/self/stat", O_RDONLY);
  int n = fd < 0 ? -1 : (int)read(fd, buf, sizeof buf - 1);
  if (fd >= 0) close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  if (!p) return -1;
  unsigned long long f[60] = {0};
  int i = 3;
  for (char *t = strtok(p + 2, " "); t && i < 60; t = strtok(NULL, " ")) f[i++] = strtoull(t, NULL, 10);
  memset(&map, 0, sizeof map);
  map.start_code = f[26]; map.end_code = f[27]; map.start_stack = f[28];
  map.start_data = f[45]; map.end_data = f[46]; map.start_brk = f[47];
  map.arg_start = f[48]; map.arg_end = f[49]; map.env_start = f[50]; map.env_end = f[51];
  map.brk = (unsigned long)sbrk(0);
  if (map.brk < map.start_brk) map.brk = map.start_brk;
  return 0;
}

static int rename_exe(void) {
  int fd = open(target, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  map.exe_fd = fd;
  return prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&map, sizeof map, 0) ? errno : 0;
}

static int child(void *a) { (void)a; _exit(rename_exe()); }

static void fail(int e) { printf("%s\n", strerrorname_np(e) ? strerrorname_np(e) : "E?"); fflush(stdout); _exit(1); }

void forge_run(const char *t, const char *file, int mode) {
  char self[4096] = "", line[8192];
  unsigned long r[64][2];
  int n = 0;
  snprintf(target, sizeof target, "%s", t);
  if (readlink("/proc/self/exe", self, sizeof self - 1) < 0) fail(errno);
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) fail(errno);
  while (fgets(line, sizeof line, maps) && n < 64) {
    unsigned long s, e;
    char path[4096] = "";
    if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %4095s", &s, &e, path) >= 2 && strcmp(path, self) == 0) {
      r[n][0] = s; r[n][1] = e; n++;
    }
  }
  fclose(maps);
  if (fill_map()) fail(EINVAL);
  if (mode == 0 && unshare(CLONE_NEWUSER)) fail(errno);
  for (int i = 0; i < n; i++) munmap((void *)r[i][0], r[i][1] - r[i][0]);
  int e;
  if (mode == 0) {
    e = rename_exe();
  } else {
    char *stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) fail(errno);
    int pid = clone(child, stack + (1 << 16), CLONE_VM | CLONE_NEWUSER | SIGCHLD, NULL);
    if (pid < 0) fail(errno);
    int st;
    if (waitpid(pid, &st, 0) < 0) fail(errno);
    e = WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
  }
  if (e) { printf("forge:"); fail(e); }
  FILE *f = fopen(file, "r");
  if (!f) fail(errno);
  if (!fgets(line, sizeof line, f)) fail(errno ? errno : EIO);
  printf("%s", line);
  fflush(stdout);
  _exit(0);
}
#else
void forge_run(const char *, const char *, int);
int main(int argc, char **argv) {
  if (argc != 4) return 2;
  forge_run(argv[1], argv[2], atoi(argv[3]));
  return 3;
}
#endif
