/*
 * clock_ms.h: the addon's one clock, CLOCK_MONOTONIC in milliseconds. It times ops (fractions
 * kept) and ages the event index's flows (whole milliseconds are enough there).
 */
#ifndef NETLINK_NATIVE_CLOCK_MS_H
#define NETLINK_NATIVE_CLOCK_MS_H

#include <time.h>

static inline double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
