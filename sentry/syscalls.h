/* Handler prototypes for the syscall table, grouped by the file that implements them. Every
 * handler is named sys_ and the syscall's name (grep 'sys_openat\b' finds it), takes the
 * calling task and its six argument registers (fetched through sentry/sysarg.h), and returns
 * the guest-visible result or -ESENTRY_BLOCK. */
#ifndef SENTRY_SYSCALLS_H
#define SENTRY_SYSCALLS_H

#include "sentry/syscall.h"

struct vfs_file;

/* sys_file.c */
long sys_read(struct task *t, const unsigned long *a);
long sys_write(struct task *t, const unsigned long *a);
long sys_readv(struct task *t, const unsigned long *a);
long sys_writev(struct task *t, const unsigned long *a);
long sys_pread64(struct task *t, const unsigned long *a);
long sys_pwrite64(struct task *t, const unsigned long *a);
long sys_fadvise64(struct task *t, const unsigned long *a);
long sys_close_range(struct task *t, const unsigned long *a);
long sys_open(struct task *t, const unsigned long *a);
long sys_openat(struct task *t, const unsigned long *a);
long sys_close(struct task *t, const unsigned long *a);
long sys_lseek(struct task *t, const unsigned long *a);
long sys_fstat(struct task *t, const unsigned long *a);
long sys_stat(struct task *t, const unsigned long *a);
long sys_lstat(struct task *t, const unsigned long *a);
long sys_newfstatat(struct task *t, const unsigned long *a);
long sys_statx(struct task *t, const unsigned long *a);
long sys_getdents64(struct task *t, const unsigned long *a);
long sys_getdents(struct task *t, const unsigned long *a);
long sys_readlink(struct task *t, const unsigned long *a);
long sys_readlinkat(struct task *t, const unsigned long *a);
long sys_access(struct task *t, const unsigned long *a);
long sys_faccessat(struct task *t, const unsigned long *a);
long sys_faccessat2(struct task *t, const unsigned long *a);
long sys_getcwd(struct task *t, const unsigned long *a);
long sys_chdir(struct task *t, const unsigned long *a);
long sys_fchdir(struct task *t, const unsigned long *a);
long sys_ioctl(struct task *t, const unsigned long *a);
long sys_fcntl(struct task *t, const unsigned long *a);
long sys_dup(struct task *t, const unsigned long *a);
long sys_dup2(struct task *t, const unsigned long *a);
long sys_dup3(struct task *t, const unsigned long *a);
long sys_pipe(struct task *t, const unsigned long *a);
long sys_pipe2(struct task *t, const unsigned long *a);
long sys_sendfile(struct task *t, const unsigned long *a);
long sys_copy_file_range(struct task *t, const unsigned long *a);
long sys_splice(struct task *t, const unsigned long *a);
long sys_preadv(struct task *t, const unsigned long *a);
long sys_pwritev(struct task *t, const unsigned long *a);
long sys_preadv2(struct task *t, const unsigned long *a);
long sys_pwritev2(struct task *t, const unsigned long *a);
long sys_tee(struct task *t, const unsigned long *a);
long sys_openat2(struct task *t, const unsigned long *a);
/* sys_ptrace.c */
long sys_ptrace(struct task *t, const unsigned long *a);
long sys_process_vm_readv(struct task *t, const unsigned long *a);
long sys_process_vm_writev(struct task *t, const unsigned long *a);
long sys_pidfd_open(struct task *t, const unsigned long *a);
long sys_mq_open(struct task *t, const unsigned long *a);
long sys_mq_unlink(struct task *t, const unsigned long *a);
long sys_mq_timedsend(struct task *t, const unsigned long *a);
long sys_mq_timedreceive(struct task *t, const unsigned long *a);
long sys_mq_notify(struct task *t, const unsigned long *a);
long sys_mq_getsetattr(struct task *t, const unsigned long *a);
long sys_pidfd_getfd(struct task *t, const unsigned long *a);
long sys_futex_waitv(struct task *t, const unsigned long *a);
long sys_syslog(struct task *t, const unsigned long *a);
long sys_io_setup(struct task *t, const unsigned long *a);
long sys_io_destroy(struct task *t, const unsigned long *a);
long sys_io_submit(struct task *t, const unsigned long *a);
long sys_io_getevents(struct task *t, const unsigned long *a);
long sys_io_cancel(struct task *t, const unsigned long *a);
/* sys_mm.c */
long sys_mmap(struct task *t, const unsigned long *a);
long sys_munmap(struct task *t, const unsigned long *a);
long sys_mprotect(struct task *t, const unsigned long *a);
long sys_brk(struct task *t, const unsigned long *a);
long sys_mremap(struct task *t, const unsigned long *a);
long sys_madvise(struct task *t, const unsigned long *a);
long sys_msync(struct task *t, const unsigned long *a);
long sys_mincore(struct task *t, const unsigned long *a);
long sys_mlock(struct task *t, const unsigned long *a);
long sys_mlock2(struct task *t, const unsigned long *a);
long sys_munlock(struct task *t, const unsigned long *a);
long sys_mlockall(struct task *t, const unsigned long *a);
long sys_munlockall(struct task *t, const unsigned long *a);
/* sys_proc.c */
long sys_getpid(struct task *t, const unsigned long *a);
long sys_gettid(struct task *t, const unsigned long *a);
long sys_getppid(struct task *t, const unsigned long *a);
long sys_getuid(struct task *t, const unsigned long *a);
long sys_geteuid(struct task *t, const unsigned long *a);
long sys_getgid(struct task *t, const unsigned long *a);
long sys_getegid(struct task *t, const unsigned long *a);
long sys_getresuid(struct task *t, const unsigned long *a);
long sys_getresgid(struct task *t, const unsigned long *a);
long sys_getgroups(struct task *t, const unsigned long *a);
long sys_getpgrp(struct task *t, const unsigned long *a);
long sys_getpgid(struct task *t, const unsigned long *a);
long sys_getsid(struct task *t, const unsigned long *a);
long sys_exit(struct task *t, const unsigned long *a);
long sys_exit_group(struct task *t, const unsigned long *a);
long sys_set_tid_address(struct task *t, const unsigned long *a);
long sys_uname(struct task *t, const unsigned long *a);
long sys_arch_prctl(struct task *t, const unsigned long *a);
long sys_prlimit64(struct task *t, const unsigned long *a);
long sys_getrlimit(struct task *t, const unsigned long *a);
long sys_setrlimit(struct task *t, const unsigned long *a);
long sys_umask(struct task *t, const unsigned long *a);
long sys_sched_yield(struct task *t, const unsigned long *a);
/* membarrier.c */
long sys_membarrier(struct task *t, const unsigned long *a);
long sys_getrandom(struct task *t, const unsigned long *a);
long sys_personality(struct task *t, const unsigned long *a);
long sys_set_robust_list(struct task *t, const unsigned long *a);
long sys_rseq(struct task *t, const unsigned long *a);
long sys_prctl(struct task *t, const unsigned long *a);
long sys_seccomp(struct task *t, const unsigned long *a);
long sys_setpgid(struct task *t, const unsigned long *a);
long sys_setsid(struct task *t, const unsigned long *a);
long sys_vfork(struct task *t, const unsigned long *a);
/* fork.c, exec.c, exit.c */
long sys_clone(struct task *t, const unsigned long *a);
long sys_fork(struct task *t, const unsigned long *a);
long sys_clone3(struct task *t, const unsigned long *a);
long sys_execve(struct task *t, const unsigned long *a);
long sys_execveat(struct task *t, const unsigned long *a);
long sys_wait4(struct task *t, const unsigned long *a);
long sys_waitid(struct task *t, const unsigned long *a);
/* sys_time.c */
long sys_clock_gettime(struct task *t, const unsigned long *a);
long sys_clock_getres(struct task *t, const unsigned long *a);
long sys_gettimeofday(struct task *t, const unsigned long *a);
long sys_clock_settime(struct task *t, const unsigned long *a);
long sys_settimeofday(struct task *t, const unsigned long *a);
long sys_time(struct task *t, const unsigned long *a);
long sys_nanosleep(struct task *t, const unsigned long *a);
long sys_clock_nanosleep(struct task *t, const unsigned long *a);
/* sys_sched.c */
long sys_sched_getaffinity(struct task *t, const unsigned long *a);
long sys_sched_setaffinity(struct task *t, const unsigned long *a);
long sys_sched_getscheduler(struct task *t, const unsigned long *a);
long sys_sched_getparam(struct task *t, const unsigned long *a);
long sys_unshare(struct task *t, const unsigned long *a);
long sys_readahead(struct task *t, const unsigned long *a);
long sys_get_robust_list(struct task *t, const unsigned long *a);
long sys_epoll_pwait2(struct task *t, const unsigned long *a);
long sys_pidfd_send_signal(struct task *t, const unsigned long *a);
long sys_sethostname(struct task *t, const unsigned long *a);
long sys_setdomainname(struct task *t, const unsigned long *a);
long sys_sched_setscheduler(struct task *t, const unsigned long *a);
long sys_sched_setparam(struct task *t, const unsigned long *a);
long sys_sched_rr_get_interval(struct task *t, const unsigned long *a);
long sys_sched_setattr(struct task *t, const unsigned long *a);
long sys_sched_getattr(struct task *t, const unsigned long *a);
long sys_ioprio_get(struct task *t, const unsigned long *a);
long sys_ioprio_set(struct task *t, const unsigned long *a);
long sys_sched_get_priority_max(struct task *t, const unsigned long *a);
long sys_sched_get_priority_min(struct task *t, const unsigned long *a);
long sys_getrusage(struct task *t, const unsigned long *a);
long sys_times(struct task *t, const unsigned long *a);
long sys_sysinfo(struct task *t, const unsigned long *a);
long sys_getpriority(struct task *t, const unsigned long *a);
long sys_capget(struct task *t, const unsigned long *a);
long sys_capset(struct task *t, const unsigned long *a);
long sys_setpriority(struct task *t, const unsigned long *a);
long sys_getcpu(struct task *t, const unsigned long *a);
/* signalfd.c */
long sys_signalfd(struct task *t, const unsigned long *a);
long sys_signalfd4(struct task *t, const unsigned long *a);
/* sys_inotify.c */
long sys_inotify_init(struct task *t, const unsigned long *a);
long sys_inotify_init1(struct task *t, const unsigned long *a);
long sys_inotify_add_watch(struct task *t, const unsigned long *a);
long sys_inotify_rm_watch(struct task *t, const unsigned long *a);
/* futex.c */
long sys_futex(struct task *t, const unsigned long *a);
/* sys_cred.c */
long sys_setuid(struct task *t, const unsigned long *a);
long sys_setgid(struct task *t, const unsigned long *a);
long sys_setreuid(struct task *t, const unsigned long *a);
long sys_setregid(struct task *t, const unsigned long *a);
long sys_setresuid(struct task *t, const unsigned long *a);
long sys_setresgid(struct task *t, const unsigned long *a);
long sys_setfsuid(struct task *t, const unsigned long *a);
long sys_setfsgid(struct task *t, const unsigned long *a);
long sys_setgroups(struct task *t, const unsigned long *a);
/* locks.c */
long sys_flock(struct task *t, const unsigned long *a);
/* memfd.c */
long sys_memfd_create(struct task *t, const unsigned long *a);
/* sys_socket.c */
long sys_socket(struct task *t, const unsigned long *a);
long sys_socketpair(struct task *t, const unsigned long *a);
long sys_bind(struct task *t, const unsigned long *a);
long sys_listen(struct task *t, const unsigned long *a);
long sys_accept(struct task *t, const unsigned long *a);
long sys_accept4(struct task *t, const unsigned long *a);
long sys_connect(struct task *t, const unsigned long *a);
long sys_getsockname(struct task *t, const unsigned long *a);
long sys_getpeername(struct task *t, const unsigned long *a);
long sys_sendto(struct task *t, const unsigned long *a);
long sys_recvfrom(struct task *t, const unsigned long *a);
long sys_sendmsg(struct task *t, const unsigned long *a);
long sys_recvmsg(struct task *t, const unsigned long *a);
long sys_sendmmsg(struct task *t, const unsigned long *a);
/* read(2) and write(2) on a socket wait as recv and send do: until EVENTS, or -ETIMEDOUT
 * once SO_RCVTIMEO/SO_SNDTIMEO has passed. */
