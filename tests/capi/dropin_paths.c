/* Run once on Debian's libselinux 3.4 and once on target/libselinux/libselinux.so.1 (the same
 * binary, LD_LIBRARY_PATH): the two outputs must be identical. Covers what libseaccess
 * answers from the configuration alone: the policy root and every configuration path, the
 * policy type and enforcing mode of /etc/selinux/config, selinux_set_policy_root, the
 * context_t helpers (valid and invalid input), securetty types and selinuxfs; with a scratch
 * directory as its argument, files' labels through getfilecon, lgetfilecon, fgetfilecon and
 * the set counterparts (a missing label, an empty one, a symlink's own); labels from
 * file_contexts (matchpathcon, selabel_lookup, best and partial matches, verify), media,
 * X and database names. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/xattr.h>
#include <selinux/selinux.h>
#include <selinux/context.h>
#include <selinux/get_context_list.h>
#include <selinux/get_default_type.h>
#include <selinux/label.h>
#include <sys/stat.h>

/* Exported by libselinux, declared in no public header. */
extern char *selinux_mnt;

static void show(const char *what, const char *v) { printf("%s=%s\n", what, v ? v : "(null)"); }

static void ctx(const char *s) {
    context_t c = context_new(s);
    if (!c) { printf("context_new(%s)=NULL errno=%d\n", s, errno); return; }
    printf("context(%s): user=%s role=%s type=%s range=%s str=%s\n", s, context_user_get(c),
           context_role_get(c), context_type_get(c),
           context_range_get(c) ? context_range_get(c) : "(null)", context_str(c));
    printf("  set type a:b=%d", context_type_set(c, "a:b"));
    printf(" set user u2=%d", context_user_set(c, "u2"));
    printf(" set range s1:c1=%d", context_range_set(c, "s1:c1"));
    printf(" str=%s\n", context_str(c));
    context_free(c);
}

static void getters(const char *what, const char *p, int fd) {
    char *c = NULL;
    int n;
    errno = 0;
    n = getfilecon(p, &c);
    printf("%s: getfilecon=%d errno=%d %s", what, n, n < 0 ? errno : 0, c ? c : "(null)");
    freecon(c);
    c = NULL;
    errno = 0;
    n = lgetfilecon(p, &c);
    printf(" lgetfilecon=%d errno=%d %s", n, n < 0 ? errno : 0, c ? c : "(null)");
    freecon(c);
    if (fd >= 0) {
        c = NULL;
        errno = 0;
        n = fgetfilecon_raw(fd, &c);
        printf(" fgetfilecon_raw=%d errno=%d %s", n, n < 0 ? errno : 0, c ? c : "(null)");
        freecon(c);
    }
    printf("\n");
}

static void files(const char *dir) {
    char f[4096], l[4096], g[4096];
    int fd;
    snprintf(f, sizeof f, "%s/f", dir);
    snprintf(l, sizeof l, "%s/l", dir);
    snprintf(g, sizeof g, "%s/g", dir);
    unlink(f), unlink(l), unlink(g);
    close(open(f, O_CREAT | O_WRONLY, 0644));
    close(open(g, O_CREAT | O_WRONLY, 0644));
    if (symlink("f", l) != 0) perror("symlink");
    getters("unlabeled", f, -1);
    printf("setfilecon=%d\n", setfilecon(f, "system_u:object_r:etc_t:s0"));
    printf("lsetfilecon=%d\n", lsetfilecon(l, "system_u:object_r:bin_t:s0"));
    fd = open(f, O_RDONLY);
    getters("file", f, fd);
    getters("symlink", l, -1);
    printf("fsetfilecon_raw=%d\n", fsetfilecon_raw(fd, "system_u:object_r:shadow_t:s0"));
    getters("file after fsetfilecon", f, fd);
    close(fd);
    setxattr(g, "security.selinux", "", 0, 0);
    getters("empty label", g, -1);
    getters("missing file", "/nonexistent/x", -1);
}

static void look(struct selabel_handle *h, const char *key, int type) {
    char *c = NULL;
    int rc;
    errno = 0;
    rc = selabel_lookup(h, &c, key, type);
    printf("selabel_lookup(%s, %o)=%d errno=%d %s\n", key, type, rc, rc < 0 ? errno : 0, c ? c : "(null)");
    freecon(c);
}

static void mpc(const char *path, mode_t mode) {
    char *c = NULL;
    int rc;
    errno = 0;
    rc = matchpathcon(path, mode, &c);
    printf("matchpathcon(%s, %o)=%d errno=%d %s\n", path, mode, rc, rc < 0 ? errno : 0, c ? c : "(null)");
    freecon(c);
}

