/* netns.c: enter a named network namespace on the calling thread and come back (see netns.h). */
#include "wire/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int netns_check_name(const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (len == 0 || len > 255 || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	return 0;
}

int netns_run(const char *name, int (*fn)(void *ctx), void *ctx)
{
	char path[PATH_MAX];
	int self, target, result;

	if (netns_check_name(name) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR, name);
	/* The thread's own namespace: /proc/thread-self (the process' may differ per thread). */
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0) {
		int err = -errno;
		close(self);
		return err;
	}
	if (setns(target, CLONE_NEWNET) < 0) {
		int err = -errno;
		close(target);
		close(self);
		return err;
	}
	close(target);
	result = fn(ctx);
	if (setns(self, CLONE_NEWNET) < 0)
		result = -ENOTRECOVERABLE;
	close(self);
	return result;
}
