/* ct_filter.c: the address hash set and filter defaults (see ct_filter.h). */
#include "wire/ct_filter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The set's key is the address alone (ct_hash_addr in ct_filter.h). */
static uint64_t hash_addr(const struct ct_addr *a)
{
	return ct_hash_addr(a, 0);
}

int ct_table_alloc(size_t min_slots, size_t slot_size, void **slots, uint8_t **used, size_t *mask)
{
	size_t cap = 16;

	while (cap < min_slots) {
		if (cap > ((size_t)1 << 40))
			return -EINVAL;
		cap <<= 1;
	}
	*slots = calloc(cap, slot_size);
	if (used)
		*used = calloc(cap, 1);
	if (!*slots || (used && !*used)) {
		free(*slots);
		*slots = NULL;
		if (used) {
			free(*used);
			*used = NULL;
		}
		return -ENOMEM;
	}
	*mask = cap - 1;
	return 0;
}

int ct_addr_set_init(struct ct_addr_set *set, size_t expected)
{
	void *slots = NULL;
	int err;

	memset(set, 0, sizeof(*set));
	err = ct_table_alloc(expected * 2 + 1, sizeof(*set->slots), &slots, &set->used, &set->mask);
	set->slots = slots;
	return err;
}

void ct_addr_set_free(struct ct_addr_set *set)
{
	free(set->slots);
	free(set->used);
	memset(set, 0, sizeof(*set));
}

static int same(const struct ct_addr *x, const struct ct_addr *y)
{
	return x->family == y->family && memcmp(x->bytes, y->bytes, 16) == 0;
}

int ct_addr_set_has(const struct ct_addr_set *set, const struct ct_addr *a)
{
	size_t i;

	if (!set->slots)
		return 0;
	for (i = hash_addr(a) & set->mask; set->used[i]; i = (i + 1) & set->mask)
		if (same(&set->slots[i], a))
			return 1;
	return 0;
}

long ct_addr_set_slot(const struct ct_addr_set *set, const struct ct_addr *a)
{
	size_t i;

	if (!set->slots)
		return -1;
	for (i = hash_addr(a) & set->mask; set->used[i]; i = (i + 1) & set->mask)
		if (same(&set->slots[i], a))
			return (long)i;
	return -1;
}

int ct_addr_set_add(struct ct_addr_set *set, const struct ct_addr *a)
{
	size_t i;

	if (!set->slots)
		return -EINVAL;
	if ((set->count + 1) * 2 > set->mask + 1)
		return -ENOSPC; /* sized by the caller from the address count */
	for (i = hash_addr(a) & set->mask; set->used[i]; i = (i + 1) & set->mask)
		if (same(&set->slots[i], a))
			return 0;
	set->slots[i] = *a;
	set->used[i] = 1;
	set->count++;
	return 0;
}

int ct_addr_parse(const char *text, struct ct_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, text, a->bytes) == 1) {
		a->family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, text, a->bytes) == 1) {
		a->family = 6;
		return 0;
	}
	return -EINVAL;
}

void ct_filter_init(struct ct_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->zone = -1;
}

void ct_filter_free(struct ct_filter *f)
{
	ct_addr_set_free(&f->addrs);
	memset(f, 0, sizeof(*f));
	f->zone = -1;
}
