/*
 * RFC 6455 client side: the HTTP upgrade with Basic credentials, the check of the server's
 * answer, masked client frames, and an incremental decoder for server frames that reassembles
 * fragmented messages into a caller-owned buffer. No heap, no sockets: bytes in, bytes out.
 */
#ifndef SDK_WS_H
#define SDK_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------- building blocks */

void sdk_sha1(const uint8_t *data, size_t len, uint8_t out[20]);
/* Standard base64 with padding; returns the length written (NUL-terminated), 0 when cap is short. */
size_t sdk_base64_encode(const uint8_t *in, size_t len, char *out, size_t cap);

/* ---------------- the upgrade */

#define SDK_WS_KEY_LEN 24 /* base64 of a 16-byte nonce */

/*
 * Writes the upgrade request for `path` on `host_header` (host, or host:port, as the Host header
 * carries it) with `Authorization: Basic base64(device_id:secret)`. key_out receives the
 * Sec-WebSocket-Key (base64 of nonce, NUL-terminated). The request is NUL-terminated. Returns the
 * request length, 0 when it does not fit in cap or an argument is unusable (an empty device id or
 * one with ':', a path not starting with '/', control characters that would break the header).
 */
size_t sdk_ws_build_upgrade(char *out, size_t cap, const char *host_header, const char *path,
                            const char *device_id, const char *secret, const uint8_t nonce[16],
                            char key_out[SDK_WS_KEY_LEN + 1]);

typedef enum {
  SDK_WS_HS_INCOMPLETE,   /* the header block has not ended yet: read more */
  SDK_WS_HS_SWITCHED,     /* 101 with Upgrade, Connection and a matching Sec-WebSocket-Accept */
  SDK_WS_HS_UNAUTHORIZED, /* 401: the credentials are refused */
  SDK_WS_HS_REFUSED,      /* another status */
  SDK_WS_HS_INVALID       /* not HTTP, a header block over the buffer, or a 101 that fails a check */
} sdk_ws_hs_status;

typedef struct {
  int status;              /* the HTTP status, 0 when none could be read */
  uint32_t retry_after_s;  /* Retry-After in seconds (0 when absent or not a number) */
  size_t header_len;       /* bytes of the header block, CRLFCRLF included: frames start after it */
  const char *problem;     /* for INVALID: what was wrong, a static string */
} sdk_ws_handshake;

sdk_ws_hs_status sdk_ws_parse_upgrade_response(const char *buf, size_t len, const char *key,
                                               sdk_ws_handshake *out);

/* ---------------- frames */

enum {
  SDK_WS_OP_CONTINUATION = 0x0,
  SDK_WS_OP_TEXT = 0x1,
  SDK_WS_OP_BINARY = 0x2,
  SDK_WS_OP_CLOSE = 0x8,
  SDK_WS_OP_PING = 0x9,
  SDK_WS_OP_PONG = 0xA
};

#define SDK_WS_MAX_HEADER 14

/* Writes the header of one final, masked client frame (FIN set); returns its length (6, 8 or 14).
 * payload_len must stay below 2^63 (RFC 6455 §5.2). */
size_t sdk_ws_frame_header(uint8_t out[SDK_WS_MAX_HEADER], uint8_t opcode, uint64_t payload_len,
                           const uint8_t mask[4]);
/* XORs payload with the mask (RFC 6455 §5.3), in place. */
void sdk_ws_mask(uint8_t *payload, size_t len, const uint8_t mask[4]);
/* A close payload: the code big-endian, then the reason cut to fit 123 bytes. Returns its length. */
size_t sdk_ws_close_payload(uint8_t out[125], uint16_t code, const char *reason);

typedef enum {
  SDK_WS_EV_NONE,   /* all input consumed, no complete message yet */
  SDK_WS_EV_TEXT,   /* a whole text message (valid UTF-8) in data/len */
  SDK_WS_EV_BINARY, /* a whole binary message */
  SDK_WS_EV_PING,   /* data/len: the ping payload (≤ 125 bytes), to be echoed in a pong */
  SDK_WS_EV_PONG,
  SDK_WS_EV_CLOSE,  /* close_code (1005 when none was given), data/len: the reason */
  SDK_WS_EV_ERROR   /* the stream broke the protocol: send close with close_code, then drop */
} sdk_ws_event_kind;

typedef struct {
  sdk_ws_event_kind kind;
  const uint8_t *data; /* valid until the next sdk_ws_decode call */
  size_t len;
  uint16_t close_code; /* CLOSE: the peer's code; ERROR: 1002, 1007 (bad UTF-8) or 1009 (too big) */
  const char *problem; /* ERROR: what was wrong, a static string */
} sdk_ws_event;

typedef struct {
  /* caller-owned message buffer: whole messages up to msg_cap bytes are reassembled here */
  uint8_t *msg;
  size_t msg_cap;
  size_t msg_len;
  uint8_t msg_opcode; /* TEXT/BINARY while a message (fragmented or not) is being read, else 0 */
  /* the frame being read */
  uint8_t hdr[SDK_WS_MAX_HEADER];
  size_t hdr_len;
  size_t hdr_need;
  uint8_t opcode;
  bool fin;
  uint64_t payload_len;
  uint64_t payload_read;
  uint8_t ctrl[125];
  bool failed; /* after an ERROR every later call answers ERROR again */
  uint16_t fail_code;
  const char *fail_problem;
} sdk_ws_decoder;

void sdk_ws_decoder_init(sdk_ws_decoder *d, uint8_t *msg_buf, size_t msg_cap);
/*
 * Consumes bytes from in[0..len) until one event is complete (or the input ends) and returns how
 * many it consumed; *ev says what, if anything, completed. Call again with the rest. A frame whose
 * declared length makes the message exceed msg_cap is an ERROR (1009) as soon as its header is read.
 * After an ERROR every later call consumes nothing (returns 0) and answers the same ERROR.
 */
size_t sdk_ws_decode(sdk_ws_decoder *d, const uint8_t *in, size_t len, sdk_ws_event *ev);

#endif /* SDK_WS_H */
