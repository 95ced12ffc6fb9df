/* The guest's workload runner: performs operations one after another in whatever domain it
 * runs in, and prints one line per operation on stdout:
 *
 *   R <context> <op> <path> <outcome>
 *
 * where <outcome> is "ok" or the errno's name. The operations are its arguments:
 *
 *   ctx              print "C <context>" (the task's /proc/self/attr/current)
 *   read:PATH        open(PATH, O_RDONLY) and read one byte
 *   write:PATH       open(PATH, O_WRONLY|O_APPEND) and write one byte
 *   create:PATH      open(PATH, O_CREAT|O_EXCL|O_WRONLY, 0644)
 *   stat:PATH        stat(PATH)
 *   kill:PID,SIG     kill(PID, SIG), SIG one of 0 USR1 CHLD STOP CONT KILL
 *   ptrace:PID       ptrace(PTRACE_ATTACH, PID), then wait for its stop and detach
 *   socket:KIND      socket(2) of KIND (tcp, udp: AF_INET; unix: AF_UNIX stream), then close
 *   bind:KIND,PORT   socket(2) of KIND (tcp, udp), bind(2) to 127.0.0.1:PORT, close
 *   connect:KIND,PORT  socket(2) of KIND, connect(2) to 127.0.0.1:PORT, close; nothing
 *                    listens, so ECONNREFUSED (the LSMs let it through) reports as ok
 *   shm:, sem:, msg: shmget, semget or msgget of a new IPC_PRIVATE object, then its IPC_RMID
 *   sleep:SECONDS    ignore SIGUSR1, then sleep (a target for the others' signals); no line
 *   mkdir:PATH       mkdir(PATH, 0755)
 *   unlink:PATH      unlink(PATH)
 *   rmdir:PATH       rmdir(PATH)
 *   rename:OLD,NEW   rename(OLD, NEW)
 *   link:OLD,NEW     link(OLD, NEW)
 *   symlink:TARGET,NEW  symlink(TARGET, NEW)
 *   label:PATH       print "L <path> <kind> <context>": the file's kind (dir, file, other) and
 *                    its security.selinux, not following a symbolic link
 *   relay            from here on, write to a pipe this domain makes, copied to the output
 *                    by a child that stays in this domain: a domain entered later may be
 *                    refused the use of the output it was started with (the kernel's
 *                    flush_unauthorized_files gives it /dev/null), while Debian's policy lets
 *                    every daemon use init's descriptors and write init's pipes
 *   exec:PATH        execv(PATH) with the remaining operations as its arguments (a domain
 *                    transition happens here, as the policy's type_transition rules say): the
 *                    new program reports "exec PATH ok" in its new context; a refused exec
 *                    reports its errno and goes on with the remaining operations
 *
 * In every argument "%t" stands for the type of the task's context, so that each domain works on
 * names of its own.
 *
 * It is linked statically, so that a copy of it can be labelled as any program (init's, a
 * daemon's) and entered as that program's domain.
 *
 * Where the kernel has no SELinux (/proc/self/attr/current answers EINVAL: the BPF LSM under
 * `seaccess enforce`), the task's context and the files' labels come from the daemon instead: the SID in
 * the pinned task or inode storage (/sys/fs/bpf/seaccess/task_store, keyed by a pidfd;
 * inode_store, keyed by a descriptor of the file; taken once per chain: daemon_maps), named by
 * /run/seaccess/sids ("SID CONTEXT"
 * lines). A task without task storage is "unconfined"; a file without inode storage reads as
 * its file system's default (/run/seaccess/filesystems), what the BPF side decides it with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/ptrace.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static char context[256];

#define SEA_PIN_DIR "/sys/fs/bpf/seaccess"
#define SEA_SIDS "/run/seaccess/sids"

/* The kernel has SELinux: labels are its own (else the daemon's, see above). Set by
 * read_context from whether /proc/self/attr/current reads: asking selinuxfs instead would be
 * an access of its own, checked and audited in every domain. */
static int selinux;

/* The map pinned at PATH (BPF_OBJ_GET), or -1 with errno. */
static int bpf_obj_get(const char *path)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.pathname = (__u64)(unsigned long)path;
	return syscall(SYS_bpf, BPF_OBJ_GET, &a, sizeof(a));
}

