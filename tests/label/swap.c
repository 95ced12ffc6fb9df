/* The attacker of the relabel races (tests/label/cli.sh, tests/capi/restorecon_race.sh): swaps
 * two names with renameat2(RENAME_EXCHANGE), a directory it owns and a symbolic link to a
 * directory outside the tree, as fast as it can, until the file STOP exists; prints how many
 * swaps it made. Run as the unprivileged owner (runuser -u nobody). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: swap A B STOP\n");
		return 2;
	}
	for (unsigned long n = 1;; n++) {
		if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) != 0) {
			perror("renameat2");
			return 1;
		}
		if (n % 256 == 0 && access(argv[3], F_OK) == 0) {
			printf("%lu\n", n);
			return 0;
		}
	}
}
