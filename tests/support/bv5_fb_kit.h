/*
 * bv5_fb_kit: Batsim's side of batprotocol's binary format for the tests,
 * built with the C++ code flatc generates from io/batprotocol.fbs: the
 * messages Batsim sends (well-formed, or broken on purpose: members
 * left out, an event labelled with another type), and the EDC's replies
 * read back as one line per decision, the form the tests compare.
 *
 * A message is started, filled with events in order, then finished; the
 * bytes stay the kit's until the next start. Errors abort the test (a kit
 * that cannot build its input has nothing to say).
 */
#ifndef FBF_TEST_BV5_FB_KIT_H
#define FBF_TEST_BV5_FB_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fbf_test_fbmsg fbf_test_fbmsg;

/* What an event leaves out (a required member, for the verifier to see). */
enum {
    FBF_TEST_FB_NO_JOB_ID = 1,  /* JobSubmittedEvent, JobCompletedEvent */
    FBF_TEST_FB_NO_JOB = 2,     /* JobSubmittedEvent */
    FBF_TEST_FB_NO_CONTEXT = 4, /* SimulationBeginsEvent: batsim_execution_context_json */
    FBF_TEST_FB_NO_NAME = 8,    /* SimulationBeginsEvent: the hosts' names */
    FBF_TEST_FB_NO_TABLE = 16,  /* any: the union's type without its table */
};

fbf_test_fbmsg *fbf_test_fbmsg_new(void);
void fbf_test_fbmsg_free(fbf_test_fbmsg *m);

void fbf_test_fbmsg_start(fbf_test_fbmsg *m, double now);
/* The Event union's number of a type name (-1: none such). */
int fbf_test_fb_event_type(const char *name);
/* The next event goes out labelled type (a number, maybe beyond the
 * schema), whatever table it holds. */
void fbf_test_fbmsg_relabel(fbf_test_fbmsg *m, int type);
void fbf_test_fbmsg_omit(fbf_test_fbmsg *m, unsigned what);

/* nb_hosts hosts 0..n-1 (nb_listed of them listed; 0: the count alone),
 * each IDLE unless states gives its HostState number; sleep_pstates: the
 * property of every listed host (NULL: none). */
void fbf_test_fbmsg_begins(fbf_test_fbmsg *m, double ts, uint32_t nb_hosts, uint32_t nb_listed,
                           const int *states, const char *sleep_pstates);
/* walltime NAN: left out (none). */
void fbf_test_fbmsg_submitted(fbf_test_fbmsg *m, double ts, const char *id, uint32_t res,
                              double walltime, double subtime);
void fbf_test_fbmsg_completed(fbf_test_fbmsg *m, double ts, const char *id, int state);
void fbf_test_fbmsg_killed(fbf_test_fbmsg *m, double ts, const char *const *ids, size_t n);
void fbf_test_fbmsg_called(fbf_test_fbmsg *m, double ts, const char *call_id);
/* An event whose table is empty (or unused), by type name. */
void fbf_test_fbmsg_empty(fbf_test_fbmsg *m, double ts, const char *type);
void fbf_test_fbmsg_pstate(fbf_test_fbmsg *m, double ts, const char *hosts, uint32_t pstate);
void fbf_test_fbmsg_onoff(fbf_test_fbmsg *m, double ts, const char *hosts, uint32_t state);
/* no_events: the message has no events vector at all. */
const uint8_t *fbf_test_fbmsg_finish(fbf_test_fbmsg *m, bool no_events, size_t *len);

/* An EDC's binary message as lines, appended to out (NUL-terminated):
 *   E <job> <hosts> | R <job> | K <job>... | C <ms> | P <hosts> <pstate> |
 *   F (ForceSimulationStopEvent) | H <name> <features: d when dynamic> |
 *   J <job> <res> <walltime> <profile> | D <profile> <delay> | Z (finish registration)
 * C gives the call's time in whole milliseconds. Returns the now of the
 * message, NAN when it does not verify. */
double fbf_test_fb_lines(const uint8_t *buf, size_t len, char *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
