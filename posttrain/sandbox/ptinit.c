/* ptinit: the isolated sandbox's native front (see native.py for how it is built and used).
 *
 * Two modes, both started with no interpreter in the way:
 *
 *   ptinit init CTL_FD BPF_FD STORE_BYTES PYTHON SUPERVISOR
 *       bubblewrap's payload. Creates the layer store (a size-capped tmpfs never attached to
 *       a path), mounts the overlay work tree (lower "base", upper "1") and its binds, remounts
 *       the sandbox root read-only, then serves the host on CTL_FD: it pre-forks command
 *       zygotes ("Z pid" + request socket + report pipe), signals them, answers pings, and on
 *       "U" exec()s the Python supervisor (same pid, same fds) for everything else.
 *
 *   ptinit zygote REQ_FD REPORT_FD BPF_FD
 *       pid 1 of a fresh pid namespace, spawned by the Python supervisor.
 *
 *   ptinit enter UID GID N CGROUP_DIR*N PROGRAM ARG...
 *       on the host, before bubblewrap: moves itself into N cgroup v1 directories, drops to
 *       UID/GID ("-" keeps them) with no supplementary groups, and exec()s PROGRAM, whose
 *       processes are then born in the sandbox's cgroups. Why here: a thread moving *itself*
 *       (writing "0" to "tasks") skips the kernel's global threadgroup lock, whose write side
 *       waits for an RCU grace period (2-15 ms here, against ~0.1 ms); and a host that must
 *       change the user can then be vfork()ed, since Popen cannot vfork when it changes the
 *       user itself, and a fork copies the page tables of the whole (maybe huge) harness.
 *
 * A zygote is a reaper (pid 1 of its pid namespace) and a command process. Ahead of any
 * request the command takes a private mount namespace with its own procfs, drops every
 * capability (securebits locked), sets no_new_privs and loads the seccomp filter; it then
 * waits for the host's request (argv, env, cwd, rlimits + stdio fds by SCM_RIGHTS), applies
 * it and execve()s. When the command exits, the reaper SIGKILLs everything else in the
 * namespace and reaps it *before* writing the status report, so nothing outlives it.
 *
 * Request: packets flagged 'C' (more) / 'F' (final); the body is NUL-terminated strings:
 *   "1" cwd stdin(0|1) nrl {name value}*nrl argc argv* envc env*
 * Report: {"exit_code": N|null, "signal": N|null, "cpu_s": X, "maxrss_kb": N} or {"error": "..."}
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_REQ (64u << 20)
#define MAX_KIDS 64
#define SECURE_ALL_BITS_LOCKED 0x2f

static struct sock_fprog prog;
static int kids[MAX_KIDS];
static int nkids;

static void fail(const char *what) {
    dprintf(2, "ptinit: %s: %s\n", what, strerror(errno));
    _exit(125);
}

static void load_bpf(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size % 8 || st.st_size > (1 << 20))
        fail("bpf program");
    char *buf = malloc(st.st_size);
    ssize_t got = 0;
    while (buf && got < st.st_size) {
        ssize_t n = pread(fd, buf + got, st.st_size - got, got);
        if (n <= 0) fail("read bpf");
        got += n;
    }
    prog.len = (unsigned short)(st.st_size / 8);
    prog.filter = (struct sock_filter *)buf;
}

static int send_fds(int sock, const char *msg, const int *fds, int nfds) {
    char cbuf[CMSG_SPACE(sizeof(int) * 4)];
    struct iovec iov = {(void *)msg, strlen(msg)};
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds) {
        memset(cbuf, 0, sizeof cbuf);
        mh.msg_control = cbuf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* ---- the command process ------------------------------------------------------------ */

static void drop_privileges(void) {
    prctl(PR_SET_SECUREBITS, SECURE_ALL_BITS_LOCKED, 0, 0, 0);
    for (int cap = 0; cap < 64; cap++) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    if (syscall(SYS_capset, &h, d) != 0) fail("capset");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs");
}

/* A mount namespace of our own with a procfs of our pid namespace; its fd goes to the reaper,
 * which holds it until it has reported (tearing a mount namespace down waits for RCU). And a
 * fresh IPC namespace: no SysV or POSIX IPC object of an earlier command, snippet or lease is
 * reachable, and none of ours outlives us (the kernel frees the namespace asynchronously). */
