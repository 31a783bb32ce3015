/* Handler prototypes for the syscall table, grouped by the file that implements them. */
#ifndef SENTRY_SYSCALLS_H
#define SENTRY_SYSCALLS_H

#include "sentry/syscall.h"

#define SYSCALL_DECL(name) long sys_##name(struct task *t, const unsigned long *a)

/* sys_file.c */
SYSCALL_DECL(read);
SYSCALL_DECL(write);
SYSCALL_DECL(readv);
SYSCALL_DECL(writev);
SYSCALL_DECL(pread64);
SYSCALL_DECL(pwrite64);
SYSCALL_DECL(fadvise64);
SYSCALL_DECL(close_range);
SYSCALL_DECL(open);
SYSCALL_DECL(openat);
SYSCALL_DECL(close);
SYSCALL_DECL(lseek);
SYSCALL_DECL(fstat);
SYSCALL_DECL(stat);
SYSCALL_DECL(lstat);
SYSCALL_DECL(newfstatat);
SYSCALL_DECL(statx);
SYSCALL_DECL(getdents64);
SYSCALL_DECL(readlink);
SYSCALL_DECL(readlinkat);
SYSCALL_DECL(access);
SYSCALL_DECL(faccessat);
SYSCALL_DECL(faccessat2);
SYSCALL_DECL(getcwd);
SYSCALL_DECL(chdir);
SYSCALL_DECL(fchdir);
SYSCALL_DECL(ioctl);
SYSCALL_DECL(fcntl);
SYSCALL_DECL(dup);
SYSCALL_DECL(dup2);
SYSCALL_DECL(dup3);
SYSCALL_DECL(pipe);
SYSCALL_DECL(pipe2);
SYSCALL_DECL(sendfile);
SYSCALL_DECL(copy_file_range);
SYSCALL_DECL(splice);
SYSCALL_DECL(preadv);
SYSCALL_DECL(pwritev);
SYSCALL_DECL(preadv2);
SYSCALL_DECL(pwritev2);
SYSCALL_DECL(tee);
SYSCALL_DECL(openat2);
/* sys_mm.c */
SYSCALL_DECL(mmap);
SYSCALL_DECL(munmap);
SYSCALL_DECL(mprotect);
SYSCALL_DECL(brk);
SYSCALL_DECL(mremap);
SYSCALL_DECL(madvise);
SYSCALL_DECL(msync);
/* sys_proc.c */
SYSCALL_DECL(getpid);
SYSCALL_DECL(gettid);
SYSCALL_DECL(getppid);
SYSCALL_DECL(getuid);
SYSCALL_DECL(geteuid);
SYSCALL_DECL(getgid);
SYSCALL_DECL(getegid);
SYSCALL_DECL(getresuid);
SYSCALL_DECL(getresgid);
SYSCALL_DECL(getgroups);
SYSCALL_DECL(getpgrp);
SYSCALL_DECL(getpgid);
SYSCALL_DECL(getsid);
SYSCALL_DECL(exit);
SYSCALL_DECL(exit_group);
SYSCALL_DECL(set_tid_address);
SYSCALL_DECL(uname);
SYSCALL_DECL(arch_prctl);
SYSCALL_DECL(prlimit64);
SYSCALL_DECL(getrlimit);
SYSCALL_DECL(setrlimit);
SYSCALL_DECL(umask);
SYSCALL_DECL(sched_yield);
SYSCALL_DECL(getrandom);
SYSCALL_DECL(set_robust_list);
SYSCALL_DECL(rseq);
SYSCALL_DECL(prctl);
SYSCALL_DECL(setpgid);
SYSCALL_DECL(setsid);
SYSCALL_DECL(vfork);
/* fork.c, exec.c, exit.c */
SYSCALL_DECL(clone);
SYSCALL_DECL(fork);
SYSCALL_DECL(clone3);
SYSCALL_DECL(execve);
SYSCALL_DECL(execveat);
SYSCALL_DECL(wait4);
SYSCALL_DECL(waitid);
/* sys_time.c */
SYSCALL_DECL(clock_gettime);
SYSCALL_DECL(clock_getres);
SYSCALL_DECL(gettimeofday);
SYSCALL_DECL(time);
SYSCALL_DECL(nanosleep);
SYSCALL_DECL(clock_nanosleep);
/* sys_sched.c */
SYSCALL_DECL(sched_getaffinity);
SYSCALL_DECL(sched_setaffinity);
SYSCALL_DECL(sched_getscheduler);
SYSCALL_DECL(sched_getparam);
SYSCALL_DECL(sched_get_priority_max);
SYSCALL_DECL(sched_get_priority_min);
SYSCALL_DECL(getrusage);
SYSCALL_DECL(times);
SYSCALL_DECL(sysinfo);
SYSCALL_DECL(getcpu);
/* signalfd.c */
SYSCALL_DECL(signalfd);
SYSCALL_DECL(signalfd4);
/* futex.c */
SYSCALL_DECL(futex);
/* sys_cred.c */
SYSCALL_DECL(setuid);
SYSCALL_DECL(setgid);
SYSCALL_DECL(setreuid);
SYSCALL_DECL(setregid);
SYSCALL_DECL(setresuid);
SYSCALL_DECL(setresgid);
SYSCALL_DECL(setfsuid);
SYSCALL_DECL(setfsgid);
SYSCALL_DECL(setgroups);
/* locks.c */
SYSCALL_DECL(flock);
/* memfd.c */
SYSCALL_DECL(memfd_create);
/* sys_socket.c */
SYSCALL_DECL(socket);
SYSCALL_DECL(socketpair);
SYSCALL_DECL(bind);
SYSCALL_DECL(listen);
SYSCALL_DECL(accept);
SYSCALL_DECL(accept4);
SYSCALL_DECL(connect);
SYSCALL_DECL(getsockname);
SYSCALL_DECL(getpeername);
SYSCALL_DECL(sendto);
SYSCALL_DECL(recvfrom);
SYSCALL_DECL(sendmsg);
SYSCALL_DECL(recvmsg);
SYSCALL_DECL(shutdown);
SYSCALL_DECL(setsockopt);
SYSCALL_DECL(getsockopt);
/* A path was unlinked: a Unix socket bound to it can no longer be reached by it. */
/* sys_fs.c */
SYSCALL_DECL(mkdir);
SYSCALL_DECL(mkdirat);
SYSCALL_DECL(mknod);
SYSCALL_DECL(mknodat);
SYSCALL_DECL(unlink);
SYSCALL_DECL(unlinkat);
SYSCALL_DECL(rmdir);
SYSCALL_DECL(rename);
SYSCALL_DECL(renameat);
SYSCALL_DECL(renameat2);
SYSCALL_DECL(link);
SYSCALL_DECL(linkat);
SYSCALL_DECL(symlink);
SYSCALL_DECL(symlinkat);
SYSCALL_DECL(chmod);
SYSCALL_DECL(fchmod);
SYSCALL_DECL(fchmodat);
SYSCALL_DECL(chown);
SYSCALL_DECL(fchown);
SYSCALL_DECL(lchown);
SYSCALL_DECL(fchownat);
SYSCALL_DECL(truncate);
SYSCALL_DECL(ftruncate);
SYSCALL_DECL(fallocate);
SYSCALL_DECL(utimensat);
SYSCALL_DECL(futimesat);
SYSCALL_DECL(utimes);
SYSCALL_DECL(utime);
SYSCALL_DECL(creat);
SYSCALL_DECL(statfs);
SYSCALL_DECL(fstatfs);
SYSCALL_DECL(fsync);
SYSCALL_DECL(fdatasync);
SYSCALL_DECL(sync);
SYSCALL_DECL(syncfs);
SYSCALL_DECL(chroot);
SYSCALL_DECL(mount);
SYSCALL_DECL(umount2);
SYSCALL_DECL(getxattr);
SYSCALL_DECL(lgetxattr);
SYSCALL_DECL(fgetxattr);
SYSCALL_DECL(setxattr);
SYSCALL_DECL(lsetxattr);
SYSCALL_DECL(fsetxattr);
SYSCALL_DECL(listxattr);
SYSCALL_DECL(llistxattr);
SYSCALL_DECL(flistxattr);
SYSCALL_DECL(removexattr);
SYSCALL_DECL(lremovexattr);
SYSCALL_DECL(fremovexattr);
/* sys_poll.c */
SYSCALL_DECL(poll);
SYSCALL_DECL(ppoll);
SYSCALL_DECL(select);
SYSCALL_DECL(pselect6);
SYSCALL_DECL(epoll_create);
SYSCALL_DECL(epoll_create1);
SYSCALL_DECL(epoll_ctl);
SYSCALL_DECL(epoll_wait);
SYSCALL_DECL(epoll_pwait);
SYSCALL_DECL(eventfd);
SYSCALL_DECL(eventfd2);
/* timer.c */
SYSCALL_DECL(getitimer);
SYSCALL_DECL(setitimer);
SYSCALL_DECL(alarm);
SYSCALL_DECL(timer_create);
SYSCALL_DECL(timer_settime);
SYSCALL_DECL(timer_gettime);
SYSCALL_DECL(timer_getoverrun);
SYSCALL_DECL(timer_delete);
SYSCALL_DECL(timerfd_create);
SYSCALL_DECL(timerfd_settime);
SYSCALL_DECL(timerfd_gettime);
/* sys_signal.c */
SYSCALL_DECL(rt_sigaction);
SYSCALL_DECL(rt_sigprocmask);
SYSCALL_DECL(kill);
SYSCALL_DECL(tkill);
SYSCALL_DECL(tgkill);
SYSCALL_DECL(rt_sigqueueinfo);
SYSCALL_DECL(rt_tgsigqueueinfo);
SYSCALL_DECL(rt_sigpending);
SYSCALL_DECL(rt_sigsuspend);
SYSCALL_DECL(pause);
SYSCALL_DECL(sigaltstack);
SYSCALL_DECL(rt_sigtimedwait);
/* signal.c */
SYSCALL_DECL(rt_sigreturn);

#endif
