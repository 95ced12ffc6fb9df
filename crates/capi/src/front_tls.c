/* The calling thread's front (src/front.rs), in C because stable Rust cannot choose a
 * thread-local's TLS model: a Rust thread_local in a shared library is general-dynamic, a
 * call to __tls_get_addr on every read. Initial-exec makes the read two loads (front.rs reads
 * it with inline assembly). It marks the library STATIC_TLS: its whole TLS block (under 1 KiB,
 * with the Rust runtime's) is then placed in the static TLS area, which glibc keeps a reserve
 * of for libraries loaded later by dlopen, as libGL's are (Python's `import selinux` loads the
 * drop-in even with glibc.rtld.optional_static_tls=0). Only a cache of what front.rs finds by
 * the thread pointer: zero in a new thread, set on its first fill. */
__attribute__((tls_model("initial-exec"))) __thread void *seaccess_front;

void seaccess_front_set(void *front)
{
	seaccess_front = front;
}
