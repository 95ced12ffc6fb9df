/*
 * The lab's chatroom (crates/lab/src/chatroom.rs) with libselinux's own AVC:
 *
 *   libselinux-avc-peer chatroom ROOMS[,ROOMS...] CLIENTS MESSAGES LEN ROUNDS READ WRITE < input
 *
 * input: one triple, the chat domain to itself in unix_stream_socket, with
 * its decision (as for the hit-path mode); READ and WRITE: the class's read
 * and write bits, hex. For each room count: rooms of CLIENTS clients over
 * Unix stream socket pairs, a writer, a server-side relay and a reader
 * thread per client, made once; then ROUNDS rounds, each a run without
 * checks ("vanilla") and a run asking avc_has_perm_noaudit at every send
 * ({write}) and receive ({read}), back to back, the order alternating. A run
 * is MESSAGES messages of LEN bytes a client, each to every other client of
 * its room. One JSON line per run:
 *
 *   {"rooms":R,"round":K,"mediator":"vanilla"|"libselinux","wall":S,"cpu":S,"refused":N}
 *
 * the wall and the process's CPU seconds of the run, and the checks that did
 * not grant (0 when the domain was chosen right). The Rust side pairs each
 * libselinux run with the vanilla run of its round, as for its own mediators.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "peer.h"

#define MAX_ROOM_COUNTS 16

/* Where the threads wait between runs (as mediate.rs's Gate). */
struct gate {
	pthread_mutex_t m;
	pthread_cond_t go, done;
	int phase, finished, workers;
};

struct chat {
	int clients, msgs, len;
	int *client_fd, *server_fd;	/* per client of every room, room-major */
	const int *checked;		/* per phase: 1 when the run asks the AVC */
	int phases;
	access_vector_t read_bit, write_bit;
	struct gate gate;
	atomic_ulong refused;
};

struct worker {
	pthread_t thread;
	struct chat *c;
	int kind;			/* 0 writer, 1 relay, 2 reader */
	int room, idx;
};