static void private_proc(int keeper) {
    if (unshare(CLONE_NEWNS | CLONE_NEWIPC) != 0) fail("unshare(mount, ipc)");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) fail("make-private");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) fail("proc");
    int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) send_fds(keeper, "n", &fd, 1), close(fd);
    close(keeper);
}

static char *recv_request(int sock, size_t *len, int *fds, int *nfds) {
    size_t cap = 65536, used = 0;
    char *buf = malloc(cap);
    *nfds = 0;
    for (;;) {
        if (cap - used < 65536 + 1) {
            if (cap >= MAX_REQ) return NULL;
            cap *= 2;
            buf = realloc(buf, cap);
        }
        char cbuf[CMSG_SPACE(sizeof(int) * 8)];
        struct iovec iov = {buf + used, cap - used};
        struct msghdr mh = {0};
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof cbuf;
        ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        if (n <= 0) return NULL;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
            int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (int i = 0; i < k && *nfds < 8; i++) memcpy(&fds[(*nfds)++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        }
        char flag = buf[used];
        memmove(buf + used, buf + used + 1, n - 1); /* drop the flag byte */
        used += n - 1;
        if (flag == 'F') break;
        if (flag != 'C') return NULL;
    }
    *len = used;
    return buf;
}

struct cursor { char *p, *end; };

static char *next(struct cursor *c) {
    if (c->p >= c->end) return NULL;
    char *s = c->p, *z = memchr(s, 0, c->end - s);
    if (!z) return NULL;
    c->p = z + 1;
    return s;
}

static int set_rlimit(const char *name, const char *value) {
    static const struct { const char *n; int r; } names[] = {
        {"CPU", RLIMIT_CPU}, {"AS", RLIMIT_AS}, {"NPROC", RLIMIT_NPROC}, {"FSIZE", RLIMIT_FSIZE},
        {"NOFILE", RLIMIT_NOFILE}, {"CORE", RLIMIT_CORE}, {"STACK", RLIMIT_STACK}};
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i].n)) continue;
        rlim_t v = strtoull(value, NULL, 10);
        /* CPU: SIGXCPU at the soft limit, SIGKILL a second later (so the status is clear) */
        struct rlimit rl = {v, names[i].r == RLIMIT_CPU ? v + 1 : v};
        return setrlimit(names[i].r, &rl);
    }
    errno = EINVAL;
    return -1;
}

static void exec_path(char **argv, char **envp) {
    if (strchr(argv[0], '/')) {
        execve(argv[0], argv, envp);
        return;
    }
    const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    for (char **e = envp; *e; e++)
        if (!strncmp(*e, "PATH=", 5)) path = *e + 5;
    int saved = ENOENT;
    char full[4096];
    for (const char *p = path; ; ) {
        const char *colon = strchr(p, ':');
        size_t dl = colon ? (size_t)(colon - p) : strlen(p);
        if (snprintf(full, sizeof full, "%.*s/%s", (int)dl, dl ? p : ".", argv[0]) < (int)sizeof full) {
            execve(full, argv, envp);
            if (errno == EACCES) saved = EACCES;
            else if (errno != ENOENT && errno != ENOTDIR) return; /* E2BIG, ENOEXEC...: report it */
        }
        if (!colon) break;
        p = colon + 1;
    }
    errno = saved;
}

