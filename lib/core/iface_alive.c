/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iface_alive.c - whether the owner of an endpoint slot, or of a channel,
 * is alive, and the alive map that makes an owner so.  Reads the
 * endpoint table only; the tables' writers are above it (iface_channel.c,
 * iface_slot.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/iface_impl.h"

/* ---- Endpoint slots: who is alive ------------------------------------ */

/*
 * An owner is alive while its alive map exists and still holds its token
 * (unet_abi.h).  Only an id that names no map (ENOENT) proves death: a
 * caller without the privilege to look (EPERM) cannot tell, and then an
 * entry is taken for alive, so nothing is ever reclaimed on a guess.
 */
static bool alive_map_holds(uint32_t id, uint64_t token)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info), key = 0;
	__u64 val = 0;
	bool ok;
	int fd;

	if (!id || !token)
		return false;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return errno != ENOENT;
	memset(&info, 0, sizeof(info));
	ok = !bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_MAP_TYPE_ARRAY &&
	     info.key_size == sizeof(key) && info.value_size == sizeof(val) &&
	     info.max_entries == 1 && !bpf_map_lookup_elem(fd, &key, &val) && val == token;
	close(fd);
	return ok;
}

bool unet_endpoint_val_alive(const struct unet_endpoint_val *ev)
{
	return alive_map_holds(ev->alive_map_id, ev->token);
}

uint64_t unet_iface_slot_token(struct unet_iface *iface, uint32_t slot)
{
	struct unet_endpoint_val ev;

	if (bpf_map_lookup_elem(iface->endpoints_fd, &slot, &ev) || !unet_endpoint_val_alive(&ev))
		return 0;
	return ev.token;
}

bool unet_iface_slot_alive(struct unet_iface *iface, uint32_t slot, uint64_t token)
{
	uint64_t t = unet_iface_slot_token(iface, slot);

	return t && (!token || t == token);
}

int unet_alive_map_create(uint64_t *token, uint32_t *id)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo);
	struct bpf_map_info info;
	__u32 len = sizeof(info), key = 0;
	int fd, err;

	do {
		if (getrandom(token, sizeof(*token), 0) != sizeof(*token))
			return -errno;
	} while (!*token);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unet_alive", sizeof(key), sizeof(*token), 1, &mo);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_map_update_elem(fd, &key, token, BPF_ANY) ||
	    bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	*id = info.id;
	return fd;
}

/* Whether the channel's owner (its slot, and the incarnation that opened
 * it) is alive; slot answers cached per walk (slots < UNET_MAX_ENDPOINTS). */
bool unet_channel_owner_alive(struct unet_iface *iface, const struct unet_channel_val *cv,
			      uint64_t cache[UNET_MAX_ENDPOINTS], bool cached[UNET_MAX_ENDPOINTS])
{
	uint32_t id = cv->endpoint;
	uint64_t token;

	if (id >= UNET_MAX_ENDPOINTS)
		return false;
	if (!cached[id]) {
		cache[id] = unet_iface_slot_token(iface, id);
		cached[id] = true;
	}
	token = cache[id];
	return token && token == cv->owner_token;
}
