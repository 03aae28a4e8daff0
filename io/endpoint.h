/*
 * endpoint: whether a ZeroMQ endpoint that fastbf binds can be reached
 * from other machines.
 *
 * fastbf answers whoever reaches its socket, so it binds the loopback by
 * default and a network-wide bind is the user's explicit choice
 * (--allow-remote). fbf_endpoint_reach() reads the endpoint's text only
 * (no name resolution, no system call):
 *
 *   FBF_REACH_LOCAL    tcp:// or ws(s):// on a loopback address
 *                      (127.0.0.0/8, ::1, ::ffff:127.x.y.z), the names
 *                      "localhost" and "lo"; ipc:// and inproc://; and a
 *                      transport this module does not know, which ZeroMQ
 *                      refuses itself ("Protocol not supported")
 *   FBF_REACH_NETWORK  any other address: "*", 0.0.0.0, ::, a public or
 *                      private address, an interface name (eth0), and the
 *                      network-only transports (pgm, epgm, norm, udp,
 *                      tipc, vmci)
 *
 * fbf_endpoint_check_bind(): 0 for a local endpoint; 1 for a network one
 * that allow_remote allows (the caller warns); -EACCES with one line in
 * err otherwise, saying what to do.
 */
#ifndef FBF_ENDPOINT_H
#define FBF_ENDPOINT_H

#include <stdbool.h>

#include "engine/error.h"

typedef enum fbf_reach { FBF_REACH_LOCAL, FBF_REACH_NETWORK } fbf_reach;

fbf_reach fbf_endpoint_reach(const char *endpoint);
int fbf_endpoint_check_bind(const char *endpoint, bool allow_remote, fbf_error *err);

#endif