long sock_wait_io(struct task *t, struct vfs_file *f, uint32_t events);
/* ioctl(2) requests of the socket layer (SIOC*: the interfaces, SIOCATMARK...) on socket F. */
long sock_ioctl(struct task *t, struct vfs_file *f, unsigned int cmd, uintptr_t arg);
long sys_recvmmsg(struct task *t, const unsigned long *a);
long sys_shutdown(struct task *t, const unsigned long *a);
long sys_setsockopt(struct task *t, const unsigned long *a);
long sys_getsockopt(struct task *t, const unsigned long *a);
/* sys_fs.c */
long sys_mkdir(struct task *t, const unsigned long *a);
long sys_mkdirat(struct task *t, const unsigned long *a);
long sys_mknod(struct task *t, const unsigned long *a);
long sys_mknodat(struct task *t, const unsigned long *a);
long sys_unlink(struct task *t, const unsigned long *a);
long sys_unlinkat(struct task *t, const unsigned long *a);
long sys_rmdir(struct task *t, const unsigned long *a);
long sys_rename(struct task *t, const unsigned long *a);
long sys_renameat(struct task *t, const unsigned long *a);
long sys_renameat2(struct task *t, const unsigned long *a);
long sys_link(struct task *t, const unsigned long *a);
long sys_linkat(struct task *t, const unsigned long *a);
long sys_symlink(struct task *t, const unsigned long *a);
long sys_symlinkat(struct task *t, const unsigned long *a);
long sys_chmod(struct task *t, const unsigned long *a);
long sys_fchmod(struct task *t, const unsigned long *a);
long sys_fchmodat(struct task *t, const unsigned long *a);
long sys_chown(struct task *t, const unsigned long *a);
long sys_fchown(struct task *t, const unsigned long *a);
long sys_lchown(struct task *t, const unsigned long *a);
long sys_fchownat(struct task *t, const unsigned long *a);
long sys_truncate(struct task *t, const unsigned long *a);
long sys_ftruncate(struct task *t, const unsigned long *a);
long sys_fallocate(struct task *t, const unsigned long *a);
long sys_utimensat(struct task *t, const unsigned long *a);
long sys_futimesat(struct task *t, const unsigned long *a);
long sys_utimes(struct task *t, const unsigned long *a);
long sys_utime(struct task *t, const unsigned long *a);
long sys_creat(struct task *t, const unsigned long *a);
long sys_statfs(struct task *t, const unsigned long *a);
long sys_fstatfs(struct task *t, const unsigned long *a);
long sys_fsync(struct task *t, const unsigned long *a);
long sys_sync_file_range(struct task *t, const unsigned long *a);
long sys_fdatasync(struct task *t, const unsigned long *a);
long sys_sync(struct task *t, const unsigned long *a);
long sys_syncfs(struct task *t, const unsigned long *a);
long sys_chroot(struct task *t, const unsigned long *a);
long sys_mount(struct task *t, const unsigned long *a);
long sys_umount2(struct task *t, const unsigned long *a);
long sys_getxattr(struct task *t, const unsigned long *a);
long sys_lgetxattr(struct task *t, const unsigned long *a);
long sys_fgetxattr(struct task *t, const unsigned long *a);
long sys_setxattr(struct task *t, const unsigned long *a);
long sys_lsetxattr(struct task *t, const unsigned long *a);
long sys_fsetxattr(struct task *t, const unsigned long *a);
long sys_listxattr(struct task *t, const unsigned long *a);
long sys_llistxattr(struct task *t, const unsigned long *a);
long sys_flistxattr(struct task *t, const unsigned long *a);
long sys_removexattr(struct task *t, const unsigned long *a);
long sys_lremovexattr(struct task *t, const unsigned long *a);
long sys_fremovexattr(struct task *t, const unsigned long *a);
/* sys_poll.c */
long sys_poll(struct task *t, const unsigned long *a);
long sys_ppoll(struct task *t, const unsigned long *a);
long sys_select(struct task *t, const unsigned long *a);
long sys_pselect6(struct task *t, const unsigned long *a);
long sys_epoll_create(struct task *t, const unsigned long *a);
long sys_epoll_create1(struct task *t, const unsigned long *a);
long sys_epoll_ctl(struct task *t, const unsigned long *a);
long sys_epoll_wait(struct task *t, const unsigned long *a);
long sys_epoll_pwait(struct task *t, const unsigned long *a);
long sys_eventfd(struct task *t, const unsigned long *a);
long sys_eventfd2(struct task *t, const unsigned long *a);
/* timer.c */
long sys_getitimer(struct task *t, const unsigned long *a);
long sys_setitimer(struct task *t, const unsigned long *a);
long sys_alarm(struct task *t, const unsigned long *a);
long sys_timer_create(struct task *t, const unsigned long *a);
long sys_timer_settime(struct task *t, const unsigned long *a);
long sys_timer_gettime(struct task *t, const unsigned long *a);
long sys_timer_getoverrun(struct task *t, const unsigned long *a);
long sys_timer_delete(struct task *t, const unsigned long *a);
long sys_timerfd_create(struct task *t, const unsigned long *a);
long sys_timerfd_settime(struct task *t, const unsigned long *a);
long sys_timerfd_gettime(struct task *t, const unsigned long *a);
/* sys_signal.c */
long sys_rt_sigaction(struct task *t, const unsigned long *a);
long sys_rt_sigprocmask(struct task *t, const unsigned long *a);
long sys_kill(struct task *t, const unsigned long *a);
long sys_tkill(struct task *t, const unsigned long *a);
long sys_tgkill(struct task *t, const unsigned long *a);
long sys_rt_sigqueueinfo(struct task *t, const unsigned long *a);
long sys_rt_tgsigqueueinfo(struct task *t, const unsigned long *a);
long sys_rt_sigpending(struct task *t, const unsigned long *a);
long sys_rt_sigsuspend(struct task *t, const unsigned long *a);
long sys_pause(struct task *t, const unsigned long *a);
long sys_sigaltstack(struct task *t, const unsigned long *a);
long sys_rt_sigtimedwait(struct task *t, const unsigned long *a);
/* signal.c */
long sys_rt_sigreturn(struct task *t, const unsigned long *a);

#endif
