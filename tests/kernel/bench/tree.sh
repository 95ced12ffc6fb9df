# The seed experiments' tree and run, sourced by both bench boots (selinux.sh, bpf.sh).
#
# bench_tree: /b, a tmpfs laid out as Debian's file_contexts names it: the walked tree
# /b/var/www/html (266 directories, 19,255 files, the 2008 walk's size), a deep path of 14
# components under /b/var/www/deep, /b/tmp for the 1-byte loop's file, /b/etc/shadow (a file
# httpd_t may not read), and the programs of the chain kernel_t -> init -> rc -> apache2:
# copies of the probe at init's and rc's paths, the bench itself at apache2's.
b=/b
deep=$b/var/www/deep/a/b/c/d/e/f/g/h/i/page
bench_tree() {
  mkdir -p $b
  mount -t tmpfs -o mode=755 tmpfs $b
  mkdir -p $b/sbin $b/etc/init.d $b/usr/sbin $b/tmp $b/var/www
  cp /suite/probe $b/sbin/init
  cp /suite/probe $b/etc/init.d/rc
  cp /suite/bench $b/usr/sbin/apache2
  echo secret > $b/etc/shadow
  chmod 1777 $b/tmp
  /suite/bench mktree $b/var/www/html 265 19255
  mkdir -p "${deep%/*}"
  echo page > $deep
}

# bench_run MODE [WORDS...]: the experiments in httpd_t, started by WORDS (how the mode starts
# a task as kernel_t: nothing where the shell is, `seaccess enforce run ...` under enforce); the
# 1-byte loop's file is the mode's own, created by httpd_t in tmp_t (httpd_tmp_t);
# prints the chain's lines (the bench's B and O, the probe's R and C) prefixed with MODE. The
# relay (an init_t child of the chain) carries the output: SELinux closes descriptors a domain
# may not use at exec.
bench_run() {
  local mode=$1
  shift
  "$@" /suite/probe exec:$b/sbin/init relay exec:$b/etc/init.d/rc exec:$b/usr/sbin/apache2 \
    open:$b/etc/shadow open:$deep tree:$b/var/www/html rw:$b/tmp/rw-$mode walk:$deep 2>&1 |
    sed "s|^|$mode |" 2>&1
}
