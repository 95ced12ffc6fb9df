/* Run on target/libselinux/libselinux.so.1 with SEACCESS_POLICY (and SEACCESS_SUBJECTS): the
 * answers that need a policy, printed one a line for run.sh to compare with what the seaccess
 * command derives from the same policy. Built against Debian's libselinux headers and library,
 * loaded on libseaccess (LD_LIBRARY_PATH). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <poll.h>
#include <selinux/selinux.h>
#include <selinux/avc.h>

/* Prints what one getter gave; the call is made first (C leaves argument order open). */
#define CON(what, call)                                                                       \
    do {                                                                                      \
        char *c_ = NULL;                                                                      \
        int rc_ = call(&c_);                                                                  \
        printf("%s=%d %s\n", what, rc_, rc_ < 0 ? strerror(errno) : (c_ ? c_ : "(null)"));     \
        freecon(c_);                                                                          \
    } while (0)

static int self_pidcon(char **c) { return getpidcon(getpid(), c); }
static int parent_pidcon(char **c) { return getpidcon(getppid(), c); }
static int peer_fd = -1;
static int peercon(char **c) { return getpeercon(peer_fd, c); }

int main(int argc, char **argv) {
    char *c = NULL;
    int sv[2], a, b, d;
    security_class_t file = string_to_security_class("file");
    CON("getcon", getcon);
    CON("getpidcon_self", self_pidcon);
    CON("getpidcon_parent", parent_pidcon);
    CON("getprevcon", getprevcon);
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
        peer_fd = sv[0];
        CON("getpeercon", peercon);
    }
    CON("getexeccon_unset", getexeccon);
    printf("setexeccon_invalid=%d\n", setexeccon("no_u:no_r:no_t:s0"));
    printf("setexeccon=%d\n", setexeccon(argc > 1 ? argv[1] : "system_u:system_r:httpd_t:s0"));
    CON("getexeccon", getexeccon);
    printf("setexeccon_null=%d\n", setexeccon(NULL));
    CON("getexeccon_cleared", getexeccon);
    printf("setfscreatecon=%d\n", setfscreatecon("system_u:object_r:etc_t:s0"));
    CON("getfscreatecon", getfscreatecon);
    printf("setcon=%d\n", setcon(argc > 1 ? argv[1] : "system_u:system_r:httpd_t:s0"));
    CON("getcon_after_setcon", getcon);
    printf("is_selinux_mls_enabled=%d\n", is_selinux_mls_enabled());
    printf("security_reject_unknown=%d\n", security_reject_unknown());
    printf("security_get_checkreqprot=%d\n", security_get_checkreqprot());
    printf("mode_to_security_class(reg)==file %d\n", mode_to_security_class(S_IFREG) == file);
    printf("mode_to_security_class(dir)==dir %d\n", mode_to_security_class(S_IFDIR) == string_to_security_class("dir"));
    printf("print_access_vector:");
    print_access_vector(file, string_to_av_perm(file, "read") | string_to_av_perm(file, "write"));
    print_access_vector(file, 0);
    printf("\n");
    a = selinux_raw_to_trans_context("system_u:object_r:etc_t:s0", &c);
    printf("raw_to_trans=%d %s\n", a, c);
    freecon(c);
    a = selinux_status_open(0);
    b = selinux_status_updated();
    d = selinux_status_getenforce();
    printf("status_open=%d updated=%d getenforce=%d", a, b, d);
    security_setenforce(0);
    a = selinux_status_updated();
    b = selinux_status_getenforce();
    d = selinux_status_updated();
    printf(" after_setenforce0: updated=%d getenforce=%d updated_again=%d\n", a, b, d);
    {
        int fd = avc_netlink_acquire_fd();
        struct pollfd p = {fd, POLLIN, 0};
        security_id_t s1, s2, s3;
        char *cc = NULL;
        SELboolean bl[1] = {{(char *)"httpd_enable_cgi", 0}};
        int before = poll(&p, 1, 0);
        security_setenforce(1);
        a = poll(&p, 1, 0);
        avc_netlink_check_nb();
        b = poll(&p, 1, 0);
        printf("netlink: before=%d after_setenforce=%d after_check=%d", before, a, b);
        a = security_set_boolean_list(1, bl, 0);
        b = poll(&p, 1, 0);
        printf(" set_boolean_list=%d active=%d readable=%d\n", a, security_get_boolean_active("httpd_enable_cgi"), b);
        avc_context_to_sid("unconfined_u:unconfined_r:unconfined_t:s0", &s1);
        avc_context_to_sid("system_u:object_r:tmp_t:s0", &s2);
        a = avc_compute_create(s1, s2, string_to_security_class("file"), &s3);
        b = security_compute_create("unconfined_u:unconfined_r:unconfined_t:s0", "system_u:object_r:tmp_t:s0", string_to_security_class("file"), &cc);
        printf("avc_compute_create=%d same_as_security_compute_create=%d\n", a, b == 0 && a == 0 && strcmp(s3->ctx, cc) == 0);
        freecon(cc);
    }
    selinux_status_close();
    {
        /* The defaults selinux_get_callback gives where nothing was set: callable, and doing
         * what libselinux's do (the log formats its arguments onto standard error). */
        union selinux_callback cb = selinux_get_callback(SELINUX_CB_LOG);
        union selinux_callback v = selinux_get_callback(SELINUX_CB_VALIDATE);
        char *good = strdup("system_u:object_r:etc_t:s0"), *bad = strdup("no_u:no_r:no_t:s0");
        fflush(stdout);
        cb.func_log(SELINUX_INFO, "default log %s %d\n", "formats", 42);
        printf("default_validate good=%d bad=%d\n", v.func_validate(&good), v.func_validate(&bad) == 0 ? 0 : -1);
        printf("default_setenforce=%d default_policyload=%d audit_set=%d\n", selinux_get_callback(SELINUX_CB_SETENFORCE).func_setenforce(1),
               selinux_get_callback(SELINUX_CB_POLICYLOAD).func_policyload(1), selinux_get_callback(SELINUX_CB_AUDIT).func_audit != NULL);
        free(good), free(bad);
    }
    return 0;
}
