/* reuseport.c: see reuseport.h. Plain C, no N-API. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "ops/reuseport.h"

int reuseport_listen(const char *host, int port, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, zero = 0, fd, err;

	memset(&ss, 0, sizeof(ss));
	if (port < 0 || port > 65535)
		return -EINVAL;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
		in4->sin_family = AF_INET;
		in4->sin_port = htons((unsigned short)port);
		len = sizeof(*in4);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((unsigned short)port);
		len = sizeof(*in6);
	} else {
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    (ss.ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, backlog) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}
