/*
 * v2_sched: a scheduler of the Batsim v2 text protocol for the tests of
 * fastbf-replay --protocol batsim2, written from the protocol's text alone
 * (no fastbf io/ code): it connects to the replayer's Unix socket (retrying
 * until the replayer listens), reads size-prefixed frames and answers each.
 *
 *   FCFS    nb_res from Redis at A; each S's job_<id> read from Redis (its
 *           res; profile_<id> must be there too); the waiting jobs start in
 *           submission order on the lowest free machines while the first
 *           fits, all in one J at the message's time (else N). It fails
 *           (the run's reply is then "X", which the replayer refuses) when
 *           a key is missing.
 *   script  the k-th message (A is 0) gets replies[k] verbatim but for
 *           "$now", the message's time as it was printed; "@HUGE" sends a
 *           size prefix of 0xfffffff0 and nothing else; past the list,
 *           "2:$now|$now:N".
 * Both stop after the reply to a message carrying Z, or when the replayer
 * closes the socket. Every message received is kept, one per line.
 *
 * fbf_test_v2s_main(): the FCFS one run in the calling thread (a test
 * binary started by --scheduler runs it as its whole main).
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is
 * linked into every test.
 */
#ifndef FBF_TEST_V2_SCHED_H
#define FBF_TEST_V2_SCHED_H

typedef struct fbf_test_v2s fbf_test_v2s;

fbf_test_v2s *fbf_test_v2s_fcfs(const char *socket_path, int redis_port);
fbf_test_v2s *fbf_test_v2s_script(const char *socket_path, const char *const *replies);

/* Call once the replayer has ended: ends the scheduler (a read of its
 * closed socket, or a connect that never came), and returns the messages
 * it received, one per line (malloc'ed). */
char *fbf_test_v2s_stop(fbf_test_v2s *s);

/* FCFS in this thread; 0 after Z, 1 on any failure (said on stderr). */
int fbf_test_v2s_main(const char *socket_path, int redis_port);

#endif
