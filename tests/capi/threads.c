/* Many threads checking at once get the answers one thread gets: avc_has_perm and
 * selinux_check_access over sepol-oracle's queries ("SCON TCON CLASS" on standard input), first
 * on one thread, then on THREADS threads at once, each walking the queries from its own offset.
 * Written against libselinux's headers; the policy comes from SEACCESS_POLICY.
 *
 *   threads THREADS ROUNDS < queries     exits 1 on any difference */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>

struct query {
	char s[512], t[512], cls[128];
	security_id_t ssid, tsid;
	security_class_t c;
	unsigned mask;
	const char *perm[32];
	unsigned avc, check; /* allowed bits on one thread */
};

static struct query *qs;
static size_t nq;
static int rounds;

static int quiet_log(int type, const char *fmt, ...)
{
	(void)type; (void)fmt;
	return 0;
}

static int answer(struct query *q, unsigned *avc, unsigned *check)
{
	*avc = *check = 0;
	for (int i = 0; i < 32; i++) {
		if (!(q->mask & (1u << i)))
			continue;
		int rc = avc_has_perm(q->ssid, q->tsid, q->c, 1u << i, NULL, NULL);
		if (rc == 0)
			*avc |= 1u << i;
		else if (errno != EACCES)
			return -1;
		rc = selinux_check_access(q->s, q->t, q->cls, q->perm[i], NULL);
		if (rc == 0)
			*check |= 1u << i;
		else if (errno != EACCES)
			return -1;
	}
	return 0;
}

static void *worker(void *arg)
{
	size_t off = (size_t)arg, bad = 0;
	for (int r = 0; r < rounds; r++)
		for (size_t k = 0; k < nq; k++) {
			struct query *q = &qs[(k + off * 7919) % nq];
			unsigned a, c;
			if (answer(q, &a, &c) < 0 || a != q->avc || c != q->check)
				bad++;
		}
	return (void *)bad;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0, n = 0, bad = 0;
	union selinux_callback cb;

	if (argc != 3)
		return 2;
	int threads = atoi(argv[1]);
	rounds = atoi(argv[2]);
	cb.func_log = quiet_log;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	if (avc_open(NULL, 0) < 0) {
		fprintf(stderr, "threads: avc_open: %s\n", strerror(errno));
		return 1;
	}
	while (getline(&line, &cap, stdin) > 0) {
		if (nq == n) {
			n = n ? 2 * n : 1024;
			qs = realloc(qs, n * sizeof *qs);
			if (!qs)
				return 1;
		}
		struct query *q = &qs[nq];
		memset(q, 0, sizeof *q);
		if (sscanf(line, "%511s %511s %127s", q->s, q->t, q->cls) != 3)
			continue;
		q->c = string_to_security_class(q->cls);
		if (!q->c || avc_context_to_sid(q->s, &q->ssid) < 0 || avc_context_to_sid(q->t, &q->tsid) < 0)
			continue;
		for (int i = 0; i < 32; i++)
			if ((q->perm[i] = security_av_perm_to_string(q->c, 1u << i)))
				q->mask |= 1u << i;
		if (answer(q, &q->avc, &q->check) < 0)
			continue;
		nq++;
	}
	free(line);
	if (nq == 0) {
		fprintf(stderr, "threads: no queries\n");
		return 1;
	}
	/* A reset between the passes: the threads start from an empty cache and race to fill it. */
	avc_reset();
	pthread_t *ts = calloc(threads, sizeof *ts);
	for (int i = 0; i < threads; i++)
		pthread_create(&ts[i], NULL, worker, (void *)(size_t)i);
	for (int i = 0; i < threads; i++) {
		void *r;
		pthread_join(ts[i], &r);
		bad += (size_t)r;
	}
	free(ts);
	free(qs);
	avc_destroy();
	printf("threads: %d threads x %d rounds x %zu queries, %zu differences\n", threads, rounds, nq, bad);
	return bad ? 1 : 0;
}