static void labels(const char *dir) {
    static const char *paths[] = {"/etc/passwd", "/etc/shadow", "/usr/bin/ls", "/var/www/html/index.html", "/home/u/.ssh/id_rsa", "/tmp", "/dev/null", "/nonexistent/path", "/usr/lib/x.so", "/bin/sh", "/proc/1/status", "//usr//bin/", NULL};
    static const mode_t modes[] = {0, S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFSOCK};
    struct selinux_opt base[] = {{SELABEL_OPT_BASEONLY, (char *)1}};
    struct selabel_handle *h = selabel_open(SELABEL_CTX_FILE, NULL, 0), *hb;
    const char *aliases[] = {"/usr/bin/ls", "/bin/ls", NULL};
    char *c = NULL, buf[4096], f[4096];
    int i, j, rc;
    for (i = 0; paths[i]; i++)
        for (j = 0; j < 6; j++) {
            look(h, paths[i], modes[j]);
            mpc(paths[i], modes[j]);
        }
    rc = selabel_lookup_best_match(h, &c, "/bin/ls", aliases, S_IFREG);
    printf("best_match=%d %s\n", rc, c ? c : "(null)");
    freecon(c);
    c = NULL;
    for (i = 0; paths[i]; i++)
        printf("partial(%s)=%d\n", paths[i], selabel_partial_match(h, paths[i]));
    printf("partial(/var/www)=%d partial(/nonexistent)=%d\n", selabel_partial_match(h, "/var/www"), selabel_partial_match(h, "/nonexistent"));
    hb = selabel_open(SELABEL_CTX_FILE, base, 1);
    look(hb, "/home/u/.ssh/id_rsa", 0);
    /* Only a handle against itself: libselinux compares two handles entry by entry, compiled
     * expression against compiled expression, and calls different sets incomparable where
     * seaccess says subset or superset. */
    printf("cmp(h,h)=%d\n", selabel_cmp(h, h));
    selabel_close(hb);
    selabel_close(h);
    h = selabel_open(SELABEL_CTX_MEDIA, NULL, 0);
    look(h, "cdrom", 0);
    look(h, "disk", 0);
    look(h, "tape", 0);
    selabel_close(h);
    h = selabel_open(SELABEL_CTX_X, NULL, 0);
    look(h, "_SELINUX_CONTEXT", SELABEL_X_PROP);
    look(h, "CUT_BUFFER0", SELABEL_X_PROP);
    look(h, "WM_NAME", SELABEL_X_PROP);
    look(h, "SELinux", SELABEL_X_EXT);
    look(h, "PRIMARY", SELABEL_X_SELN);
    look(h, "anything", SELABEL_X_CLIENT);
    look(h, "X11:KeyPress", SELABEL_X_EVENT);
    selabel_close(h);
    h = selabel_open(SELABEL_CTX_DB, NULL, 0);
    look(h, "postgres", SELABEL_DB_DATABASE);
    look(h, "postgres.public", SELABEL_DB_SCHEMA);
    look(h, "postgres.pg_catalog.pg_class", SELABEL_DB_TABLE);
    look(h, "postgres.public.t", SELABEL_DB_TABLE);
    selabel_close(h);
    printf("cmp(a,b)=%d cmp(same rest)=%d cmp(null,x)=%d\n", selinux_file_context_cmp("u:r:a_t:s0", "u:r:b_t:s0"),
           selinux_file_context_cmp("x_u:object_r:etc_t:s0", "system_u:object_r:etc_t:s0"), selinux_file_context_cmp(NULL, "a:b:c"));
    snprintf(f, sizeof f, "%s/f", dir);
    printf("realpath_not_final=%d ", realpath_not_final("/usr/bin/../bin/ls", buf));
    printf("%s\n", buf);
    printf("index=%d ", matchpathcon_index("/etc/passwd", S_IFREG, &c));
    freecon(c);
    c = NULL;
    printf("index=%d\n", matchpathcon_index("/etc/shadow", S_IFREG, &c));
    freecon(c);
    c = NULL;
    setfilecon("/dev/null", "system_u:object_r:null_device_t:s0");
    printf("verify(/etc/passwd)=%d\n", selinux_file_context_verify("/etc/passwd", S_IFREG));
    matchpathcon_fini();
}

