/* System V IPC: shared memory segments (ipc_shm.c), semaphore sets (ipc_sem.c) and message
 * queues (ipc_msg.c), in one IPC namespace that belongs to the sandbox. This header is both
 * the kernel's face of it (syscalls, exit hooks, checkpoint) and what the three files share:
 * the registry of ids and keys, the permission rules of ipc(7), which live in ipc.c.
 *
 * Blocking is retry (DESIGN.md §4): semop, msgsnd and msgrcv keep nothing between their tries
 * but the task's deadline; every change to a set or queue wakes all its waiters and each tries
 * its whole operation again. A retry that finds its object gone answers EIDRM. So a waiter
 * needs no saved state beyond "inside syscall N", and the tables are the whole checkpoint. */
#ifndef SENTRY_IPC_H
#define SENTRY_IPC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

struct enc;
struct dec;
struct task;

/* Linux's defaults (ipc/util.h, include/uapi/linux/{shm,sem,msg}.h), which /proc/sys/kernel
 * shows too; a write there changes ipc_limits (ipc_set_limit), as it does Linux's namespace. */
#define IPC_ID_SHIFT 15 /* an id is seq << IPC_ID_SHIFT | index, as Linux's IPCMNI_SHIFT */
#define IPC_SEQ_MAX (0x7fffffff >> IPC_ID_SHIFT)
#define IPC_MNI (1 << IPC_ID_SHIFT) /* the most objects of a kind, whatever the limits say */
#define SHM_MNI 4096
#define SHM_MAX 0xfffffffffeffffffULL /* ULONG_MAX - 2^24 */
#define SHM_ALL 0xfffffffffeffffffULL /* pages */
#define SEM_MSL 32000
#define SEM_MNS 1024000000
#define SEM_OPM 500
#define SEM_MNI 32000
#define SEM_VMX 32767
#define SEM_AEM SEM_VMX
#define SEM_MSL_MAX 65536 /* the most semaphores a set may be given here */
#define SEM_OPM_MAX 65536 /* the most operations one semop may be given here */
#define MSG_MAX 8192
#define MSG_MNB 16384
#define MSG_MNI 32000

/* The namespace's limits: kernel.shmmax, shmall, shmmni, sem (semmsl semmns semopm semmni),
 * msgmax, msgmnb, msgmni. A checkpoint saves them with the objects. */
struct ipc_limits {
	uint64_t shmmax, shmall;
	int shmmni, semmsl, semmns, semopm, semmni, msgmax, msgmnb, msgmni;
};
extern struct ipc_limits ipc_limits;

/* A write of /proc/sys/kernel/NAME (one of the above) with VALUE, the sysctl's normalised
 * text: 0, or -EINVAL for a value Linux's handler refuses (or one past what is kept here). */
int ipc_set_limit(const char *name, const char *value);

/* The rwx bits for everyone, as Linux's S_IRUGO and co (what ipc_perm_check is asked). */
#define IPC_R 0444
#define IPC_W 0222
#define IPC_X 0111

/* What every IPC object has: its place in its registry and its ipc_perm. MODE holds the nine
 * permission bits and, for segments, SHM_DEST and SHM_LOCKED (as Linux shows them). */
struct ipc_obj {
	int idx;
	unsigned int seq;
	int32_t key;
	uid_t uid, cuid;
	gid_t gid, cgid;
	unsigned int mode;
};

/* One kind's registry: objects by index, ids handed out as Linux's ipc_idr_alloc does
 * (cyclically over a window that grows with use, the sequence bumped on each wrap). */
struct ipc_ids {
	struct ipc_obj **v;
	int cap, in_use;
	const int *mni; /* the limit, in ipc_limits */
	unsigned int seq;
	int last_idx;
};

static inline int ipc_id(const struct ipc_obj *o)
{
	return (int)(o->seq << IPC_ID_SHIFT) + o->idx;
}

/* The object ID names, or NULL. */
struct ipc_obj *ipc_find_id(struct ipc_ids *ids, int id);
/* The live object with KEY (not IPC_PRIVATE), or NULL. */
struct ipc_obj *ipc_find_key(struct ipc_ids *ids, int32_t key);
/* The largest index in use, or -1. */
int ipc_max_idx(const struct ipc_ids *ids);
/* Enters O (allocated by the caller) with KEY and MODE's permission bits, owned by T's
 * effective ids: 0 or -ENOSPC/-ENOMEM. */