static void run_command(int req_sock, int keeper) {
    private_proc(keeper);
    drop_privileges();
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) fail("seccomp");
    size_t len;
    int fds[8], nfds;
    char *req = recv_request(req_sock, &len, fds, &nfds);
    if (!req) _exit(0); /* the host dropped this zygote */
    close(req_sock);
    struct cursor c = {req, req + len};
    char *ver = next(&c), *cwd = next(&c), *want_stdin = next(&c), *nrl = next(&c);
    if (!ver || strcmp(ver, "1") || !cwd || !want_stdin || !nrl || nfds < 2) _exit(126);
    setsid();
    int in = (*want_stdin == '1' && nfds >= 3) ? fds[2] : open("/dev/null", O_RDONLY);
    if (dup2(in, 0) < 0 || dup2(fds[0], 1) < 0 || dup2(fds[1], 2) < 0) _exit(126);
    syscall(SYS_close_range, 3, ~0U, 0);
    for (long i = strtol(nrl, NULL, 10); i > 0; i--) {
        char *name = next(&c), *value = next(&c);
        if (!name || !value || set_rlimit(name, value) != 0) {
            dprintf(2, "sandbox: cannot start command: rlimit\n");
            _exit(126);
        }
    }
    char *argc_s = next(&c);
    long argc = argc_s ? strtol(argc_s, NULL, 10) : 0;
    if (argc <= 0 || argc > 1 << 20) _exit(126);
    char **argv = calloc(argc + 1, sizeof *argv);
    for (long i = 0; i < argc; i++) if (!(argv[i] = next(&c))) _exit(126);
    char *envc_s = next(&c);
    long envc = envc_s ? strtol(envc_s, NULL, 10) : 0;
    char **envp = calloc(envc + 1, sizeof *envp);
    for (long i = 0; i < envc; i++) if (!(envp[i] = next(&c))) _exit(126);
    if (chdir(cwd) != 0) {
        dprintf(2, "sandbox: cannot start command: chdir %s: %s\n", cwd, strerror(errno));
        _exit(126);
    }
    exec_path(argv, envp);
    int err = errno;
    dprintf(2, "sandbox: %s: %s\n", argv[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
}

/* ---- the reaper (pid 1 of the command's pid namespace) ---------------------------------- */

static void forward_term(int sig) {
    (void)sig;
    kill(-1, SIGTERM);
}

static void run_reaper(int req_sock, int report) {
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* nothing the command runs may open our fds */
    int ks[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, ks) != 0) fail("socketpair");
    pid_t child = fork();
    if (child < 0) fail("fork");
    if (child == 0) {
        close(report);
        close(ks[0]);
        signal(SIGTERM, SIG_DFL);
        run_command(req_sock, ks[1]);
    }
    close(req_sock);
    close(ks[1]);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (;;) {
        pid_t p = wait4(-1, &status, 0, &ru);
        if (p == child) break;
        if (p < 0 && errno != EINTR) {
            dprintf(report, "{\"error\": \"wait4: %s\"}", strerror(errno));
            _exit(0);
        }
    }
    signal(SIGTERM, SIG_IGN);
    kill(-1, SIGKILL);
    while (wait4(-1, NULL, 0, NULL) > 0 || errno == EINTR) {}
    char code[16] = "null", sig[16] = "null";
    if (WIFEXITED(status)) snprintf(code, sizeof code, "%d", WEXITSTATUS(status));
    if (WIFSIGNALED(status)) snprintf(sig, sizeof sig, "%d", WTERMSIG(status));
    double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    dprintf(report, "{\"exit_code\": %s, \"signal\": %s, \"cpu_s\": %.6f, \"maxrss_kb\": %ld}",
            code, sig, cpu, ru.ru_maxrss);
    _exit(0);
}

/* We are pid 1 of a fresh pid namespace: keep only the request socket and the report pipe. */
static void become_reaper(int req_sock, int report) {
    struct sigaction sa = {0};
    sa.sa_handler = forward_term;
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    int lo = req_sock < report ? req_sock : report, hi = req_sock < report ? report : req_sock;
    if (lo > 3) syscall(SYS_close_range, 3, lo - 1, 0);
    if (hi > lo + 1) syscall(SYS_close_range, lo + 1, hi - 1, 0);
    syscall(SYS_close_range, hi + 1, ~0U, 0);
    run_reaper(req_sock, report);
}

/* ---- init mode: the sandbox's supervisor until the Python one is needed ----------------- */

static const char *store_path;

static void mount_overlay(void) {
    static char opts[512], up[128], wk[128], l[128], w[128];
    snprintf(l, sizeof l, "%s/l", store_path);
    snprintf(w, sizeof w, "%s/w", store_path);
    snprintf(up, sizeof up, "%s/l/1", store_path);
    snprintf(wk, sizeof wk, "%s/w/1", store_path);
    if (mkdir(l, 0755) || mkdir(w, 0755) || mkdir(up, 0755) || mkdir(wk, 0755)) fail("mkdir layer");
    snprintf(opts, sizeof opts, "lowerdir=/.ptbase,upperdir=%s,workdir=%s,userxattr", up, wk);
    if (mount("overlay", "/.ptroot", "overlay", MS_NOSUID | MS_NODEV, opts) != 0) fail("mount overlay");
    static const char *binds[][2] = {{"work", "/work"}, {"tmp", "/tmp"}, {"home", "/home/user"}, {"shm", "/dev/shm"}};
    for (int i = 0; i < 4; i++) {
        char path[64];
        struct stat st;
        snprintf(path, sizeof path, "/.ptroot/%s", binds[i][0]);
        if (stat(path, &st) != 0) {
            if (mkdir(path, 0755) != 0) fail("mkdir bind");
            chmod(path, (i == 1 || i == 3) ? 01777 : 0755);
        }
        if (mount(path, binds[i][1], NULL, MS_BIND | MS_REC, NULL) != 0) fail("bind");
    }
}

