/* The attacker of the relabel races (tests/label/cli.sh, tests/capi/restorecon_race.sh): swaps
 * each pair of names with renameat2(RENAME_EXCHANGE), in turn and as fast as it can (a
 * directory it owns and a symbolic link to a directory outside the tree), until the file STOP
 * exists; then prints how many swaps it made, each pair swapped an even number of times (so
 * every name is back where it started). Run as the unprivileged owner (runuser -u nobody). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 4 || argc % 2 != 0) {
		fprintf(stderr, "usage: swap STOP A B [A B]...\n");
		return 2;
	}
	int pairs = (argc - 2) / 2;
	for (unsigned long n = 1;; n++) {
		for (int i = 0; i < pairs; i++) {
			if (renameat2(AT_FDCWD, argv[2 + 2 * i], AT_FDCWD, argv[3 + 2 * i], RENAME_EXCHANGE) != 0) {
				perror("renameat2");
				return 1;
			}
		}
		if (n % 256 == 0 && access(argv[1], F_OK) == 0) {
			printf("%lu\n", n * pairs);
			return 0;
		}
	}
}