/* The daemon's task and inode storage and its SID list, taken once by the first probe of a
 * chain (started as kernel_t, which the policy lets read them) and handed down across exec:
 * the map descriptors kept open and named in PROBE_MAPS, the list's text in PROBE_SIDS. A
 * probe in any domain then reads its own label without opening the daemon's files, as
 * /proc/self/attr/current lets it under SELinux; opening them would be checked against their
 * file systems' labels (bpf_t, tmpfs_t), an access the SELinux kernel's probe never makes. */
static int task_map = -1, inode_map = -1;
static const char *sids_text;

static void daemon_maps(void)
{
	static char text[120 * 1024];
	const char *maps = getenv("PROBE_MAPS");
	char buf[32];
	size_t n;
	FILE *f;

	if (maps && sscanf(maps, "%d,%d", &task_map, &inode_map) == 2) {
		sids_text = getenv("PROBE_SIDS");
		return;
	}
	task_map = bpf_obj_get(SEA_PIN_DIR "/task_store");
	inode_map = bpf_obj_get(SEA_PIN_DIR "/inode_store");
	if (task_map < 0 || inode_map < 0)
		return;
	/* BPF_OBJ_GET's descriptors are close-on-exec. */
	fcntl(task_map, F_SETFD, 0);
	fcntl(inode_map, F_SETFD, 0);
	snprintf(buf, sizeof(buf), "%d,%d", task_map, inode_map);
	setenv("PROBE_MAPS", buf, 1);
	f = fopen(SEA_SIDS, "r");
	if (!f)
		return;
	n = fread(text, 1, sizeof(text) - 1, f);
	/* A list too long for the environment: each probe reads the file instead. */
	if (feof(f)) {
		text[n] = 0;
		sids_text = text;
		setenv("PROBE_SIDS", text, 1);
	}
	fclose(f);
}

/* The first 32 bits of MAP's value for KEY (task and inode storage both begin with the SID:
 * struct sea_task, struct sea_inode in crates/enforce/bpf/layout.h): 0, or an errno (ENOENT:
 * no storage; ENODEV: no daemon's maps). */
static int storage_sid(int map, int key, unsigned *sid)
{
	unsigned long long value[32];
	union bpf_attr a;
	/* No daemon is not "no storage". */
	if (map < 0)
		return ENODEV;
	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (__u64)(unsigned long)&key;
	a.value = (__u64)(unsigned long)value;
	if (syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)))
		return errno;
	memcpy(sid, value, sizeof(*sid));
	return 0;
}

/* SID's context from the line "SID CONTEXT" of LINE into OUT: 1 if it is that SID's. */
static int sid_line(const char *line, unsigned sid, char *out, size_t size)
{
	char *end;
	unsigned long n = strtoul(line, &end, 10);
	if (end == line || *end != ' ' || n != sid)
		return 0;
	snprintf(out, size, "%.*s", (int)strcspn(end + 1, "\n"), end + 1);
	return 1;
}

/* SID's context from the daemon's list into OUT: 0, or ENOENT. */
static int sid_context(unsigned sid, char *out, size_t size)
{
	char line[512];
	int err = ENOENT;
	FILE *f;
	if (sids_text) {
		for (const char *l = sids_text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
			if (sid_line(l, sid, out, size))
				return 0;
		return ENOENT;
	}
	f = fopen(SEA_SIDS, "r");
	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f)) {
		if (sid_line(line, sid, out, size)) {
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

/* The task's context from its task storage (see above); "unconfined" without it. */
static void daemon_context(void)
{
	unsigned sid;
	int pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	int err;
	daemon_maps();
	err = pidfd < 0 ? errno : storage_sid(task_map, pidfd, &sid);
	if (pidfd >= 0)
		close(pidfd);
	if (err == ENOENT)
		strcpy(context, "unconfined");
	else if (err || sid_context(sid, context, sizeof(context)))
		strcpy(context, "?");
}

/* PATH's label (not following a symbolic link) into CON: its length, or -errno. */
/* The SID the daemon decides an inode nobody labeled with: its file system type's line in
 * /run/seaccess/filesystems ("TYPE SID"; "creator" or "unchecked" are not a label), the type
 * found from the inode's mount (statx's mount ID, /proc/self/mountinfo). 0, or an errno. */
static int default_sid(int fd, unsigned *sid)
{
	struct statx stx;
	char line[1024], type[64] = "", name[64];
	FILE *f;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) || !(stx.stx_mask & STATX_MNT_ID))
		return ENODATA;
	if (!(f = fopen("/proc/self/mountinfo", "r")))
		return errno;
	while (fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");
		if (strtoull(line, NULL, 10) == stx.stx_mnt_id && dash) {
			sscanf(dash + 3, "%63s", type);
			break;
		}
	}
	fclose(f);
	type[strcspn(type, ".")] = 0; /* a FUSE subtype is not the kernel's type name */
	/* A type the daemon does not list is the initial SID unlabeled. */
	*sid = 3;
	if (!(f = fopen("/run/seaccess/filesystems", "r")))
		return errno;
	while (fgets(line, sizeof(line), f)) {
		char value[32];
		if (sscanf(line, "%63s %31s", name, value) == 2 && !strcmp(name, type)) {
			char *end;
			*sid = strtoul(value, &end, 10);
			if (*end)
				*sid = 0;
			break;
		}
	}
	fclose(f);
	return *sid ? 0 : ENODATA;
}

