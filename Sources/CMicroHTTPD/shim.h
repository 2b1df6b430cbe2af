// Non-variadic wrappers around libmicrohttpd: Swift cannot call C variadic functions
// (MHD_start_daemon, MHD_get_daemon_info), and function pointers cannot be passed as
// the intptr_t values of MHD_OptionItem from Swift, so those options are set here.
#ifndef CARTOGRAPH_CMHD_SHIM_H
#define CARTOGRAPH_CMHD_SHIM_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/// Returns the heap's free memory to the system (glibc keeps what a large request freed in its
/// arenas otherwise); nothing elsewhere.
static inline void cmhd_release_free_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

/// Leaves the URL and query arguments exactly as the client sent them, so that the
/// router can decode them itself and reject an encoded '/' or NUL in a path segment.
static inline size_t cmhd_identity_unescape(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

/// Starts a daemon. `bind_ipv4` may be NULL (all interfaces) or a dotted-quad address.
/// `options` holds integer options only (terminated inside this function); returns NULL on failure.
static inline struct MHD_Daemon *cmhd_start_daemon(
    unsigned int flags, uint16_t port, const char *bind_ipv4,
    MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls,
    const struct MHD_OptionItem *options, size_t option_count)
{
    struct MHD_OptionItem items[32];
    size_t n = 0;
    for (size_t i = 0; i < option_count && n < 27; i++) items[n++] = options[i];
    items[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_cls };
    items[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify_connection, notify_connection_cls };
    items[n++] = (struct MHD_OptionItem){ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)cmhd_identity_unescape, NULL };
    struct sockaddr_in local;
    if (bind_ipv4 != NULL) {
        memset(&local, 0, sizeof local);
        local.sin_family = AF_INET;
        local.sin_port = htons(port);
        if (inet_pton(AF_INET, bind_ipv4, &local.sin_addr) != 1) return NULL;
        items[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &local };
    }
    items[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    return MHD_start_daemon(flags, port, accept_policy, accept_policy_cls, handler, handler_cls,
                            MHD_OPTION_ARRAY, items, MHD_OPTION_END);
}

/// The socket of a connection; -1 when MHD does not tell.
static inline int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// Whether a connection notification says the connection started (else it closed). The notification
/// codes' Swift import depends on how a libmicrohttpd release marks its enums; this does not.
static inline int cmhd_connection_started(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

/// The IPv4 address of a socket address, in network byte order; 0 for another family.
static inline uint32_t cmhd_ipv4_of(const struct sockaddr *address) {
    if (address == NULL || address->sa_family != AF_INET) return 0;
    return ((const struct sockaddr_in *)address)->sin_addr.s_addr;
}

/// The IPv4 address of a connection's client (network byte order); 0 when MHD does not tell.
static inline uint32_t cmhd_connection_ipv4(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? 0 : cmhd_ipv4_of(info->client_addr);
}

/// The port the daemon listens on (useful after binding port 0).
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

#endif
