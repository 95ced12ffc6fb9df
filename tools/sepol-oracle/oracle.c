/*
 * The project's libsepol answering program: what libsepol says about access queries, so the test
 * suite and `seaccess-lab bench engine` can compare seaccess with it. See README.md for the commands and
 * their output formats.
 *
 * libsepol's services API keeps one global policy; this program loads it once per run. The query
 * generator also needs the policy's symbol tables and rules, which only libsepol's internal
 * structures expose, hence the static link (libsepol.a) and a second, private policydb.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sepol/debug.h>
#include <sepol/policydb/avtab.h>
#include <sepol/policydb/ebitmap.h>
#include <sepol/policydb/policydb.h>
#include <sepol/policydb/services.h>

#define CTX_MAX 16384

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "sepol-oracle: %s: %s\n", what, detail);
	exit(2);
}

static void *must(void *p)
{
	if (!p)
		die("out of memory", "allocation failed");
	return p;
}

struct blob {
	char *data;
	size_t len;
};

static struct blob read_whole(const char *path)
{
	struct blob b = { NULL, 0 };
	size_t cap = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		die("cannot open policy", path);
	for (;;) {
		if (b.len == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			b.data = must(realloc(b.data, cap));
		}
		size_t got = fread(b.data + b.len, 1, cap - b.len, f);
		if (got == 0)
			break;
		b.len += got;
	}
	if (ferror(f))
		die("cannot read policy", path);
	fclose(f);
	return b;
}

static double monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Loads POLICY into libsepol's services; returns the load time in milliseconds. */
static double services_load(const char *path)
{
	struct blob b = read_whole(path);
	double start = monotonic_ms();
	if (sepol_load_policy(b.data, b.len) < 0)
		die("libsepol refused the policy", path);
	double took = monotonic_ms() - start;
	free(b.data);
	return took;
}

/* ---- generator ----------------------------------------------------------------------------- */

/* A deterministic generator (splitmix64), so one seed always gives the same queries. */
static uint64_t seed_state;

