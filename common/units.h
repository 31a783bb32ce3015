/* common/units.h — units of time, one name each (Linux's names, from its vdso/time64.h).
 * It sits below every layer: any subsystem may include it, state/ and mem/ included, so it
 * includes nothing and holds nothing but constants. */
#ifndef COMMON_UNITS_H
#define COMMON_UNITS_H

#define MSEC_PER_SEC 1000L
#define USEC_PER_MSEC 1000L
#define USEC_PER_SEC 1000000L
#define NSEC_PER_USEC 1000L
#define NSEC_PER_MSEC 1000000L
#define NSEC_PER_SEC 1000000000L

#endif
