/* SPDX-License-Identifier: BSD-2-Clause */
/* daemon_client.c - unetctl's side of unetd's socket: connect, one
 * request, and the daemon's STATUS asked once per command. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unetctl.h"

/* ---- unetd: the daemon's socket (lib/proto/unetd_proto.h) --------------- */

/* Where unetd listens: --socket, else $UNET_DAEMON_SOCKET, else the
 * default, as the library looks. */
const char *daemon_socket(void)
{
	const char *env = getenv(UNETD_SOCKET_ENV);

	if (ctl.socket_opt && *ctl.socket_opt)
		return ctl.socket_opt;
	if (env && *env)
		return env;
	return UNETD_DEFAULT_SOCKET;
}

/* One request and its reply (lib/core/remote.c does the protocol). */
int daemon_call(struct daemon_conn *dc, uint16_t type, const void *body, uint32_t blen,
		       void *rep, uint32_t cap, uint32_t *len)
{
	return unet_daemon__call(dc->fd, type, body, blen, rep, cap, len, dc->err,
				 sizeof(dc->err));
}

/* Connect and say HELLO.  Returns 0, or a negative errno with the one-line
 * reason in dc->err. */
int daemon_open(struct daemon_conn *dc)
{
	memset(dc, 0, sizeof(*dc));
	dc->fd = unet_daemon__connect(daemon_socket(), &dc->pid, &dc->version, dc->err,
				      sizeof(dc->err));
	return dc->fd < 0 ? dc->fd : 0;
}

void daemon_close(struct daemon_conn *dc)
{
	if (dc->fd >= 0)
		close(dc->fd);
	dc->fd = -1;
}

/* UNETD_REQ_STATUS on dc into v.  Returns 0 or a negative errno (v->err). */
static int daemon_status(struct daemon_conn *dc, struct daemon_view *v)
{
	uint8_t buf[UNETD_MAX_MSG];
	uint32_t len = 0;
	int err;

	err = daemon_call(dc, UNETD_REQ_STATUS, NULL, 0, buf, sizeof(buf), &len);
	if (!err && len < sizeof(v->st))
		err = -EPROTO;
	if (!err) {
		memcpy(&v->st, buf, sizeof(v->st));
		if (v->st.nlisted > DAEMON_MAX_LISTED ||
		    len < sizeof(v->st) + (size_t)v->st.nlisted * sizeof(v->eps[0]))
			err = -EPROTO;
	}
	if (err) {
		snprintf(v->err, sizeof(v->err), "unetd at %.40s: status: %s", daemon_socket(),
			 dc->err[0] ? dc->err : strerror(-err));
		return err;
	}
	memcpy(v->eps, buf + sizeof(v->st), v->st.nlisted * sizeof(v->eps[0]));
	for (uint32_t i = 0; i < v->st.nlisted; i++)
		v->eps[i].ifname[sizeof(v->eps[i].ifname) - 1] = '\0';
	return 0;
}

/* The daemon's view, asked the first time; reachable false (and err why)
 * when it is not there. */
const struct daemon_view *daemon_view(void)
{
	static struct daemon_view v;
	struct daemon_conn dc;

	if (v.tried)
		return &v;
	v.tried = true;
	if (daemon_open(&dc)) {
		snprintf(v.err, sizeof(v.err), "%s", dc.err);
		return &v;
	}
	v.pid = dc.pid;
	v.version = dc.version;
	v.reachable = !daemon_status(&dc, &v);
	daemon_close(&dc);
	return &v;
}

/* Whether an endpoint slot's owner is unetd: the process at the daemon's
 * socket (its SO_PEERCRED pid), or a process named "unetd". */
bool slot_is_unetd(uint32_t pid, const char *comm)
{
	const struct daemon_view *v = daemon_view();

	return (v->reachable && pid == v->pid) || !strcmp(comm, "unetd");
}
