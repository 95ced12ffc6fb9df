// SPDX-License-Identifier: GPL-2.0
/* seaccess.bpf.c's The maps: the generation switch, each generation's inner maps, the storages, the ring buffer; and gen_get, which takes one generation for a hook.
 * Included by seaccess.bpf.c, in its order, never on its own. */
#ifndef SEACCESS_MAPS_H
#define SEACCESS_MAPS_H

/* The generation in use: its seqno, stored by the daemon in one 64-bit store. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_flags, BPF_F_MMAPABLE);
} current SEC(".maps");

/* Allocated as filled: a preallocated hash of SEA_MAX_DECISIONS entries would take about 100 MiB
 * per generation whatever the policy needs. */
struct decisions_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SEA_MAX_DECISIONS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	/* Sizes, not __type: libbpf 1.7 cannot size a struct key of an inner map's BTF ("can't
	 * determine key size"), and inner maps made by the daemon carry no BTF anyway. */
	__uint(key_size, sizeof(struct sea_key));
	__uint(value_size, sizeof(struct sea_av));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct decisions_inner);
} decisions SEC(".maps");

struct transitions_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SEA_MAX_TRANSITIONS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct sea_key));
	__uint(value_size, sizeof(struct sea_trans));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct transitions_inner);
} transitions SEC(".maps");

struct named_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SEA_MAX_NAMED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct sea_nkey));
	__uint(value_size, sizeof(struct sea_trans));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct named_inner);
} named SEC(".maps");

struct config_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct sea_config));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct config_inner);
} config SEC(".maps");

struct filesystems_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SEA_MAX_FILESYSTEMS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct sea_fskey));
	__uint(value_size, sizeof(struct sea_fsdef));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct filesystems_inner);
} filesystems SEC(".maps");

/* Port SIDs, index SEA_PORT_<P> * 65536 + port (layout.h). */
struct ports_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SEA_PORTS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct ports_inner);
} ports SEC(".maps");

/* The nodecon entries, config->nodes of them. */
struct nodes_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SEA_MAX_NODES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct sea_node));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct nodes_inner);
} nodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sea_task);
} task_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sea_inode);
} inode_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

/* One generation's maps, taken once per hook: everything a hook decides comes from these. */
struct gen {
	__u64 seqno;
	void *decisions;
	void *transitions;
	void *named;
	void *filesystems;
	void *ports;
	void *nodes;
	struct sea_config *config;
};

/* The seqno of the generation in use (0: none), all a remembered grant is checked against:
 * one map read where gen_get makes nine. */
static __always_inline __u64 seqno_now(void)
{
	__u32 zero = 0;
	__u64 *cur = bpf_map_lookup_elem(&current, &zero);

	/* One aligned 64-bit load (BPF_LDX | BPF_DW: one instruction once JITed), so never half of
	 * one store and half of another. Not __atomic_load_n(ACQUIRE): clang 14 cannot select it
	 * for BPF (load-acquire came with LLVM 20); the daemon fills the slot's maps through bpf()
	 * system calls before its store, which the kernel's map updates order. */
	return cur ? *(volatile __u64 *)cur : 0;
}

/* Reads `current` once and takes its slot's maps; 0 when no generation is installed (then a
 * confined task is denied: it cannot have been confined before one was). */
static __always_inline int gen_get(struct gen *g)
{
	__u32 zero = 0, slot;
	void *cfgmap;

	g->seqno = seqno_now();
	if (!g->seqno)
		return 0;
	slot = g->seqno & 1;
	g->decisions = bpf_map_lookup_elem(&decisions, &slot);
	g->transitions = bpf_map_lookup_elem(&transitions, &slot);
	g->named = bpf_map_lookup_elem(&named, &slot);
	g->filesystems = bpf_map_lookup_elem(&filesystems, &slot);
	g->ports = bpf_map_lookup_elem(&ports, &slot);
	g->nodes = bpf_map_lookup_elem(&nodes, &slot);
	cfgmap = bpf_map_lookup_elem(&config, &slot);
	if (!g->decisions || !g->transitions || !g->named || !g->filesystems || !g->ports ||
	    !g->nodes || !cfgmap)
		return 0;
	g->config = bpf_map_lookup_elem(cfgmap, &zero);
	return g->config != 0;
}

#endif