static ssize_t file_label(const char *path, char *con, size_t size)
{
	unsigned sid;
	int fd, err;
	if (selinux) {
		ssize_t n = lgetxattr(path, "security.selinux", con, size - 1);
		return n < 0 ? -errno : n;
	}
	fd = open(path, O_PATH | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	err = storage_sid(inode_map, fd, &sid);
	/* Nobody labeled it: the label the daemon decides it with, its file system's default (as
	 * the SELinux kernel's getxattr answers with the label it gave such an inode). */
	if (err == ENOENT)
		err = default_sid(fd, &sid);
	close(fd);
	if (err == ENOENT)
		return -ENODATA;
	if (err || (err = sid_context(sid, con, size)))
		return -err;
	return strlen(con);
}

static void read_context(void)
{
	int fd = open("/proc/self/attr/current", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, context, sizeof(context) - 1);
	if (fd >= 0)
		close(fd);
	/* No LSM of the kernel answers for it (EINVAL): no SELinux. */
	if (n < 0 && errno == EINVAL) {
		daemon_context();
		return;
	}
	selinux = 1;
	if (n <= 0) {
		strcpy(context, "?");
		return;
	}
	context[n] = 0;
	context[strcspn(context, "\n")] = 0;
}

/* ARG with each "%t" replaced by the type of the task's context (its third field). */
static const char *expand(const char *arg)
{
	static char out[1024];
	const char *type = context, *end;
	for (int i = 0; i < 2 && type; i++)
		type = strchr(type, ':') ? strchr(type, ':') + 1 : NULL;
	if (!type)
		type = "?";
	end = strchr(type, ':');
	size_t tlen = end ? (size_t)(end - type) : strlen(type), n = 0;
	for (const char *a = arg; *a && n + tlen + 2 < sizeof(out); a++) {
		if (a[0] == '%' && a[1] == 't') {
			memcpy(out + n, type, tlen);
			n += tlen;
			a++;
		} else {
			out[n++] = *a;
		}
	}
	out[n] = 0;
	return out;
}

/* OLD,NEW split at the comma: NEW, with OLD copied to `old`. */
static const char *split2(const char *arg, char *old, size_t size)
{
	const char *comma = strchr(arg, ',');
	size_t n = comma ? (size_t)(comma - arg) : 0;
	if (!comma || n >= size)
		return NULL;
	memcpy(old, arg, n);
	old[n] = 0;
	return comma + 1;
}

static void report(const char *op, const char *path, int err)
{
	printf("R %s %s %s %s\n", context, op, path, err ? strerrorname_np(err) : "ok");
	fflush(stdout);
}

/* Writes the first n bytes of buf in one write(2), or exits: a terminal takes one write whole,
 * so that a line given in one write is never cut by another writer's. */
static void write_whole(const char *buf, size_t n)
{
	if (n && write(1, buf, n) != (ssize_t)n)
		_exit(1);
}

/* See "relay" above. The relaying child exits when every writer has closed the pipe, which can
 * be after the chain's first process has exited and the workload's shell has gone on printing
 * its own lines (a target's T line) to the same output: so it copies whole lines only, each in
 * one write, never a read's cut half of one (a T line once landed inside an R line that way). */
static int relay(void)
{
	int p[2];
	if (pipe(p))
		return errno;
	pid_t child = fork();
	if (child < 0)
		return errno;
	if (child == 0) {
		char buf[8192];
		size_t have = 0;
		ssize_t n;
		close(p[1]);
		while ((n = read(p[0], buf + have, sizeof(buf) - have)) > 0) {
			have += n;
			char *last = memrchr(buf, '\n', have);
			size_t whole = last ? (size_t)(last - buf) + 1 : (have == sizeof(buf) ? have : 0);
			write_whole(buf, whole);
			memmove(buf, buf + whole, have - whole);
			have -= whole;
		}
		write_whole(buf, have);
		_exit(0);
	}
	close(p[0]);
	int null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
		return errno;
	close(null);
	close(p[1]);
	return 0;
}

static int do_read(const char *path)
{
	char c;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno;
	int err = read(fd, &c, 1) < 0 ? errno : 0;
	close(fd);
	return err;
}

static int do_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0)
		return errno;
	int err = write(fd, "x", 1) < 0 ? errno : 0;
	close(fd);
	return err;
}