static void check(access_vector_t bit, unsigned long *refused)
{
	struct av_decision avd;
	const struct triple *t = &triples[0];

	if (avc_has_perm_noaudit(t->ssid, t->tsid, t->tclass, bit, NULL, &avd) < 0 || (avd.allowed & bit) != bit)
		(*refused)++;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_exact(int fd, char *buf, size_t len)
{
	while (len) {
		ssize_t n = read(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One run's share of a thread: as chatroom.rs's workers. */
static int run_share(struct worker *w, int checked, unsigned long *refused)
{
	struct chat *c = w->c;
	int n = c->clients, base = w->room * n, me = base + w->idx;
	char buf[4096];
	size_t len = (size_t)c->len;

	switch (w->kind) {
	case 0:
		memset(buf, 'm', len);
		for (int k = 0; k < c->msgs; k++) {
			if (checked)
				check(c->write_bit, refused);
			if (write_all(c->client_fd[me], buf, len))
				return -1;
		}
		return 0;
	case 1:
		for (int k = 0; k < c->msgs; k++) {
			if (read_exact(c->server_fd[me], buf, len))
				return -1;
			if (checked)
				check(c->read_bit, refused);
			for (int j = 0; j < n; j++) {
				if (j == w->idx)
					continue;
				if (checked)
					check(c->write_bit, refused);
				if (write_all(c->server_fd[base + j], buf, len))
					return -1;
			}
		}
		return 0;
	default:
		for (int k = 0; k < c->msgs * (n - 1); k++) {
			if (read_exact(c->client_fd[me], buf, len))
				return -1;
			if (checked)
				check(c->read_bit, refused);
		}
		return 0;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct chat *c = w->c;
	unsigned long refused = 0;
	int failed = 0;

	for (int p = 1; p <= c->phases; p++) {
		pthread_mutex_lock(&c->gate.m);
		while (c->gate.phase < p)
			pthread_cond_wait(&c->gate.go, &c->gate.m);
		pthread_mutex_unlock(&c->gate.m);
		/* After a failure the thread still passes every gate, sending
		 * nothing more. */
		if (!failed && run_share(w, c->checked[p - 1], &refused))
			failed = 1;
		pthread_mutex_lock(&c->gate.m);
		if (++c->gate.finished == c->gate.workers)
			pthread_cond_signal(&c->gate.done);
		pthread_mutex_unlock(&c->gate.m);
	}
	atomic_fetch_add(&c->refused, refused + (unsigned long)failed);
	return NULL;
}

static double seconds_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_bit(const char *s, access_vector_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 16);
	if (errno || end == s || *end || v == 0 || v > UINT32_MAX || (v & (v - 1)))
		return -1;
	*out = (access_vector_t)v;
	return 0;
}

static void chat_usage(const char *why)
{
	fprintf(stderr, PROG " chatroom: %s\nusage: " PROG
		" chatroom ROOMS[,ROOMS...] CLIENTS MESSAGES LEN ROUNDS READ WRITE < triple\n", why);
	exit(2);
}

/* Every room count's rooms set up, measured and torn down. */
static void run_rooms(int rooms, int clients, int msgs, int len, int rounds, access_vector_t rbit, access_vector_t wbit)
{
	int nconn = rooms * clients, nworkers = nconn * 3, phases = rounds * 2;
	struct chat c = { .clients = clients, .msgs = msgs, .len = len, .phases = phases,
			  .read_bit = rbit, .write_bit = wbit };
	struct worker *w = calloc((size_t)nworkers, sizeof(*w));
	int *checked = calloc((size_t)phases, sizeof(int));
	pthread_attr_t attr;
	int err;

	c.client_fd = calloc((size_t)nconn, sizeof(int));
	c.server_fd = calloc((size_t)nconn, sizeof(int));
	if (!w || !checked || !c.client_fd || !c.server_fd)
		die("out of memory");
	for (int i = 0; i < nconn; i++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			die("socketpair (%d of %d): %s", i + 1, nconn, strerror(errno));
		c.client_fd[i] = sv[0];
		c.server_fd[i] = sv[1];
	}
	/* Round k: vanilla then libselinux when k is even, else the other way. */
	for (int k = 0; k < rounds; k++) {
		checked[2 * k] = k % 2;
		checked[2 * k + 1] = 1 - k % 2;
	}
	c.checked = checked;
	pthread_mutex_init(&c.gate.m, NULL);
	pthread_cond_init(&c.gate.go, NULL);
	pthread_cond_init(&c.gate.done, NULL);
	c.gate.workers = nworkers;
	atomic_init(&c.refused, 0);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int i = 0; i < nworkers; i++) {
		w[i] = (struct worker){ .c = &c, .kind = i % 3, .room = i / 3 / clients, .idx = i / 3 % clients };
		err = pthread_create(&w[i].thread, &attr, worker_main, &w[i]);
		if (err)
			die("pthread_create (thread %d of %d): %s", i + 1, nworkers, strerror(err));
	}
	for (int p = 1; p <= phases; p++) {
		double t0 = seconds_of(CLOCK_MONOTONIC), c0 = seconds_of(CLOCK_PROCESS_CPUTIME_ID);

		pthread_mutex_lock(&c.gate.m);
		c.gate.phase = p;
		c.gate.finished = 0;
		pthread_cond_broadcast(&c.gate.go);
		while (c.gate.finished < c.gate.workers)
			pthread_cond_wait(&c.gate.done, &c.gate.m);
		pthread_mutex_unlock(&c.gate.m);
		printf("{\"rooms\":%d,\"round\":%d,\"mediator\":\"%s\",\"wall\":%.9f,\"cpu\":%.9f}\n", rooms, (p - 1) / 2,
		       checked[p - 1] ? "libselinux" : "vanilla", seconds_of(CLOCK_MONOTONIC) - t0,
		       seconds_of(CLOCK_PROCESS_CPUTIME_ID) - c0);
	}
	for (int i = 0; i < nworkers; i++)
		pthread_join(w[i].thread, NULL);
	printf("{\"rooms\":%d,\"refused\":%lu,\"misses\":%lu}\n", rooms, atomic_load(&c.refused), atomic_load(&compute_calls));
	fflush(stdout);
	for (int i = 0; i < nconn; i++) {
		close(c.client_fd[i]);
		close(c.server_fd[i]);
	}
	pthread_attr_destroy(&attr);
	free(c.client_fd);
	free(c.server_fd);
	free(checked);
	free(w);
}

int chatroom_main(int argc, char **argv)
{
	int rooms[MAX_ROOM_COUNTS], nrooms = 0, clients, msgs, len, rounds;
	access_vector_t rbit, wbit;
	char *list, *tok, *save = NULL;

	if (argc != 8)
		chat_usage("expected seven arguments");
	list = strdup(argv[1]);
	if (!list)
		die("out of memory");
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (nrooms == MAX_ROOM_COUNTS || parse_int(tok, 1, 1000, &rooms[nrooms]))
			chat_usage("ROOMS must be a comma-separated list of at most 16 room counts, each in 1..1000");
		nrooms++;
	}
	free(list);
	if (nrooms == 0)
		chat_usage("ROOMS is empty");
	if (parse_int(argv[2], 2, 1000, &clients))
		chat_usage("CLIENTS must be in 2..1000");
	if (parse_int(argv[3], 1, 1000000, &msgs))
		chat_usage("MESSAGES must be in 1..1000000");
	if (parse_int(argv[4], 1, 4096, &len))
		chat_usage("LEN must be in 1..4096");
	if (parse_int(argv[5], 1, 10000, &rounds))
		chat_usage("ROUNDS must be in 1..10000");
	if (parse_bit(argv[6], &rbit) || parse_bit(argv[7], &wbit))
		chat_usage("READ and WRITE must each be one permission bit, hex");
	peer_start(stdin);
	if (ntriples != 1)
		die("chatroom: expected one triple on stdin, got %zu", ntriples);
	for (int i = 0; i < nrooms; i++)
		run_rooms(rooms[i], clients, msgs, len, rounds, rbit, wbit);
	return 0;
}
