/*
 * bv4_bad_cases: the Batsim v4 messages fastbf must refuse (see
 * bv4_bad_cases.h).
 */
#include "support/bv4_bad_cases.h"


#define X10(s) s s s s s s s s s s
#define X100(s) X10(X10(s))
#define X900(s) X100(s) X100(s) X100(s) X100(s) X100(s) X100(s) X100(s) X100(s) X100(s)
#define X1000(s) X10(X100(s))

const fbf_test_bad_case fbf_test_bv4_bad_cases[] = {
    /* envelope */
    {L_FRESH, "{'now':0,", "malformed JSON message near byte *"},
    {L_BEGUN, "", "malformed JSON message near byte *"},
    {L_BEGUN, "{'now':1,'events':[}", "malformed JSON message near byte *"},
    {L_BEGUN, "[1,2]", "message: expected a JSON object, got an array"},
    {L_BEGUN, "'now'", "message: expected a JSON object, got a string"},
    {L_BEGUN, "{'events':[]}", "message: now: expected a finite number, got nothing"},
    {L_BEGUN, "{'now':'1','events':[]}", "message: now: expected a finite number, got a string"},
    {L_BEGUN, "{'now':null,'events':[]}", "message: now: expected a finite number, got null"},
    {L_BEGUN, "{'now':1}", "message: events: expected an array, got nothing"},
    {L_BEGUN, "{'now':1,'events':{}}", "message: events: expected an array, got an object"},
    /* one reading of each message */
    {L_BEGUN, "{'now':1,'events':[],'now':2}", "duplicate key \"now\" (one member named twice)"},
    {L_BEGUN, MSG(1, EV(1, "JOB_COMPLETED", "{'job_id':'w0!1','job_id':'w0!2'}")),
     "duplicate key \"job_id\" in \"data\" (one member named twice)"},
    {L_BEGUN, MSG(1, EV(1, "JOB_COMPLETED", "{'job_id':'w0!1\\u0000garbage'}")),
     "a string holds \\u0000 (a NUL byte) near byte 79"},
    /* events */
    {L_BEGUN, MSG(1, "42"), "event 0: expected an object, got a number"},
    {L_BEGUN, MSG(1, EV(1, "REQUESTED_CALL", "{}") ",[]"),
     "event 1: expected an object, got an array"},
    {L_BEGUN, MSG(1, "{'timestamp':1,'data':{}}"), "event 0: type: expected a string, got nothing"},
    {L_BEGUN, MSG(1, "{'timestamp':1,'type':7,'data':{}}"),
     "event 0: type: expected a string, got a number"},
    {L_BEGUN, MSG(1, EV(1, "JOB_EXPLODED", "{}")),
     "event 0 (JOB_EXPLODED): type: unknown event type"},
    {L_BEGUN, MSG(1, EV(1, "EXECUTE_JOB", "{'job_id':'w0!1','alloc':'0'}")),
     "event 0 (EXECUTE_JOB): type: this event goes from the scheduler to Batsim, not the other "
     "way"},
    {L_BEGUN, MSG(1, EV(1, "CALL_ME_LATER", "{'timestamp':5}")),
     "event 0 (CALL_ME_LATER): type: this event goes from the scheduler to Batsim, not the "
     "other way"},
    {L_BEGUN, MSG(1, "{'type':'REQUESTED_CALL','data':{}}"),
     "event 0 (REQUESTED_CALL): timestamp: expected a finite number, got nothing"},
    {L_BEGUN, MSG(1, "{'timestamp':'1','type':'REQUESTED_CALL','data':{}}"),
     "event 0 (REQUESTED_CALL): timestamp: expected a finite number, got a string"},
    {L_BEGUN, MSG(1, EV(2, "REQUESTED_CALL", "{}")),
     "event 0 (REQUESTED_CALL): timestamp: 2.000000 is after now 1.000000"},
    {L_BEGUN, MSG(1, EV(1, "REQUESTED_CALL", "{}") "," EV(0.5, "REQUESTED_CALL", "{}")),
     "event 1 (REQUESTED_CALL): timestamp: 0.500000 is before the previous event's 1.000000"},
    {L_BEGUN, MSG(1, EV(1, "REQUESTED_CALL", "[]")),
     "event 0 (REQUESTED_CALL): data: expected an object, got an array"},
    {L_BEGUN, MSG(1, "{'timestamp':1,'type':'REQUESTED_CALL'}"),
     "event 0 (REQUESTED_CALL): data: expected an object, got nothing"},
    {L_BEGUN, MSG(1, EV(1, "SIMULATION_ENDS", "null")),
     "event 0 (SIMULATION_ENDS): data: expected an object, got null"},
    /* SIMULATION_BEGINS */
    {L_FRESH, MSG(0, ""), "message: the first message must hold SIMULATION_BEGINS"},
    {L_FRESH, MSG(0, EV(0, "JOB_SUBMITTED", JOB("w0!1", ",'res':1"))),
     "event 0 (JOB_SUBMITTED): received before SIMULATION_BEGINS"},
    {L_FRESH, MSG(0, EV(0, "REQUESTED_CALL", "{}") "," EV(0, "SIMULATION_BEGINS",
                                                          "{'nb_resources':4}")),
     "event 0 (REQUESTED_CALL): received before SIMULATION_BEGINS"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_compute_resources':4}")),
     "event 0 (SIMULATION_BEGINS): data.nb_resources: expected an integer in [1, 2^31], got nothing"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':0}")),
     "event 0 (SIMULATION_BEGINS): data.nb_resources: expected an integer in [1, 2^31], got a number"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':'4'}")),
     "event 0 (SIMULATION_BEGINS): data.nb_resources: expected an integer in [1, 2^31], got a string"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':2.5}")),
     "event 0 (SIMULATION_BEGINS): data.nb_resources: expected an integer in [1, 2^31], got a number"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'nb_compute_resources':5}")),
     "event 0 (SIMULATION_BEGINS): data.nb_compute_resources: expected an integer in [1, "
     "nb_resources], got a number"},
    {L_FRESH,
     MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'nb_compute_resources':4,"
                                       "'compute_resources':[{'id':0},{'id':1},{'id':2}]}")),
     "event 0 (SIMULATION_BEGINS): data.compute_resources: 3 entries for nb_compute_resources 4"},
    {L_FRESH,
     MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'compute_resources':[{'id':0},"
                                       "{'name':'x'}]}")),
     "event 0 (SIMULATION_BEGINS): data.compute_resources[].id: expected a resource number below nb_resources, got "
     "nothing"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'compute_resources':{}}")),
     "event 0 (SIMULATION_BEGINS): data.compute_resources: expected an array, got an object"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'config':[]}")),
     "event 0 (SIMULATION_BEGINS): data.config: expected an object, got an array"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'config':{'redis-enabled':"
                                                "'yes'}}")),
     "event 0 (SIMULATION_BEGINS): data.config.redis-enabled: expected true or false, got a "
     "string"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'config':{'job_submission':"
                                                "{'from_scheduler':{'enabled':1}}}}")),
     "event 0 (SIMULATION_BEGINS): data.config.job_submission.from_scheduler.enabled: expected "
     "true or false, got a number"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'config':{"
                                                "'profile-reuse-enabled':'true'}}")),
     "event 0 (SIMULATION_BEGINS): data.config.profile-reuse-enabled: expected true or false, "
     "got a string"},
    {L_FRESH,
     MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':2,'compute_resources':[{'id':0},"
                                       "{'id':0}]}")),
     "event 0 (SIMULATION_BEGINS): data.compute_resources: id 0 listed twice"},
    {L_FRESH,
     MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4}") "," EV(
                0, "SIMULATION_BEGINS", "{'nb_resources':4}")),
     "event 1 (SIMULATION_BEGINS): the simulation already began"},
    {L_BEGUN, MSG(1, EV(1, "SIMULATION_BEGINS", "{'nb_resources':4}")),
     "event 0 (SIMULATION_BEGINS): the simulation already began"},
    /* JOB_SUBMITTED */
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", "{'job':{'id':'w0!1','res':1}}")),
     "event 0 (JOB_SUBMITTED): data.job_id: expected a string, got nothing"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':5,'job':{'res':1}}")),
     "event 0 (JOB_SUBMITTED): data.job_id: expected a string, got a number"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':'w0!1'}")),
     "event 0 (JOB_SUBMITTED): data.job: expected an object (fastbf needs job descriptions), "
     "got nothing"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'walltime':5"))),
     "event 0 (JOB_SUBMITTED): data.job.res: expected an integer, got nothing"},
    {L_BEGUN,
     MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!0", ",'res':1")) "," EV(
                 11, "JOB_SUBMITTED", JOB("w0!1", ",'res':'1'"))),
     "event 1 (JOB_SUBMITTED): data.job.res: expected an integer, got *"},
    /* JSON nested as deep as the parser goes, and deeper: its recursion
     * must fit the stack of the thread that parses (a streamed message's
     * is a helper thread's, with a smaller stack than the main one's). */
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'res':" X900("[") X900("]")))),
     "event 0 (JOB_SUBMITTED): data.job.res: expected an integer, got *"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'res':" X1000("[") X1000("]")))),
     "malformed JSON message near byte *"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'res':1.5"))),
     "event 0 (JOB_SUBMITTED): data.job.res: expected an integer, got a number"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'res':1,'walltime':'100'"))),
     "event 0 (JOB_SUBMITTED): data.job.walltime: expected a number, got a string"},
    {L_BEGUN,
     MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':'w0!1','job':{'id':'w0!1','res':1,'subtime':"
                                     "'0'}}")),
     "event 0 (JOB_SUBMITTED): data.job.subtime: expected a number, got a string"},
    {L_BEGUN,
     MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':'w0!1','job':{'id':'w0!2','res':1}}")),
     "event 0 (JOB_SUBMITTED): data.job.id: \"w0!2\" differs from job_id \"w0!1\""},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':'w0!1','job':{'id':7,'res':1}}")),
     "event 0 (JOB_SUBMITTED): data.job.id: expected a string, got a number"},
    {L_BEGUN,
     MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'res':1")) "," EV(
                 11, "JOB_SUBMITTED", "{'job_id':'w0!1','job':{'res':2}}")),
     "event 1 (JOB_SUBMITTED): data.job_id: job w0!1 submitted twice"},
    {L_JOBS, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!2", ",'res':1,'walltime':5"))),
     "event 0 (JOB_SUBMITTED): data.job_id: job w0!2 submitted twice"},
    /* JOB_COMPLETED */
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!9','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'0'}")),
     "event 0 (JOB_COMPLETED): data.job_id: unknown job w0!9"},
    {L_JOBS, MSG(11, EV(11, "JOB_COMPLETED", "{'job_state':'COMPLETED_SUCCESSFULLY'}")),
     "event 0 (JOB_COMPLETED): data.job_id: expected a string, got nothing"},
    {L_JOBS, MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'DONE'}")),
     "event 0 (JOB_COMPLETED): data.job_state: unknown state \"DONE\""},
    {L_JOBS, MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1'}")),
     "event 0 (JOB_COMPLETED): data.job_state: expected a string, got nothing"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_FAILED',"
                                     "'return_code':'1'}")),
     "event 0 (JOB_COMPLETED): data.return_code: expected an integer, got a string"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_FAILED',"
                                     "'alloc':[0,1]}")),
     "event 0 (JOB_COMPLETED): data.alloc: expected an interval set string, got an array"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!2','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0}")),
     "event 0 (JOB_COMPLETED): data.job_id: job w0!2 ended but it is waiting, not running"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!2','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'0-3'}")),
     "event 0 (JOB_COMPLETED): data.job_id: job w0!2 ended but it is waiting, not running"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'alloc':'0-1'}") "," EV(11, "JOB_COMPLETED",
                                                               "{'job_id':'w0!1','job_state':"
                                                               "'COMPLETED_SUCCESSFULLY'}")),
     "event 1 (JOB_COMPLETED): data.job_id: job w0!1 ended but it is already finished, "
     "not running"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'2-3'}")),
     "event 0 (JOB_COMPLETED): data.alloc: job w0!1 ran on \"0-1\", not \"2-3\""},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'0'}")),
     "event 0 (JOB_COMPLETED): data.alloc: job w0!1 ran on \"0-1\", not \"0\""},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'0-'}")),
     "event 0 (JOB_COMPLETED): data.alloc: *"},
    /* JOB_KILLED */
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':'w0!1'}")),
     "event 0 (JOB_KILLED): data.job_ids: expected an array, got a string"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{}")),
     "event 0 (JOB_KILLED): data.job_ids: expected an array, got nothing"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1',3]}")),
     "event 0 (JOB_KILLED): data.job_ids[]: expected a string, got a number"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1','w0!9']}")),
     "event 0 (JOB_KILLED): data.job_ids: unknown job w0!9"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1'],'job_progress':[]}")),
     "event 0 (JOB_KILLED): data.job_progress: expected an object, got an array"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1'],'job_progress':{'w0!2':"
                                          "{'profile':'p','progress':0.5}}}")),
     "event 0 (JOB_KILLED): data.job_progress: job w0!2 is not in data.job_ids"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1'],'job_progress':{'w0!1':"
                                          "{'progress':0.5}}}")),
     "event 0 (JOB_KILLED): data.job_progress.w0!1.profile_name: expected a string, got nothing"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1'],'job_progress':{'w0!1':"
                                          "{'profile':'p','progress':1.5}}}")),
     "event 0 (JOB_KILLED): data.job_progress.w0!1.progress: expected a number in [0, 1], "
     "got a number"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1'],'job_progress':{'w0!1':"
                                          "{'profile':'s','current_task_index':-1,"
                                          "'current_task':{}}}}")),
     "event 0 (JOB_KILLED): data.job_progress.w0!1.current_task_index: expected an integer "
     ">= 0, got a number"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1'],'job_progress':{'w0!1':"
                                          "{'profile':'s','current_task_index':0,"
                                          "'current_task':{'profile':'t','current_task_index':1,"
                                          "'current_task':{'profile':'u'}}}}}")),
     "event 0 (JOB_KILLED): data.job_progress.w0!1.current_task.current_task.progress: "
     "expected a number in [0, 1], got nothing"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1'],'job_progress':{'w0!1':"
                                          "{'profile':'s','current_task_index':0,"
                                          "'current_task':7}}}")),
     "event 0 (JOB_KILLED): data.job_progress.w0!1.current_task: expected an object, got a "
     "number"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!2']}")),
     "event 0 (JOB_KILLED): data.job_ids: job w0!2 ended but it is waiting, not running"},
    /* RESOURCE_STATE_CHANGED */
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'resources':'1-','state':'0'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.resources: idset: bad token \"1-\" at offset 0: "
     "expected a decimal digit"},
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'resources':'3-1','state':'0'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.resources: idset: bad token \"3-1\" at offset 0: "
     "range end below its start"},
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'resources':'1  2','state':'0'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.resources: idset: empty token at offset 2 "
     "(leading, trailing or double space)"},
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'state':'0'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.resources: expected an interval set string, got "
     "nothing"},
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'resources':'1'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.state: expected a string, got nothing"},
    /* NOTIFY */
    {L_BEGUN, MSG(1, EV(1, "NOTIFY", "{'type':'bogus'}")),
     "event 0 (NOTIFY): data.type: unknown notification \"bogus\""},
    {L_BEGUN, MSG(1, EV(1, "NOTIFY", "{}")),
     "event 0 (NOTIFY): data.type: expected a string, got nothing"},
    /* QUERY */
    {L_BEGUN, MSG(1, EV(1, "QUERY", "{'requests':{'consumed_energy':{}}}")),
     "event 0 (QUERY): data.requests: unknown request \"consumed_energy\" (fastbf answers "
     "estimate_waiting_time)"},
    {L_BEGUN, MSG(1, EV(1, "QUERY", "{}")),
     "event 0 (QUERY): data.requests: expected an object, got nothing"},
    {L_BEGUN, MSG(1, EV(1, "QUERY", "{'requests':{'estimate_waiting_time':{'job':{'res':1}}}}")),
     "event 0 (QUERY): data.requests.estimate_waiting_time.job_id: expected a string, got "
     "nothing"},
    {L_BEGUN, MSG(1, EV(1, "QUERY", "{'requests':{'estimate_waiting_time':{'job_id':'q'}}}")),
     "event 0 (QUERY): data.requests.estimate_waiting_time.job: expected an object, got nothing"},
    {L_BEGUN,
     MSG(1, EV(1, "QUERY", "{'requests':{'estimate_waiting_time':{'job_id':'q','job':{"
                           "'res':'1'}}}}")),
     "event 0 (QUERY): data.requests.estimate_waiting_time.job.res: expected an integer, got *"},
    /* time going backwards between messages */
    {L_JOBS, MSG(5, EV(5, "REQUESTED_CALL", "{}")), "now: time goes backwards: now 5 after 10"},
};

const size_t fbf_test_bv4_nb_bad_cases =
    sizeof fbf_test_bv4_bad_cases / sizeof fbf_test_bv4_bad_cases[0];
