/* The partial-match digests restorecon keeps on directories (security.sehash), built against
 * Debian's libselinux and run on it and on libseaccess in its place: both must print the same.
 *
 *   dropin_digest DIR KEY...
 *
 * For each KEY, selabel_hash_all_partial_matches on the file backend (the digest in hex, or
 * "none"); then for DIR, selabel_get_digests_all_partial_matches (whether the kept digest
 * matches, the kept one and the computed one). The X backend, which has no partial matches,
 * answers false. */
#include <stdio.h>
#include <stdlib.h>
#include <selinux/selinux.h>
#include <selinux/label.h>

static void hex(const char *what, const uint8_t *d, size_t n)
{
	printf(" %s=", what);
	if (!d) {
		printf("none");
		return;
	}
	for (size_t i = 0; i < n; i++)
		printf("%02x", d[i]);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: dropin_digest DIR KEY...\n");
		return 2;
	}
	struct selabel_handle *h = selabel_open(SELABEL_CTX_FILE, NULL, 0);
	struct selabel_handle *x = selabel_open(SELABEL_CTX_X, NULL, 0);
	if (!h || !x) {
		perror("selabel_open");
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		uint8_t d[20];
		bool ok = selabel_hash_all_partial_matches(h, argv[i], d);
		printf("hash %s:", argv[i]);
		hex("digest", ok ? d : NULL, sizeof d);
		printf("\n");
	}
	uint8_t d[20];
	printf("x backend: %d\n", selabel_hash_all_partial_matches(x, "/etc", d));
	uint8_t *calc = NULL, *kept = NULL;
	size_t len = 0;
	bool match = selabel_get_digests_all_partial_matches(h, argv[1], &calc, &kept, &len);
	printf("digests %s: match=%d len=%zu", argv[1], match, len);
	hex("kept", kept, len);
	hex("calc", calc, len);
	printf("\n");
	free(calc);
	free(kept);
	selabel_close(h);
	selabel_close(x);
	return 0;
}