static int do_create(const char *path)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int signal_number(const char *name)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = {{"0", 0},	       {"USR1", SIGUSR1}, {"CHLD", SIGCHLD},
		    {"STOP", SIGSTOP}, {"CONT", SIGCONT}, {"KILL", SIGKILL}};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(name, sigs[i].name))
			return sigs[i].sig;
	return -1;
}

static int do_kill(const char *arg)
{
	char pid[32];
	const char *name = split2(arg, pid, sizeof(pid));
	int sig = name ? signal_number(name) : -1;
	if (sig < 0)
		return EINVAL;
	return kill(atoi(pid), sig) ? errno : 0;
}

static int do_ptrace(const char *arg)
{
	pid_t pid = atoi(arg);
	int st;
	if (ptrace(PTRACE_ATTACH, pid, 0, 0))
		return errno;
	if (waitpid(pid, &st, __WALL) < 0 || ptrace(PTRACE_DETACH, pid, 0, 0)) {
		fprintf(stderr, "probe: ptrace %d: cannot detach: %s\n", pid, strerror(errno));
		exit(2);
	}
	return 0;
}

/* A new socket of KIND (tcp, udp, unix), or -errno. */
static int new_socket(const char *kind)
{
	int fd = !strcmp(kind, "tcp")    ? socket(AF_INET, SOCK_STREAM, 0)
		 : !strcmp(kind, "udp")  ? socket(AF_INET, SOCK_DGRAM, 0)
		 : !strcmp(kind, "unix") ? socket(AF_UNIX, SOCK_STREAM, 0)
					 : (errno = EINVAL, -1);
	return fd < 0 ? -errno : fd;
}

