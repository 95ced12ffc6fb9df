/*
 * What the peer's modes share: the triples read from standard input (each
 * with its SIDs once the AVC is up), libselinux's AVC started on a private
 * status page, the count of misses answered by the interposed
 * security_compute_av_flags_raw, and the way out on an error.
 */
#ifndef LIBSELINUX_AVC_PEER_H
#define LIBSELINUX_AVC_PEER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include <selinux/avc.h>
#include <selinux/selinux.h>

#define PROG "libselinux-avc-peer"

struct triple {
	char *scon;
	char *tcon;
	security_id_t ssid;
	security_id_t tsid;
	security_class_t tclass;
	access_vector_t allowed;
	access_vector_t auditallow;
	access_vector_t auditdeny;
	access_vector_t requested;
	unsigned long line;
};

extern struct triple *triples;
extern size_t ntriples;
/* Misses libselinux sent to this program's security server. */
extern atomic_ulong compute_calls;

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Reads the triples from `in`, starts the AVC and gives every triple its
 * SIDs, as an object manager keeps them. */
void peer_start(FILE *in);

/* The chatroom mode (chatroom.c): argv[0] is "chatroom". */
int chatroom_main(int argc, char **argv);

#endif
