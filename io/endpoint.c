/*
 * endpoint: loopback or network, from an endpoint's text (endpoint.h).
 */
#include "io/endpoint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* host (len bytes, brackets removed) names the loopback. */
static bool host_is_loopback(const char *host, size_t len)
{
    char h[64];
    if (len == 0 || len >= sizeof h)
        return false;
    memcpy(h, host, len);
    h[len] = '\0';
    if (strcasecmp(h, "localhost") == 0 || strcmp(h, "lo") == 0)
        return true;
    struct in_addr a4;
    if (inet_pton(AF_INET, h, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    struct in6_addr a6;
    if (inet_pton(AF_INET6, h, &a6) == 1) {
        if (IN6_IS_ADDR_LOOPBACK(&a6))
            return true;
        return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
    }
    return false;
}

/* The host of "HOST:PORT[/path]" (tcp, ws): [v6] or up to the port. */
static bool hostport_is_loopback(const char *hp, bool has_path)
{
    size_t end = has_path ? strcspn(hp, "/") : strlen(hp);
    if (hp[0] == '[') {
        const char *close = memchr(hp, ']', end);
        return close && host_is_loopback(hp + 1, (size_t)(close - hp - 1));
    }
    const char *colon = NULL;
    for (size_t i = 0; i < end; i++)
        if (hp[i] == ':')
            colon = hp + i;
    return host_is_loopback(hp, colon ? (size_t)(colon - hp) : end);
}

fbf_reach fbf_endpoint_reach(const char *ep)
{
    if (starts(ep, "tcp://"))
        return hostport_is_loopback(ep + 6, false) ? FBF_REACH_LOCAL : FBF_REACH_NETWORK;
    if (starts(ep, "ws://") || starts(ep, "wss://")) {
        const char *hp = strstr(ep, "://") + 3;
        return hostport_is_loopback(hp, true) ? FBF_REACH_LOCAL : FBF_REACH_NETWORK;
    }
    static const char *const network[] = {"pgm://", "epgm://", "norm://", "udp://", "tipc://",
                                          "vmci://"};
    for (size_t i = 0; i < sizeof network / sizeof *network; i++)
        if (starts(ep, network[i]))
            return FBF_REACH_NETWORK;
    return FBF_REACH_LOCAL; /* ipc, inproc, or unknown: ZeroMQ refuses those */
}

int fbf_endpoint_check_bind(const char *endpoint, bool allow_remote, fbf_error *err)
{
    if (fbf_endpoint_reach(endpoint) == FBF_REACH_LOCAL)
        return 0;
    if (allow_remote)
        return 1;
    return fbf_errorf(err, -EACCES,
                      "%s is not a loopback address: other machines could drive this "
                      "fastbf; bind tcp://127.0.0.1:PORT (Batsim's tcp://localhost:PORT "
                      "reaches it) or pass --allow-remote",
                      endpoint);
}