static int do_socket(const char *kind)
{
	int fd = new_socket(kind);
	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

static int do_bind(const char *arg)
{
	char kind[16];
	const char *port = split2(arg, kind, sizeof(kind));
	if (!port)
		return EINVAL;
	int fd = new_socket(kind);
	if (fd < 0)
		return -fd;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int err = bind(fd, (struct sockaddr *)&a, sizeof(a)) ? errno : 0;
	close(fd);
	return err;
}

static int do_connect(const char *arg)
{
	char kind[16];
	const char *port = split2(arg, kind, sizeof(kind));
	if (!port)
		return EINVAL;
	int fd = new_socket(kind);
	if (fd < 0)
		return -fd;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int err = connect(fd, (struct sockaddr *)&a, sizeof(a)) ? errno : 0;
	close(fd);
	return err == ECONNREFUSED ? 0 : err;
}

/* KIND's new IPC_PRIVATE object, reported as "KIND PATH"; once made, its IPC_RMID, reported
 * as "KIND PATH/rmid" (two lines, so that a refused create and a refused removal are told
 * apart). */
static void do_ipc(const char *kind, const char *path)
{
	char rmid[1040];
	int id, err;
	if (!strcmp(kind, "shm"))
		id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	else if (!strcmp(kind, "sem"))
		id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	else
		id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	report(kind, path, id < 0 ? errno : 0);
	if (id < 0)
		return;
	if (!strcmp(kind, "shm"))
		err = shmctl(id, IPC_RMID, NULL) ? errno : 0;
	else if (!strcmp(kind, "sem"))
		err = semctl(id, 0, IPC_RMID) ? errno : 0;
	else
		err = msgctl(id, IPC_RMID, NULL) ? errno : 0;
	snprintf(rmid, sizeof(rmid), "%s/rmid", path);
	report(kind, rmid, err);
}

int main(int argc, char **argv)
{
	read_context();
	/* Set by the program that exec'd this one: its exec succeeded. */
	const char *execed = getenv("PROBE_EXECED");
	if (execed) {
		report("exec", execed, 0);
		unsetenv("PROBE_EXECED");
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *colon = strchr(a, ':');
		char op[32];
		size_t oplen = colon ? (size_t)(colon - a) : strlen(a);
		if (oplen >= sizeof(op)) {
			fprintf(stderr, "probe: operation too long: %s\n", a);
			return 2;
		}
		memcpy(op, a, oplen);
		op[oplen] = 0;
		const char *path = colon ? expand(colon + 1) : "";
		char old[512];
		const char *new = NULL;
		if (!strcmp(op, "rename") || !strcmp(op, "link") || !strcmp(op, "symlink")) {
			new = split2(path, old, sizeof(old));
			if (!new) {
				fprintf(stderr, "probe: %s wants OLD,NEW: %s\n", op, a);
				return 2;
			}
		}
		if (!strcmp(op, "ctx")) {
			printf("C %s\n", context);
			fflush(stdout);
		} else if (!strcmp(op, "relay")) {
			int err = relay();
			if (err) {
				fprintf(stderr, "probe: relay: %s\n", strerror(err));
				return 2;
			}
		} else if (!strcmp(op, "read")) {
			report(op, path, do_read(path));
		} else if (!strcmp(op, "write")) {
			report(op, path, do_write(path));
		} else if (!strcmp(op, "create")) {
			report(op, path, do_create(path));
		} else if (!strcmp(op, "mkdir")) {
			report(op, path, mkdir(path, 0755) ? errno : 0);
		} else if (!strcmp(op, "unlink")) {
			report(op, path, unlink(path) ? errno : 0);
		} else if (!strcmp(op, "rmdir")) {
			report(op, path, rmdir(path) ? errno : 0);
		} else if (!strcmp(op, "rename")) {
			report(op, path, rename(old, new) ? errno : 0);
		} else if (!strcmp(op, "link")) {
			report(op, path, link(old, new) ? errno : 0);
		} else if (!strcmp(op, "symlink")) {
			report(op, path, symlink(old, new) ? errno : 0);
		} else if (!strcmp(op, "kill")) {
			report(op, path, do_kill(path));
		} else if (!strcmp(op, "ptrace")) {
			report(op, path, do_ptrace(path));
		} else if (!strcmp(op, "socket")) {
			report(op, path, do_socket(path));
		} else if (!strcmp(op, "bind")) {
			report(op, path, do_bind(path));
		} else if (!strcmp(op, "connect")) {
			report(op, path, do_connect(path));
		} else if (!strcmp(op, "shm") || !strcmp(op, "sem") || !strcmp(op, "msg")) {
			do_ipc(op, path);
		} else if (!strcmp(op, "sleep")) {
			/* A tracer's attach and detach, a stop and a continue may cut one sleep short. */
			time_t end = time(NULL) + atoi(path);
			signal(SIGUSR1, SIG_IGN);
			while (time(NULL) < end)
				sleep(1);
		} else if (!strcmp(op, "stat")) {
			struct stat st;
			report(op, path, stat(path, &st) ? errno : 0);
		} else if (!strcmp(op, "label")) {
			char con[256];
			ssize_t n = file_label(path, con, sizeof(con));
			if (n < 0) {
				report(op, path, -n);
			} else {
				struct stat st;
				const char *kind = "other";
				con[n] = 0;
				if (!lstat(path, &st))
					kind = S_ISDIR(st.st_mode)   ? "dir"
				       : S_ISREG(st.st_mode) ? "file"
				       : S_ISLNK(st.st_mode) ? "link"
							     : "other";
				printf("L %s %s %s\n", path, kind, con);
				fflush(stdout);
			}
		} else if (!strcmp(op, "exec")) {
			/* argv[i] becomes the new program's argv[0]: the rest are its operations. */
			argv[i] = (char *)path;
			setenv("PROBE_EXECED", path, 1);
			execv(path, argv + i);
			int err = errno;
			unsetenv("PROBE_EXECED");
			report(op, path, err);
		} else {
			fprintf(stderr, "probe: unknown operation '%s' in '%s'\n", op, a);
			return 2;
		}
	}
	return 0;
}
