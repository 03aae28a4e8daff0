/*
 * pool: the worker threads and the hand-offs between them and the owner
 * (docs/threads.md lists every thread of the process).
 *
 * DESIGN. One owner thread (the engine's caller: fastbf's I/O thread)
 * drives N worker threads in phases:
 *
 *   - Between phases the owner posts 64-bit messages to worker w through
 *     w's single-producer single-consumer Concurrency Kit ring (the owner
 *     is the only producer, w the only consumer). Posting never blocks on
 *     a worker; a full ring first runs a drain phase.
 *   - fbf_pool_run(p, fn, arg) starts a phase: every worker drains its
 *     ring (applying each message with the apply callback), then runs
 *     fn(arg, w), then meets the others at a barrier; the owner returns
 *     once all N have arrived. fn == NULL is a pure drain.
 *
 * Ownership of data follows the phases: during a phase worker w owns its
 * partition (whatever the apply callback and fn touch for w); between
 * phases the owner owns everything and workers are parked. Shared data a
 * phase only reads (job records, a policy's profile) must not be written
 * by anyone during the phase. The phase hand-off goes through a mutex and
 * condition variables, which orders all memory before and after.
 *
 * Lock order: there is one mutex; nothing else is locked while holding it.
 *
 * With one worker the owner is the worker: no thread is started, a post
 * is applied at once (apply(ctx, 0, msg) on the owner's thread) and a
 * phase is a plain call, so a single-threaded engine pays for no ring,
 * wake-up or barrier.
 */
#ifndef FBF_POOL_H
#define FBF_POOL_H

#include <stdint.h>

typedef struct fbf_pool fbf_pool;

typedef void (*fbf_pool_apply_fn)(void *ctx, unsigned worker, uint64_t msg);
typedef void (*fbf_pool_phase_fn)(void *arg, unsigned worker);

/* NULL with errno set on failure (EINVAL for n == 0 or n > 256). */
fbf_pool *fbf_pool_create(unsigned n, fbf_pool_apply_fn apply, void *ctx);
/* Stops and joins the workers after draining their rings. NULL accepted. */
void fbf_pool_destroy(fbf_pool *p);

unsigned fbf_pool_size(const fbf_pool *p);

/* Owner only. Queues msg for worker w. */
void fbf_pool_post(fbf_pool *p, unsigned w, uint64_t msg);

/* Owner only. Runs one phase (see DESIGN) and waits for all workers. */
void fbf_pool_run(fbf_pool *p, fbf_pool_phase_fn fn, void *arg);

/* Owner only. Applies every posted message. Waking N threads costs tens
 * of microseconds, so fewer than `inline_below` pending messages are
 * applied by the owner itself (workers are parked between phases, so the
 * owner is then the rings' only consumer); more run a drain phase. */
void fbf_pool_sync(fbf_pool *p, unsigned inline_below);

/* Owner only, between phases: runs fn(arg, w) for every w on the calling
 * thread, for work too small to be worth waking the workers. */
void fbf_pool_run_inline(fbf_pool *p, fbf_pool_phase_fn fn, void *arg);

#endif