static uint64_t next_random(void)
{
	uint64_t z = (seed_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(next_random() % n) : 0;
}

static int coin(void)
{
	return (int)(next_random() >> 63);
}

static policydb_t pdb;

/* The zero-based bit number of a random set bit of E, or -1 when E is empty. */
static int random_bit(const ebitmap_t *e)
{
	unsigned int total = ebitmap_cardinality(e);
	if (total == 0)
		return -1;
	unsigned int skip = below(total), bit;
	ebitmap_node_t *node;
	ebitmap_for_each_positive_bit(e, node, bit) {
		if (skip-- == 0)
			return (int)bit;
	}
	return -1;
}

/*
 * Appends ":LEVEL" for a random level inside [low, high]. Extra categories come from the first
 * few of high's, so that among the generated levels equal, dominating and incomparable pairs are
 * all common, and the number of distinct contexts stays small enough for libsepol's SID table.
 */
static int append_level(char *out, size_t cap, size_t used, const mls_level_t *low, const mls_level_t *high)
{
	if (high->sens < low->sens || low->sens == 0 || !pdb.p_sens_val_to_name[low->sens - 1])
		return -1;
	uint32_t sens = low->sens + below(high->sens - low->sens + 1);
	const char *sname = pdb.p_sens_val_to_name[sens - 1];
	if (!sname)
		return -1;
	int n = snprintf(out + used, cap - used, ":%s", sname);
	if (n < 0 || (size_t)n >= cap - used)
		return -1;
	used += (size_t)n;
	int widen = coin();
	unsigned int seen = 0, bit;
	char sep = ':';
	ebitmap_node_t *node;
	ebitmap_for_each_positive_bit(&high->cat, node, bit) {
		int take = ebitmap_get_bit(&low->cat, bit) || (widen && seen < 8 && coin());
		seen++;
		if (!take)
			continue;
		const char *cname = pdb.p_cat_val_to_name[bit];
		if (!cname)
			return -1;
		n = snprintf(out + used, cap - used, "%c%s", sep, cname);
		if (n < 0 || (size_t)n >= cap - used)
			return -1;
		used += (size_t)n;
		sep = ',';
	}
	return 0;
}

/* Whether libsepol accepts CTX as a context of the loaded policy. */
static int valid_context(const char *ctx)
{
	sepol_security_id_t sid;
	return sepol_context_to_sid(ctx, strlen(ctx) + 1, &sid) == 0;
}

static int finish_context(char *out, size_t cap, int used, const user_datum_t *user)
{
	if (used < 0 || (size_t)used >= cap)
		return -1;
	if (pdb.mls && append_level(out, cap, (size_t)used, &user->exp_range.level[0], &user->exp_range.level[1]))
		return -1;
	return valid_context(out) ? 0 : -1;
}

/* A random valid process context, of type TYPE (zero-based) or of any type when TYPE < 0. */
static int process_context(char *out, size_t cap, int type)
{
	for (int attempt = 0; attempt < 2000; attempt++) {
		uint32_t u = below(pdb.p_users.nprim);
		const user_datum_t *user = pdb.user_val_to_struct[u];
		if (!user || !pdb.p_user_val_to_name[u])
			continue;
		int r = random_bit(&user->roles.roles);
		if (r < 0 || (uint32_t)r >= pdb.p_roles.nprim || !pdb.role_val_to_struct[r] || !pdb.p_role_val_to_name[r])
			continue;
		const ebitmap_t *types = &pdb.role_val_to_struct[r]->types.types;
		int t = type >= 0 ? type : random_bit(types);
		if (t < 0 || !ebitmap_get_bit(types, (unsigned int)t) || !pdb.p_type_val_to_name[t])
			continue;
		int used = snprintf(out, cap, "%s:%s:%s", pdb.p_user_val_to_name[u], pdb.p_role_val_to_name[r],
				    pdb.p_type_val_to_name[t]);
		if (finish_context(out, cap, used, user) == 0)
			return 0;
	}
	return -1;
}

/* A random valid object context (role object_r), of type TYPE or of any type when TYPE < 0. */
static int file_context(char *out, size_t cap, int type)
{
	for (int attempt = 0; attempt < 2000; attempt++) {
		uint32_t u = below(pdb.p_users.nprim);
		const user_datum_t *user = pdb.user_val_to_struct[u];
		if (!user || !pdb.p_user_val_to_name[u])
			continue;
		uint32_t t = type >= 0 ? (uint32_t)type : below(pdb.p_types.nprim);
		const type_datum_t *td = pdb.type_val_to_struct[t];
		if (!td || td->flavor == TYPE_ATTRIB || !pdb.p_type_val_to_name[t])
			continue;
		int used = snprintf(out, cap, "%s:object_r:%s", pdb.p_user_val_to_name[u], pdb.p_type_val_to_name[t]);
		if (finish_context(out, cap, used, user) == 0)
			return 0;
	}
	return -1;
}

/* The (source, target, class) keys of the allow rules, unconditional and conditional. */
struct rule_keys {
	avtab_key_t *at;
	size_t len, cap;
};

static int keep_allow(avtab_key_t *key, avtab_datum_t *datum, void *arg)
{
	(void)datum;
	struct rule_keys *keys = arg;
	if (!(key->specified & AVTAB_ALLOWED))
		return 0;
	if (keys->len == keys->cap) {
		keys->cap = keys->cap ? keys->cap * 2 : 1024;
		keys->at = must(realloc(keys->at, keys->cap * sizeof *keys->at));
	}
	keys->at[keys->len++] = *key;
	return 0;
}

/* A concrete type (zero-based) that a rule's type or attribute VALUE (one-based) covers. */
static int covered_type(uint16_t value)
{
	if (value == 0 || value > pdb.p_types.nprim)
		return -1;
	return random_bit(&pdb.attr_type_map[value - 1]);
}

struct base {
	char *source, *target;
	uint32_t class; /* zero-based */
};

/* One base triple: from an allow rule (so the decision is at least partly allowed) or at random. */
static int make_base(const struct rule_keys *keys, struct base *b)
{
	static char s[CTX_MAX], t[CTX_MAX];
	uint32_t class;
	if (keys->len && coin()) {
		const avtab_key_t *k = &keys->at[below((uint32_t)keys->len)];
		int st = covered_type(k->source_type), tt = covered_type(k->target_type);
		if (st < 0 || tt < 0 || process_context(s, sizeof s, st))
			return -1;
		/* The target is a process or a file; a type no role holds can only be a file. */
		int target_ok = coin() ? process_context(t, sizeof t, tt) == 0 : 0;
		if (!target_ok && file_context(t, sizeof t, tt))
			return -1;
		class = k->target_class - 1u;
	} else {
		if (process_context(s, sizeof s, -1))
			return -1;
		if (coin() ? process_context(t, sizeof t, -1) : file_context(t, sizeof t, -1))
			return -1;
		class = below(pdb.p_classes.nprim);
	}
	if (class >= pdb.p_classes.nprim || !pdb.p_class_val_to_name[class])
		return -1;
	b->source = must(strdup(s));
	b->target = must(strdup(t));
	b->class = class;
	return 0;
}

static int generate(const char *path, uint64_t seed, long count, long pool)
{
	if (count < 0 || pool <= 0)
		die("gen", "COUNT must be >= 0 and POOL > 0");
	struct blob b = read_whole(path);
	if (policydb_init(&pdb) || policydb_from_image(NULL, b.data, b.len, &pdb))
		die("libsepol cannot read the policy", path);
	free(b.data);
	services_load(path);
	seed_state = seed ^ 0x5eacce55ull;

	struct rule_keys keys = { NULL, 0, 0 };
	avtab_map(&pdb.te_avtab, keep_allow, &keys);
	avtab_map(&pdb.te_cond_avtab, keep_allow, &keys);

	/*
	 * A bounded pool of base triples, recombined below: a realistic, limited set of contexts
	 * (libsepol's SID table is a small fixed hash and slows down when swamped).
	 */
	struct base *bases = must(calloc((size_t)pool, sizeof *bases));
	long misses = 0;
	for (long i = 0; i < pool;) {
		if (make_base(&keys, &bases[i]) == 0) {
			i++;
			misses = 0;
		} else if (++misses > 1000 + 100 * pool) {
			die("no valid process and object contexts found in", path);
		}
	}
	for (long i = 0; i < count; i++) {
		uint32_t a = below((uint32_t)pool);
		uint32_t t = coin() ? a : below((uint32_t)pool);
		uint32_t c = coin() ? a : below((uint32_t)pool);
		printf("%s %s %s\n", bases[a].source, bases[t].target, pdb.p_class_val_to_name[bases[c].class]);
	}
	return 0;
}

/* ---- answering ----------------------------------------------------------------------------- */

struct query {
	sepol_security_id_t source, target;
	sepol_security_class_t class;
};

/* Parses "SCON TCON CLASS" into SIDs and a class of the loaded policy; 0 on success. */
static int parse_query(char *line, struct query *q)
{
	char *save = NULL;
	char *s = strtok_r(line, " \t\r\n", &save);
	char *t = strtok_r(NULL, " \t\r\n", &save);
	char *c = strtok_r(NULL, " \t\r\n", &save);
	if (!s || !t || !c || strtok_r(NULL, " \t\r\n", &save))
		return -1;
	if (sepol_context_to_sid(s, strlen(s) + 1, &q->source) ||
	    sepol_context_to_sid(t, strlen(t) + 1, &q->target) ||
	    sepol_string_to_security_class(c, &q->class))
		return -1;
	return 0;
}

enum mode { AV, CREATE, RELABEL, MEMBER };

static void answer_one(enum mode mode, const struct query *q)
{
	if (mode == AV) {
		struct sepol_av_decision d;
		if (sepol_compute_av(q->source, q->target, q->class, 0xffffffffu, &d))
			puts("error");
		else
			printf("%x %x %x %x %u 0\n", d.allowed, d.decided, d.auditallow, d.auditdeny, d.seqno);
		return;
	}
	sepol_security_id_t out;
	int rc = mode == CREATE ? sepol_transition_sid(q->source, q->target, q->class, &out)
	       : mode == RELABEL ? sepol_change_sid(q->source, q->target, q->class, &out)
	       : sepol_member_sid(q->source, q->target, q->class, &out);
	char *ctx = NULL;
	size_t len = 0;
	if (rc || sepol_sid_to_context(out, &ctx, &len)) {
		puts("error");
		return;
	}
	printf("%s\n", ctx);
	free(ctx);
}

static int answer(enum mode mode, const char *path)
{
	services_load(path);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, stdin) >= 0) {
		struct query q;
		if (parse_query(line, &q))
			puts("error");
		else
			answer_one(mode, &q);
	}
	free(line);
	return 0;
}

