// SPDX-License-Identifier: GPL-2.0
/* seaccess enforce: the SELinux policy's decisions, computed by the engine in userspace and put
 * in maps, enforced on the BPF LSM's hooks. Each hook follows its function in the kernel's
 * security/selinux/hooks.c (cited above it): the same permissions, in the same order, with the
 * object manager's class numbers and bits (classes.h, generated from crates/objmgr by build.rs).
 *
 * A task without task storage is not confined and never checked; a confined task meets a miss
 * (no decision for its key) as a denial, and the daemon is told (SEA_EV_MISS). An inode nobody
 * labeled (no inode storage) is what the kernel gives it on its file system (inode_sid: the
 * filesystems map, by the file system type's name).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "kernel.h"
#include "layout.h"
#include "classes.h"

char LICENSE[] SEC("license") = "GPL";

#include "maps.h"
#include "decide.h"
#include "labels.h"
#include "avd.h"
#include "files.h"
#include "tasks.h"
#include "inodes.h"
#include "sockets.h"
#include "memory.h"
#include "ipc.h"
