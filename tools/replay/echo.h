/*
 * echo: a bare ZeroMQ REQ/REP echo loop, the baseline fastbf-replay's
 * socket throughput is compared with (see echo.c).
 */
#ifndef FBF_REPLAY_ECHO_H
#define FBF_REPLAY_ECHO_H

#include <stddef.h>
#include <stdio.h>

/* n round trips of size-byte messages; prints one line on out. Returns an
 * FBF_EXIT_* code. */
int fbf_echo_bench(size_t n, size_t size, FILE *out);

#endif
