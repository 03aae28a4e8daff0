/*
 * bv5_fb_int: what the two halves of io/bv5_fb.h share (C++ only): the
 * writer's state and the checks every binary message goes through.
 */
#ifndef FBF_BV5_FB_INT_H
#define FBF_BV5_FB_INT_H

#include <memory>
#include <string>
#include <vector>

#include "flatbuffers/idl.h"
#include "io/batprotocol_generated.h"
#include "io/bv5_fb.h"

extern "C" {
#include "io/jbuf.h"
}

struct fbf_bv5_fb {
    flatbuffers::FlatBufferBuilder b{1 << 12};
    std::vector<flatbuffers::Offset<batprotocol::fb::EventAndTimestamp>> events;
    std::vector<flatbuffers::Offset<flatbuffers::String>> ids;
    fbf_jbuf scratch{};
    std::vector<uint64_t> copy;                  /* an aligned copy of a request */
    std::unique_ptr<flatbuffers::Parser> parser; /* loaded at the first conversion */
    unsigned refused = 0;                        /* texts the parser refused */
    std::string text;
};

/* buf itself when 8-byte aligned, else f's aligned copy of it. */
const uint8_t *fbf_bv5_fb_aligned(fbf_bv5_fb *f, const uint8_t *buf, size_t len);

/* Whether the (aligned) buffer is a Message that flatbuffers' Verifier
 * accepts; nothing else may be read from it before. */
bool fbf_bv5_fb_verified(const uint8_t *buf, size_t len);

#endif