int ipc_add(struct ipc_ids *ids, struct ipc_obj *o, struct task *t, int32_t key, int mode);
/* Takes O out of its registry (the caller frees it). */
void ipc_remove(struct ipc_ids *ids, struct ipc_obj *o);
/* ipcperms: whether T may access O for the rwx bits of REQ (S_IRUGO and co, or a get's flag
 * bits); CAP_IPC_OWNER passes. 0 or -EACCES. */
int ipc_perm_check(struct task *t, const struct ipc_obj *o, int req);
/* IPC_SET and IPC_RMID: T must be O's owner or creator, or hold CAP_SYS_ADMIN. 0 or -EPERM. */
int ipc_owner_check(struct task *t, const struct ipc_obj *o);
/* The get(2) of every kind: finds or creates by KEY and FLG as ipc(7) says. CREATE makes a new
 * object (its own size checks, then ipc_add); MORE checks an existing one (its size) before the
 * permissions. Returns the id or a negative errno. */
long ipc_get(struct task *t, struct ipc_ids *ids, int32_t key, int flg,
	     long (*create)(struct task *t, int32_t key, int flg, long arg),
	     int (*more)(struct ipc_obj *o, long arg), long arg);
/* The ipc64_perm a *_STAT answers (struct ipc_perm of glibc on x86_64 has its layout). */
struct ipc_perm;
void ipc_fill_perm(const struct ipc_obj *o, struct ipc_perm *p);
/* IPC_SET's part of every kind: the owner and the permission bits from P. */
void ipc_set_perm(struct ipc_obj *o, const struct ipc_perm *p);
/* The realtime clock's seconds, for the *_time fields. */
int64_t ipc_now(void);

/* Checkpoint of a registry: its allocator, then each object (N of them, in index order) with
 * SAVE_ONE writing what follows its perm. */
void ipc_ids_save(struct enc *e, const struct ipc_ids *ids,
		  void (*save_one)(struct enc *e, const struct ipc_obj *o));
int ipc_ids_load(struct dec *d, struct ipc_ids *ids, struct ipc_obj *(*load_one)(struct dec *d));

/* Per kind, for ipc.c. */
void shm_save(struct enc *e);
int shm_load(struct dec *d);
void sem_save(struct enc *e);
int sem_load(struct dec *d);
void msg_save(struct enc *e);
int msg_load(struct dec *d);
/* The lines of /proc/sysvipc/shm, sem and msg, one per object. */
void shm_proc_lines(FILE *f);
void sem_proc_lines(FILE *f);
void msg_proc_lines(FILE *f);
/* Frees the removed segments nothing maps any more (IPC_RMID waits for the last detach). */
void shm_collect(void);
/* The process TGID is gone: its semaphore adjustments (SEM_UNDO) are applied. */
void sem_exit(pid_t tgid);

/* --- The kernel's face ------------------------------------------------------------------- */

/* The process of LEADER has exited (its address space is released): SEM_UNDO adjustments are
 * applied and segments it was the last to map after IPC_RMID go. */
void ipc_on_exit(struct task *leader);
/* An address space was released (exec): removed segments it was the last to map go. */
void ipc_on_mm_release(void);

/* procinfo's sysvipc: the text of /proc/sysvipc/shm (KIND 0), sem (1) or msg (2), header
 * included, malloc'd; NULL if out of memory or KIND is none of them. */
char *ipc_proc_text(int kind);

/* Checkpoint: the "ipc" section (docs/image-format.md). Segments refer to their memory objects
 * (CK_MOBJ), so ipc_save runs before the checkpoint saves the queued objects, and ipc_load
 * after every kind is loaded. */
int ipc_save(struct enc *e);
int ipc_load(struct dec *d);

long sys_shmget(struct task *t, const unsigned long *a);
long sys_shmat(struct task *t, const unsigned long *a);
long sys_shmdt(struct task *t, const unsigned long *a);
long sys_shmctl(struct task *t, const unsigned long *a);
long sys_semget(struct task *t, const unsigned long *a);
long sys_semop(struct task *t, const unsigned long *a);
long sys_semtimedop(struct task *t, const unsigned long *a);
long sys_semctl(struct task *t, const unsigned long *a);
long sys_msgget(struct task *t, const unsigned long *a);
long sys_msgsnd(struct task *t, const unsigned long *a);
long sys_msgrcv(struct task *t, const unsigned long *a);
long sys_msgctl(struct task *t, const unsigned long *a);

#endif
