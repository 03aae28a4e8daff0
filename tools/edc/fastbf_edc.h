/*
 * fastbf_edc.h: libfastbf-edc, fastbf as a Batsim 5 External Decision
 * Component, for a host that loads it as Batsim 5 does (dlopen, or linked
 * with `pkg-config --libs fastbf-edc`). The three functions are Batsim 5's
 * EDC API; the library exports nothing else.
 *
 * batsim_edc_init: init_data is the init string, a JSON object of
 * fastbf's options under their command-line names (README, "With Batsim
 * 5"), init_size bytes, not NUL-terminated; an empty one takes the
 * defaults. On success (0), *flags is the format of every later message
 * (0x2 JSON, 0x1 flatbuffers binary) and *reply_data (reply_size bytes,
 * the library's, valid until its next call) is the EDCHelloEvent message.
 * Non-zero: an unknown key or bad value, said in one line on stderr.
 *
 * batsim_edc_take_decisions: one message of Batsim's in that format;
 * *decisions (the library's, valid until its next call) is fastbf's reply.
 * Non-zero: a message fastbf cannot go on from, said on stderr; the
 * decisions then hold a ForceSimulationStopEvent when they can.
 *
 * batsim_edc_deinit: frees everything; init may be called again after it.
 * One EDC per loaded copy of the library (Batsim's dlmopen keeps copies
 * apart); calls must not overlap.
 */
#ifndef FASTBF_EDC_H
#define FASTBF_EDC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exported from a library built with hidden visibility. */
#define FASTBF_EDC_API __attribute__((visibility("default")))

FASTBF_EDC_API uint8_t batsim_edc_init(const uint8_t *init_data, uint32_t init_size, uint32_t *flags,
                        uint8_t **reply_data, uint32_t *reply_size);
FASTBF_EDC_API uint8_t batsim_edc_take_decisions(const uint8_t *what_happened, uint32_t what_happened_size,
                                  uint8_t **decisions, uint32_t *decisions_size);
FASTBF_EDC_API uint8_t batsim_edc_deinit(void);

#ifdef __cplusplus
}
#endif

#endif
