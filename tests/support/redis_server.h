/*
 * redis_server: a real, private redis-server (Debian's) for the Redis-mode
 * tests.
 *
 * fbf_test_redis_start() picks a free loopback port (by binding port 0,
 * as the ZeroMQ tests do), starts `redis-server --port P --bind 127.0.0.1
 * --save '' --appendonly no --dir <temp dir>` (nothing persisted; its log
 * goes to a file in the temp dir), and waits until it answers PING; a
 * server that lost the race for its port is started again on another
 * one, so parallel ctest runs do not clash. fbf_test_redis_stop() kills
 * it and removes the temp dir; servers still alive at exit are killed too.
 *
 * A missing redis-server is a failure with a message saying how to get it
 * (CI installs it through tools/install-deps.sh), never a skipped test.
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is
 * linked into every test.
 */
#ifndef FBF_TEST_REDIS_SERVER_H
#define FBF_TEST_REDIS_SERVER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct fbf_test_redis {
    pid_t pid;     /* -1 once stopped */
    int port;
    char dir[64];  /* its working dir and log */
} fbf_test_redis;

/* 0, or -1 with the reason on stderr (no redis-server, no answer). */
int fbf_test_redis_start(fbf_test_redis *r);
void fbf_test_redis_stop(fbf_test_redis *r);

/* cmocka group setup / teardown around one shared server, and it. */
int fbf_test_redis_group_setup(void **state);
int fbf_test_redis_group_teardown(void **state);
fbf_test_redis *fbf_test_redis_shared(void);

/* Plain commands on the server, failing the running test on error:
 * SET key value; GET key (malloc'ed, NULL when absent); FLUSHALL. */
void fbf_test_redis_set(const fbf_test_redis *r, const char *key, const char *value);
char *fbf_test_redis_get(const fbf_test_redis *r, const char *key);
void fbf_test_redis_flush(const fbf_test_redis *r);

/* "HOST:PORT" of the server (static buffer). */
const char *fbf_test_redis_addr(const fbf_test_redis *r);

/* A loopback port nothing listens on (bound to 0 then closed), for the
 * "unreachable server" cases. */
int fbf_test_redis_dead_port(void);

#endif