/* Read-only, keeping the flags the mount already has (a bind remount must restate them). */
static void remount_ro(const char *target) {
    struct statvfs sv;
    if (statvfs(target, &sv) != 0) fail("statvfs");
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
    static const unsigned long map[][2] = {{ST_NOSUID, MS_NOSUID}, {ST_NODEV, MS_NODEV},
        {ST_NOEXEC, MS_NOEXEC}, {ST_NOATIME, MS_NOATIME}, {ST_NODIRATIME, MS_NODIRATIME},
        {ST_RELATIME, MS_RELATIME}};
    for (unsigned i = 0; i < sizeof map / sizeof map[0]; i++)
        if (sv.f_flag & map[i][0]) flags |= map[i][1];
    if (mount(NULL, target, NULL, flags, NULL) != 0) fail("remount read-only");
}

/* Host paths must not show in /proc/self/mountinfo: a bind mount's "root" field is its
 * source's path inside its file system (the project checkout, the host's temp dirs). Each
 * bound directory is replaced by a read-only overlay of itself (root "/", options naming
 * only sandbox paths) and every bind, ours included, is moved under one tmpfs that is then
 * detached: one umount for all, because each waits for an RCU grace period. Returns an
 * O_PATH fd of our own binary (the Python supervisor spawns zygotes through it). A base on
 * overlayfs keeps its bind: the work overlay on top would nest one overlay too deep. */
static int proxy_fd = -1; /* allowlist mode: the proxy socket, reached through this fd */

/* The template's read-only host directories (Template.ro_dirs, bound at /opt/ro/<name>; the
 * names are short validated path components): each is hidden like /etc. */
