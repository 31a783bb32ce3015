/* membarrier(2): the guest's barriers made by the host's, on every CPU that runs guest code. */
#ifndef SENTRY_MEMBARRIER_H
#define SENTRY_MEMBARRIER_H

#include <linux/membarrier.h>

/* Registers the Sentry for the host's global expedited barrier before the stub factory is
 * forked, so that the factory and every stub inherit the registration. */
void membarrier_host_init(void);

/* The registrations an address space can hold (mm->membarrier): a restore checks them. */
#define MEMBARRIER_REGISTRATIONS                                                                   \
	(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED |    \
	 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE)

#endif