static void users(void) {
    static const char *names[] = {"root", "sddm", "nobody", "no-such-user", NULL};
    char *u = NULL, *l = NULL, *t = NULL, *b;
    int i, rc;
    for (i = 0; names[i]; i++) {
        rc = getseuserbyname(names[i], &u, &l);
        printf("getseuserbyname(%s)=%d %s %s\n", names[i], rc, u ? u : "(null)", l ? l : "(null)");
        free(u), free(l);
        u = l = NULL;
        rc = getseuser(names[i], "sshd", &u, &l);
        printf("getseuser(%s, sshd)=%d %s %s\n", names[i], rc, u ? u : "(null)", l ? l : "(null)");
        free(u), free(l);
        u = l = NULL;
    }
    rc = get_default_type("sysadm_r", &t);
    printf("get_default_type(sysadm_r)=%d %s\n", rc, t ? t : "(null)");
    free(t);
    t = NULL;
    rc = get_default_type("no_r", &t);
    printf("get_default_type(no_r)=%d %s\n", rc, t ? t : "(null)");
    free(t);
    b = selinux_boolean_sub("httpd_enable_cgi");
    printf("boolean_sub=%s\n", b ? b : "(null)");
    free(b);
    printf("customizable(httpd_user_content_t)=%d customizable(etc_t)=%d\n", is_context_customizable("system_u:object_r:httpd_user_content_t:s0"),
           is_context_customizable("system_u:object_r:etc_t:s0"));
    printf("passwd_access=%d disable=%d load_booleans=%d\n", selinux_check_passwd_access(1), security_disable(), security_load_booleans(NULL));
}

int main(int argc, char **argv) {
    char *type = NULL;
    int mode = 42;
    show("selinux_path", selinux_path());
    show("policy_root", selinux_policy_root());
    show("binary_policy", selinux_binary_policy_path());
    show("file_contexts", selinux_file_context_path());
    show("homedirs", selinux_file_context_homedir_path());
    show("local", selinux_file_context_local_path());
    show("subs", selinux_file_context_subs_path());
    show("subs_dist", selinux_file_context_subs_dist_path());
    show("homedir_template", selinux_homedir_context_path());
    show("media", selinux_media_context_path());
    show("default_contexts", selinux_default_context_path());
    show("user_contexts", selinux_user_contexts_path());
    show("failsafe", selinux_failsafe_context_path());
    show("default_type", selinux_default_type_path());
    show("securetty", selinux_securetty_types_path());
    show("removable", selinux_removable_context_path());
    show("customizable", selinux_customizable_types_path());
    show("netfilter", selinux_netfilter_context_path());
    show("x", selinux_x_context_path());
    show("virtual_domain", selinux_virtual_domain_context_path());
    show("virtual_image", selinux_virtual_image_context_path());
    show("lxc", selinux_lxc_contexts_path());
    show("openrc", selinux_openrc_contexts_path());
    show("openssh", selinux_openssh_contexts_path());
    show("snapperd", selinux_snapperd_contexts_path());
    show("systemd", selinux_systemd_contexts_path());
    show("sepgsql", selinux_sepgsql_context_path());
    show("booleans", selinux_booleans_path());
    show("booleans_subs", selinux_booleans_subs_path());
    show("users", selinux_users_path());
    show("usersconf", selinux_usersconf_path());
    show("translations", selinux_translations_path());
    show("colors", selinux_colors_path());
    printf("getpolicytype=%d ", selinux_getpolicytype(&type));
    show("type", type);
    free(type);
    printf("getenforcemode=%d mode=%d\n", selinux_getenforcemode(&mode), mode);
    printf("selinuxfs_exists=%d\n", selinuxfs_exists());
    show("selinux_mnt", selinux_mnt);
    printf("securetty(user_tty_device_t)=%d\n", selinux_check_securetty_context("system_u:object_r:user_tty_device_t:s0"));
    printf("securetty(etc_t)=%d\n", selinux_check_securetty_context("system_u:object_r:etc_t:s0"));
    ctx("system_u:object_r:etc_t:s0");
    ctx("staff_u:staff_r:staff_t:s0-s0:c0.c1023");
    ctx("u:r:t");
    ctx("u:r:t:s0 - s0");
    ctx("a:b");
    ctx("a:b:c:d:e:f:g");
    ctx("a b:c:d");
    ctx("a:b:c\t");
    ctx("::");
    printf("set_policy_root=%d\n", selinux_set_policy_root("/tmp/somewhere/mypolicy"));
    show("policy_root", selinux_policy_root());
    show("seusers", selinux_usersconf_path());
    type = NULL;
    printf("getpolicytype=%d ", selinux_getpolicytype(&type));
    show("type", type);
    free(type);
    selinux_reset_config();
    show("policy_root after reset", selinux_policy_root());
    if (argc > 1) {
        files(argv[1]);
        labels(argv[1]);
        users();
    }
    return 0;
}
