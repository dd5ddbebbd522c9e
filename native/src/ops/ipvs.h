/*
 * ipvs.h: IPVS over generic netlink (family "IPVS") in plain C, no N-API types.
 * Every function returns 0 or a negative errno (or -IPVS_EUNAVAILABLE) and never asserts on
 * kernel or caller input.
 *
 * Errors the callers map to readable messages:
 *   -IPVS_EUNAVAILABLE  the IPVS genl family is not registered (ip_vs module not loaded)
 *   -ESRCH              no such virtual service (the kernel's ip_vs_genl_set_cmd / get_cmd)
 *   -ENOENT             no such destination in the service (ip_vs_edit_dest, ip_vs_del_dest),
 *                       or an unknown scheduler on addService (ip_vs_scheduler_get)
 *   -EEXIST             the service or destination already exists
 */
#ifndef NETLINK_NATIVE_IPVS_H
#define NETLINK_NATIVE_IPVS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/ip_vs.h>
#include "wire/netlink.h"

/* Ours, above every errno: the "IPVS" generic netlink family does not exist. */
#define IPVS_EUNAVAILABLE 4097

/* A virtual service: by fwmark (fwmark != 0) or by protocol/address/port. */
struct ipvs_service_key {
	uint16_t af;          /* AF_INET or AF_INET6 */
	uint32_t fwmark;      /* nonzero: a firewall-mark service; protocol/addr/port unused */
	uint16_t protocol;    /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP */
	uint8_t addr[16];     /* network order; IPv4 in the first 4 bytes */
	uint16_t port;        /* host order */
};

struct ipvs_service {
	struct ipvs_service_key key;
	char scheduler[IP_VS_SCHEDNAME_MAXLEN + 1];
	char pe_name[IP_VS_PENAME_MAXLEN + 1];
	uint32_t flags;       /* IP_VS_SVC_F_* */
	uint32_t timeout;     /* persistence timeout, seconds */
	uint32_t netmask;     /* IPv4: mask; IPv6: prefix length */
};

/* A real server. Key fields: af (0 = the service's family), addr, port. */
struct ipvs_dest {
	uint16_t af;
	uint8_t addr[16];
	uint16_t port;        /* host order */
	uint32_t fwd;         /* IP_VS_CONN_F_MASQ, _LOCALNODE, _TUNNEL, _DROUTE, _BYPASS */
	uint32_t weight;
	uint32_t u_thresh;
	uint32_t l_thresh;
	uint8_t tun_type;     /* IP_VS_CONN_F_TUNNEL_TYPE_IPIP, _GUE, _GRE */
	uint16_t tun_port;    /* host order */
	uint16_t tun_flags;   /* IP_VS_TUNNEL_ENCAP_FLAG_* */
	uint32_t active_conns;
	uint32_t inactive_conns;
	uint32_t persistent_conns;
};

struct ipvs_service_list {
	struct ipvs_service *items;
	size_t count;
	size_t cap;
};

struct ipvs_dest_list {
	struct ipvs_dest *items;
	size_t count;
	size_t cap;
};

void ipvs_service_list_free(struct ipvs_service_list *l);
void ipvs_dest_list_free(struct ipvs_dest_list *l);

/* Every operation takes a NETLINK_GENERIC socket (nl_open(s, NETLINK_GENERIC, ...)) opened in
 * the network namespace to act on. The family id is resolved on every call (one small
 * round trip), so loading or reloading ip_vs after the socket was opened is picked up. */

/* Both tables: protocol/address/port services and fwmark services, IPv4 and IPv6. */
int ipvs_list_services(struct nl_sock *s, struct ipvs_service_list *out);
/* One service; -ESRCH when absent. */
int ipvs_get_service(struct nl_sock *s, const struct ipvs_service_key *key, struct ipvs_service *out);
/* The destinations of one service; -ESRCH when the service does not exist. */
int ipvs_list_dests(struct nl_sock *s, const struct ipvs_service_key *key, struct ipvs_dest_list *out);
/* Read-modify-write: reads the destination and sends IPVS_CMD_SET_DEST with every field it
 * has (forwarding, thresholds, tunnel type/port/flags) and the new weight. -ESRCH, -ENOENT.
 * Not atomic against other writers (the kernel has no compare-and-set): a field another
 * writer changes between the read and the write is overwritten, as with `ipvsadm -e`. */
int ipvs_set_dest_weight(struct nl_sock *s, const struct ipvs_service_key *key, const struct ipvs_dest *dest_key,
			 uint32_t weight);
int ipvs_add_dest(struct nl_sock *s, const struct ipvs_service_key *key, const struct ipvs_dest *dest);
int ipvs_del_dest(struct nl_sock *s, const struct ipvs_service_key *key, const struct ipvs_dest *dest_key);
int ipvs_add_service(struct nl_sock *s, const struct ipvs_service *svc);
int ipvs_del_service(struct nl_sock *s, const struct ipvs_service_key *key);

#endif
