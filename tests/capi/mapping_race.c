/* selinux_set_mapping switched by one thread while others check: every check reads the map once.
 *
 *   mapping_race SCON TCON SECONDS [CHECKERS]      (policy from SEACCESS_POLICY)
 *
 * From the policy's own answers (no map set) the program picks, for SCON -> TCON, a `file`
 * permission D that is denied and one G that is allowed, and a policy class K > 1 with some
 * permissions R allowed. Two maps, A and B, each with K entries:
 *   entry 1:   A: file {D, G}        B: file {G, D}
 *   entry 2..K: file {D, D, ... D} (32 times) in both
 * A switcher thread alternates A and B with selinux_set_mapping; CHECKER threads meanwhile ask
 *   selinux_check_access(SCON, TCON, "file", D): denied under A and under B; granted only when the
 *     name is resolved with one map and the bits read with the other (program bit 0 of A is D,
 *     of B G);
 *   avc_has_perm(SCON, TCON, K, R): every bit of entry K is D in both maps, so it is denied under
 *     either; granted only when the call sees no map at all (the policy's own class K and bits
 *     R, which the policy allows), as a switch that drops the old map before setting the new one
 *     shows.
 * Prints the chosen names and the counts; exits 1 on any grant, 2 when the policy offers no
 * such D, G and K (the test then cannot say anything). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>

#define MAXK 64

static const char *scon, *tcon;
static char dname[64], gname[64];
static struct security_class_mapping map_a[MAXK + 1], map_b[MAXK + 1];
static security_class_t kclass;
static char kname[64];
static access_vector_t kperms;
static security_id_t ssid, tsid;
static atomic_int stop;
static atomic_ulong checks, has_perms, check_grants, has_perm_grants, switches, other_errors;

static int quiet_log(int type, const char *fmt, ...)
{
	(void)type; (void)fmt;
	return 0;
}

static void fill(struct security_class_mapping *m, int first_swapped)
{
	for (int i = 0; i < kclass; i++) {
		m[i].name = "file";
		for (int p = 0; p < 32; p++)
			m[i].perms[p] = dname;
		m[i].perms[32] = NULL;
	}
	m[0].perms[0] = first_swapped ? gname : dname;
	m[0].perms[1] = first_swapped ? dname : gname;
	m[0].perms[2] = NULL;
	m[kclass].name = NULL;
}

static void *switcher(void *arg)
{
	(void)arg;
	for (unsigned long n = 0; !atomic_load(&stop); n++) {
		if (selinux_set_mapping(n & 1 ? map_b : map_a) < 0)
			atomic_fetch_add(&other_errors, 1);
		atomic_fetch_add(&switches, 1);
	}
	return NULL;
}

static void *checker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 64; i++) {
			errno = 0;
			int rc = selinux_check_access(scon, tcon, "file", dname, NULL);
			if (rc == 0)
				atomic_fetch_add(&check_grants, 1);
			else if (errno != EACCES)
				atomic_fetch_add(&other_errors, 1);
			errno = 0;
			rc = avc_has_perm_noaudit(ssid, tsid, kclass, kperms, NULL, NULL);
			if (rc == 0)
				atomic_fetch_add(&has_perm_grants, 1);
			else if (errno != EACCES)
				atomic_fetch_add(&other_errors, 1);
		}
		atomic_fetch_add(&checks, 64);
		atomic_fetch_add(&has_perms, 64);
	}
	return NULL;
}

/* A permission of `file` the policy denies (want_allowed 0) or allows (1) for SCON -> TCON. */
static int pick_file_perm(int want_allowed, char *out)
{
	security_class_t c = string_to_security_class("file");
	for (int b = 0; b < 32 && c; b++) {
		const char *p = security_av_perm_to_string(c, 1u << b);
		if (!p)
			continue;
		errno = 0;
		int rc = selinux_check_access(scon, tcon, "file", p, NULL);
		if ((want_allowed && rc == 0) || (!want_allowed && rc < 0 && errno == EACCES)) {
			snprintf(out, 64, "%s", p);
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	union selinux_callback cb;
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: mapping_race SCON TCON SECONDS [CHECKERS]\n");
		return 2;
	}
	scon = argv[1];
	tcon = argv[2];
	double seconds = atof(argv[3]);
	int nthreads = argc == 5 ? atoi(argv[4]) : 2;
	cb.func_log = quiet_log;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	if (avc_open(NULL, 0) < 0 || avc_context_to_sid(scon, &ssid) < 0 || avc_context_to_sid(tcon, &tsid) < 0) {
		perror("setup");
		return 2;
	}
	if (pick_file_perm(0, dname) < 0 || pick_file_perm(1, gname) < 0) {
		fprintf(stderr, "setup: the policy gives %s -> %s no denied and allowed file permission\n", scon, tcon);
		return 2;
	}
	for (int k = 2; k <= MAXK && !kclass; k++) {
		struct av_decision avd;
		if (security_class_to_string(k) && avc_has_perm_noaudit(ssid, tsid, k, 0xffffffff, NULL, &avd) < 0 && avd.allowed) {
			kclass = k;
			kperms = avd.allowed;
			snprintf(kname, sizeof kname, "%s", security_class_to_string(k));
		}
	}
	if (!kclass || avc_has_perm_noaudit(ssid, tsid, kclass, kperms, NULL, NULL) < 0) {
		fprintf(stderr, "setup: no policy class above 1 allows %s -> %s anything\n", scon, tcon);
		return 2;
	}
	fill(map_a, 0);
	fill(map_b, 1);
	/* Each map alone denies both checks: the answers the race must keep. */
	for (int i = 0; i < 2; i++) {
		if (selinux_set_mapping(i ? map_b : map_a) < 0) {
			perror("selinux_set_mapping");
			return 2;
		}
		errno = 0;
		if (selinux_check_access(scon, tcon, "file", dname, NULL) == 0 || errno != EACCES
		    || avc_has_perm_noaudit(ssid, tsid, kclass, kperms, NULL, NULL) == 0) {
			fprintf(stderr, "setup: map %c alone grants\n", i ? 'B' : 'A');
			return 2;
		}
	}
	printf("denied file %s, allowed file %s; policy class %s (%u) allows 0x%x\n", dname, gname, kname, kclass, kperms);
	pthread_t sw, th[16];
	if (nthreads < 1 || nthreads > 16)
		nthreads = 2;
	pthread_create(&sw, NULL, switcher, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, checker, NULL);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct timespec nap = {0, 20 * 1000 * 1000};
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	atomic_store(&stop, 1);
	pthread_join(sw, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	unsigned long cg = atomic_load(&check_grants), hg = atomic_load(&has_perm_grants), oe = atomic_load(&other_errors);
	printf("mapping_race: %lu map switches; selinux_check_access %lu calls, %lu wrong grants; avc_has_perm %lu calls, %lu wrong grants; %lu other errors\n",
	       atomic_load(&switches), atomic_load(&checks), cg, atomic_load(&has_perms), hg, oe);
	return cg || hg || oe ? 1 : 0;
}