static void hide_ro_dirs(void) {
    DIR *ro = opendir("/opt/ro");
    if (!ro) return;
    struct dirent *e;
    for (unsigned n = 0; (e = readdir(ro)) != NULL;) {
        if (e->d_name[0] == '.' || strlen(e->d_name) > 32) continue;
        char path[48], opts[96], away[32];
        snprintf(path, sizeof path, "/opt/ro/%s", e->d_name);
        snprintf(opts, sizeof opts, "lowerdir=%s:/.ptempty,userxattr", path);
        snprintf(away, sizeof away, "/.ptgone/ro%u", n++);
        if (mount("overlay", "/.ptstage", "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts) ||
            mkdir(away, 0700) || mount(path, away, NULL, MS_MOVE, NULL) ||
            mount("/.ptstage", path, NULL, MS_MOVE, NULL)) fail("hide: ro dir");
    }
    closedir(ro);
}

static int hide_host_paths(void) {
    static const char *dirs[] = {"/etc", "/.ptsup", "/.ptbase"};
    int self = open("/.ptinit", O_PATH | O_CLOEXEC);
    if (self < 0) fail("open ptinit");
    if (mkdir("/.ptempty", 0755) || mkdir("/.ptstage", 0700) || mkdir("/.ptgone", 0700) ||
        mount("tmpfs", "/.ptgone", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=700"))
        fail("hide: staging");
    for (unsigned i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char opts[64], away[32];
        struct statfs sf;
        if (statfs(dirs[i], &sf) != 0 || (i == 2 && sf.f_type == 0x794c7630)) continue;
        snprintf(opts, sizeof opts, "lowerdir=%s:/.ptempty,userxattr", dirs[i]);
        snprintf(away, sizeof away, "/.ptgone/%u", i);
        if (mount("overlay", "/.ptstage", "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts) ||
            mkdir(away, 0700) || mount(dirs[i], away, NULL, MS_MOVE, NULL) ||
            mount("/.ptstage", dirs[i], NULL, MS_MOVE, NULL)) fail("hide: overlay");
    }
    hide_ro_dirs();
    proxy_fd = open("/run/posttrain-proxy.sock", O_PATH | O_CLOEXEC); /* a socket: no overlay */
    int fd = open("/.ptgone/proxy", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 || close(fd) ||
        (proxy_fd >= 0 && mount("/run/posttrain-proxy.sock", "/.ptgone/proxy", NULL, MS_MOVE, NULL)))
        fail("hide: proxy");
    fd = open("/.ptgone/init", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 || close(fd) || mount("/.ptinit", "/.ptgone/init", NULL, MS_MOVE, NULL) ||
        umount2("/.ptgone", MNT_DETACH)) fail("hide: detach");
    return self;
}

static int make_store(const char *size) {
    int fsfd = syscall(430, "tmpfs", 1); /* fsopen(FSOPEN_CLOEXEC) */
    if (fsfd < 0) fail("fsopen");
    if (syscall(431, fsfd, 1, "size", size, 0) || syscall(431, fsfd, 1, "mode", "700", 0) ||
        syscall(431, fsfd, 6, NULL, NULL, 0)) fail("fsconfig");
    int mfd = syscall(432, fsfd, 1, 0); /* fsmount(FSMOUNT_CLOEXEC) */
    if (mfd < 0) fail("fsmount");
    close(fsfd);
    static char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
    store_path = path;
    return mfd;
}

static void prepare(int ctl, int bpf_fd, int store_fd, int own_pidns) {
    int rep[2], sp[2];
    if (pipe2(rep, O_CLOEXEC) || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp)) fail("pipe");
    if (unshare(CLONE_NEWPID) != 0) fail("unshare(pid)");
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid == 0) {
        close(rep[0]);
        close(sp[0]);
        close(ctl);
        close(bpf_fd);
        close(store_fd);
        close(own_pidns);
        become_reaper(sp[1], rep[1]);
    }
    if (setns(own_pidns, CLONE_NEWPID) != 0) fail("setns(pid)");
    close(rep[1]);
    close(sp[1]);
    if (nkids < MAX_KIDS) kids[nkids++] = pid;
    char msg[32];
    snprintf(msg, sizeof msg, "Z %d", pid);
    int fds[2] = {sp[0], rep[0]};
    send_fds(ctl, msg, fds, 2);
    close(sp[0]);
    close(rep[0]);
}

static void reap_kids(void) {
    pid_t p;
    while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
        for (int i = 0; i < nkids; i++)
            if (kids[i] == p) kids[i] = kids[--nkids];
}

static void on_chld(int s) { (void)s; }

static void upgrade(int ctl, int bpf_fd, int store_fd, int self, char *python, char *supervisor) {
    char a_ctl[16], a_store[16], a_bpf[16], a_self[32], a_kids[MAX_KIDS * 12 + 2] = "";
    reap_kids();
    for (int i = 0; i < nkids; i++) {
        char one[16];
        snprintf(one, sizeof one, i ? ",%d" : "%d", kids[i]);
        strcat(a_kids, one);
    }
    snprintf(a_ctl, sizeof a_ctl, "%d", ctl);
    snprintf(a_store, sizeof a_store, "%d", store_fd);
    snprintf(a_bpf, sizeof a_bpf, "%d", bpf_fd);
    snprintf(a_self, sizeof a_self, "/proc/self/fd/%d", self);
    fcntl(self, F_SETFD, 0);
    fcntl(ctl, F_SETFD, 0);
    fcntl(store_fd, F_SETFD, 0);
    fcntl(bpf_fd, F_SETFD, 0);
    signal(SIGCHLD, SIG_DFL);
    char *argv[] = {python, "-S", "-E", "-B", supervisor, a_ctl, "--adopt", a_store, a_bpf,
                    a_self, a_kids[0] ? a_kids : "-", NULL};
    char a_proxy[40] = "POSTTRAIN_PROXY_FD=-1";
    if (proxy_fd >= 0) {
        fcntl(proxy_fd, F_SETFD, 0);
        snprintf(a_proxy, sizeof a_proxy, "POSTTRAIN_PROXY_FD=%d", proxy_fd);
    }
    char *envp[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", a_proxy, NULL};
    execve(python, argv, envp);
    fail("exec supervisor");
}

static int serve_init(char **argv) {
    int ctl = atoi(argv[2]), bpf_fd = atoi(argv[3]);
    fcntl(ctl, F_SETFD, FD_CLOEXEC);
    fcntl(bpf_fd, F_SETFD, FD_CLOEXEC);
    load_bpf(bpf_fd);
    int store_fd = make_store(argv[4]);
    int self = hide_host_paths(); /* before the work overlay: it stacks on the hidden base */
    mount_overlay();
    /* the sandbox root and /dev (bwrap's tmpfs) must not keep anything between tasks */
    remount_ro("/dev");
    remount_ro("/");
    int own_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    if (own_pidns < 0) fail("pidns");
    struct sigaction sa = {0};
    sa.sa_handler = on_chld; /* no SA_RESTART: recv returns EINTR and we reap */
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    char ready[32];
    snprintf(ready, sizeof ready, "R %d", store_fd);
    if (send_fds(ctl, ready, NULL, 0)) _exit(1);
    prepare(ctl, bpf_fd, store_fd, own_pidns);
    for (;;) {
        char buf[128];
        reap_kids();
        ssize_t n = recv(ctl, buf, sizeof buf - 1, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(0); /* the host is gone: so is the sandbox */
        buf[n] = 0;
        if (buf[0] == 'P') {
            prepare(ctl, bpf_fd, store_fd, own_pidns);
        } else if (buf[0] == 'S') {
            int pid = 0, sig = 0;
            sscanf(buf + 1, "%d %d", &pid, &sig);
            for (int i = 0; i < nkids; i++)
                if (kids[i] == pid && pid > 0) kill(pid, sig); /* never a pid we reaped */
        } else if (buf[0] == '?') {
            send_fds(ctl, "K", NULL, 0);
        } else if (buf[0] == 'U') {
            close(own_pidns);
            upgrade(ctl, bpf_fd, store_fd, self, argv[5], argv[6]);
        } else {
            send_fds(ctl, "E unknown op", NULL, 0);
        }
    }
}

static int parse_id(const char *text, unsigned long *out) {
    char *end;
    if (!strcmp(text, "-")) return 0;
    *out = strtoul(text, &end, 10);
    return *end || !*text ? -1 : 1;
}

static int join_cgroup(const char *dir) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/tasks", dir) >= (int)sizeof path) return -1;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int ok = write(fd, "0", 1) == 1;
    close(fd);
    return ok ? 0 : -1;
}

static int enter(int argc, char **argv) {
    unsigned long uid = 0, gid = 0;
    int has_uid = parse_id(argv[2], &uid), has_gid = parse_id(argv[3], &gid);
    int n = atoi(argv[4]);
    if (has_uid < 0 || has_gid < 0 || has_uid != has_gid || (has_uid && (!uid || !gid))
        || n < 0 || 5 + n >= argc) {
        dprintf(2, "ptinit enter: bad arguments\n");
        return 126;
    }
    for (int i = 0; i < n; i++)
        if (join_cgroup(argv[5 + i])) {
            dprintf(2, "ptinit enter: cannot join %s: %s\n", argv[5 + i], strerror(errno));
            return 126;
        }
    if (has_uid && (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)
                    || getuid() != uid || geteuid() != uid)) {
        dprintf(2, "ptinit enter: cannot become %lu:%lu: %s\n", uid, gid, strerror(errno));
        return 126;
    }
    execv(argv[5 + n], argv + 5 + n);
    dprintf(2, "ptinit enter: exec %s: %s\n", argv[5 + n], strerror(errno));
    return 127;
}

int main(int argc, char **argv) {
    if (argc == 7 && !strcmp(argv[1], "init")) return serve_init(argv);
    if (argc >= 6 && !strcmp(argv[1], "enter")) return enter(argc, argv);
    if (argc == 5 && !strcmp(argv[1], "zygote")) {
        int req = atoi(argv[2]), report = atoi(argv[3]), bpf_fd = atoi(argv[4]);
        load_bpf(bpf_fd);
        close(bpf_fd);
        become_reaper(req, report);
    }
    dprintf(2, "usage: ptinit init CTL BPF STORE_BYTES PYTHON SUPERVISOR | zygote REQ REPORT BPF"
               " | enter UID GID N DIR... PROGRAM ARG...\n");
    return 2;
}