static int timing(const char *path)
{
	double load_ms = services_load(path);
	struct query *qs = NULL;
	size_t n = 0, qcap = 0, cap = 0;
	char *line = NULL;
	while (getline(&line, &cap, stdin) >= 0) {
		struct query q;
		if (parse_query(line, &q))
			continue;
		if (n == qcap) {
			qcap = qcap ? qcap * 2 : 1 << 16;
			qs = must(realloc(qs, qcap * sizeof *qs));
		}
		qs[n++] = q;
	}
	free(line);
	/* The XOR of the answers is printed so the compiler cannot drop the calls. */
	uint32_t mix = 0;
	double start = monotonic_ms();
	for (size_t i = 0; i < n; i++) {
		struct sepol_av_decision d;
		sepol_compute_av(qs[i].source, qs[i].target, qs[i].class, 0xffffffffu, &d);
		mix ^= d.allowed;
	}
	double took_ms = monotonic_ms() - start;
	fprintf(stderr, "load_ms %.2f queries %zu ns_per_compute_av %.1f (mix %x)\n", load_ms, n,
		n ? took_ms * 1e6 / (double)n : 0.0, mix);
	free(qs);
	return 0;
}

/* ---- permissions --------------------------------------------------------------------------- */

static int print_permission(hashtab_key_t name, hashtab_datum_t datum, void *class_name)
{
	const perm_datum_t *perm = datum;
	printf("%s %u %s\n", (const char *)class_name, perm->s.value - 1, (const char *)name);
	return 0;
}

