/* The C tests' one assertion: a failed expectation is printed with where, what and errno, and
 * counted, so that a test reports every failure rather than stopping at the first. */
#ifndef SEACCESS_TEST_EXPECT_H
#define SEACCESS_TEST_EXPECT_H

#include <errno.h>
#include <stdio.h>

static int failures;

#define EXPECT(cond, what)                                                                 \
	do {                                                                               \
		if (!(cond)) {                                                             \
			printf("FAIL %s:%d: %s (errno %d)\n", __FILE__, __LINE__, what, errno); \
			failures++;                                                        \
		}                                                                          \
	} while (0)

#endif