static int permissions(const char *path)
{
	struct blob b = read_whole(path);
	if (policydb_init(&pdb) || policydb_from_image(NULL, b.data, b.len, &pdb))
		die("libsepol cannot read the policy", path);
	free(b.data);
	for (uint32_t c = 0; c < pdb.p_classes.nprim; c++) {
		class_datum_t *class = pdb.class_val_to_struct[c];
		char *name = pdb.p_class_val_to_name[c];
		if (!class || !name)
			continue;
		if (class->comdatum)
			hashtab_map(class->comdatum->permissions.table, print_permission, name);
		hashtab_map(class->permissions.table, print_permission, name);
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sepol-oracle gen POLICY SEED COUNT [POOL]\n"
			"       sepol-oracle av|create|relabel|member|time POLICY < queries\n"
			"       sepol-oracle perms POLICY\n");
	exit(2);
}

int main(int argc, char **argv)
{
	sepol_debug(0);
	if (argc < 3)
		usage();
	const char *cmd = argv[1], *policy = argv[2];
	if (!strcmp(cmd, "gen") && (argc == 5 || argc == 6))
		return generate(policy, strtoull(argv[3], NULL, 10), strtol(argv[4], NULL, 10),
				argc == 6 ? strtol(argv[5], NULL, 10) : 4096);
	if (argc != 3)
		usage();
	if (!strcmp(cmd, "av"))
		return answer(AV, policy);
	if (!strcmp(cmd, "create"))
		return answer(CREATE, policy);
	if (!strcmp(cmd, "relabel"))
		return answer(RELABEL, policy);
	if (!strcmp(cmd, "member"))
		return answer(MEMBER, policy);
	if (!strcmp(cmd, "time"))
		return timing(policy);
	if (!strcmp(cmd, "perms"))
		return permissions(policy);
	usage();
	return 2;
}
