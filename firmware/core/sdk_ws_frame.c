/* RFC 6455 §5: masked client frames out, and an incremental decoder for the server's frames. */
#include <string.h>

#include "sdk_utf8.h"
#include "sdk_ws.h"

#define MAX_CONTROL_PAYLOAD 125u
#define MAX_CLOSE_REASON 123u

size_t sdk_ws_frame_header(uint8_t out[SDK_WS_MAX_HEADER], uint8_t opcode, uint64_t payload_len,
                           const uint8_t mask[4]) {
  size_t n = 0;
  out[n++] = (uint8_t)(0x80u | (opcode & 0x0Fu));
  if (payload_len < 126) {
    out[n++] = (uint8_t)(0x80u | payload_len);
  } else if (payload_len <= 0xFFFFu) {
    out[n++] = 0x80u | 126u;
    out[n++] = (uint8_t)(payload_len >> 8);
    out[n++] = (uint8_t)payload_len;
  } else {
    out[n++] = 0x80u | 127u;
    for (unsigned i = 0; i < 8; i++) out[n++] = (uint8_t)(payload_len >> (56 - 8 * i));
  }
  for (unsigned i = 0; i < 4; i++) out[n++] = mask[i];
  return n;
}

void sdk_ws_mask(uint8_t *payload, size_t len, const uint8_t mask[4]) {
  for (size_t i = 0; i < len; i++) payload[i] ^= mask[i & 3u];
}

size_t sdk_ws_close_payload(uint8_t out[125], uint16_t code, const char *reason) {
  out[0] = (uint8_t)(code >> 8);
  out[1] = (uint8_t)code;
  size_t n = reason ? strlen(reason) : 0;
  if (n > MAX_CLOSE_REASON) {
    n = MAX_CLOSE_REASON;
    /* back up to the first byte of the character that would be cut */
    while (n > 0 && ((unsigned char)reason[n] & 0xC0u) == 0x80u) n--;
  }
  if (n > 0) memcpy(out + 2, reason, n);
  return n + 2;
}

/* ---------------- decoding */


static bool is_valid_close_code(uint16_t code) {
  if (code >= 3000 && code <= 4999) return true;
  if (code < 1000 || code > 1014) return false;
  /* 1004 reserved, 1005 and 1006 never on the wire; 1012-1014 are IANA-registered */
  return code != 1004 && code != 1005 && code != 1006;
}

static bool is_control(uint8_t opcode) { return (opcode & 0x08u) != 0; }

void sdk_ws_decoder_init(sdk_ws_decoder *d, uint8_t *msg_buf, size_t msg_cap) {
  memset(d, 0, sizeof *d);
  d->msg = msg_buf;
  d->msg_cap = msg_buf ? msg_cap : 0;
  d->hdr_need = 2;
}

static void fail_event(const sdk_ws_decoder *d, sdk_ws_event *ev) {
  ev->kind = SDK_WS_EV_ERROR;
  ev->data = NULL;
  ev->len = 0;
  ev->close_code = d->fail_code;
  ev->problem = d->fail_problem;
}

static bool fail(sdk_ws_decoder *d, uint16_t code, const char *problem, sdk_ws_event *ev) {
  d->failed = true;
  d->fail_code = code;
  d->fail_problem = problem;
  fail_event(d, ev);
  return false;
}

/* The first two header bytes: everything but the extended length. */
static bool check_start(sdk_ws_decoder *d, sdk_ws_event *ev) {
  uint8_t b0 = d->hdr[0], b1 = d->hdr[1];
  d->fin = (b0 & 0x80u) != 0;
  d->opcode = b0 & 0x0Fu;
  uint8_t len7 = b1 & 0x7Fu;
  if (b0 & 0x70u) return fail(d, 1002, "reserved bits set without an extension", ev);
  if (b1 & 0x80u) return fail(d, 1002, "a masked frame from the server", ev);
  switch (d->opcode) {
    case SDK_WS_OP_CONTINUATION:
      if (d->msg_opcode == 0) return fail(d, 1002, "a continuation without a message", ev);
      break;
    case SDK_WS_OP_TEXT:
    case SDK_WS_OP_BINARY:
      if (d->msg_opcode != 0) return fail(d, 1002, "a new message inside a fragmented one", ev);
      break;
    case SDK_WS_OP_CLOSE:
    case SDK_WS_OP_PING:
    case SDK_WS_OP_PONG:
      if (!d->fin) return fail(d, 1002, "a fragmented control frame", ev);
      if (len7 > MAX_CONTROL_PAYLOAD) return fail(d, 1002, "a control frame over 125 bytes", ev);
      break;
    default:
      return fail(d, 1002, "an unknown opcode", ev);
  }
  d->hdr_need = len7 == 126 ? 4 : len7 == 127 ? 10 : 2;
  return true;
}

/* The whole header is in: the payload length and what the frame does to the message. */
static bool check_length(sdk_ws_decoder *d, sdk_ws_event *ev) {
  uint8_t len7 = d->hdr[1] & 0x7Fu;
  uint64_t n = len7;
  if (len7 >= 126) {
    n = 0;
    for (size_t i = 2; i < d->hdr_need; i++) n = n << 8 | d->hdr[i];
    if (n >> 63) return fail(d, 1002, "a 64-bit length with the top bit set", ev);
  }
  d->payload_len = n;
  d->payload_read = 0;
  if (is_control(d->opcode)) return true;
  if (n > (uint64_t)(d->msg_cap - d->msg_len)) {
    return fail(d, 1009, "a message larger than the buffer", ev);
  }
  if (d->opcode != SDK_WS_OP_CONTINUATION) d->msg_opcode = d->opcode;
  return true;
}

static void control_event(sdk_ws_decoder *d, sdk_ws_event *ev) {
  size_t n = (size_t)d->payload_len;
  ev->data = d->ctrl;
  ev->len = n;
  if (d->opcode == SDK_WS_OP_PING) {
    ev->kind = SDK_WS_EV_PING;
    return;
  }
  if (d->opcode == SDK_WS_OP_PONG) {
    ev->kind = SDK_WS_EV_PONG;
    return;
  }
  if (n == 0) {
    ev->kind = SDK_WS_EV_CLOSE;
    ev->close_code = 1005;
    return;
  }
  if (n == 1) {
    fail(d, 1002, "a close payload of one byte", ev);
    return;
  }
  uint16_t code = (uint16_t)(d->ctrl[0] << 8 | d->ctrl[1]);
  if (!is_valid_close_code(code)) {
    fail(d, 1002, "an invalid close code", ev);
    return;
  }
  if (!sdk_utf8_valid(d->ctrl + 2, n - 2)) {
    fail(d, 1007, "a close reason that is not UTF-8", ev);
    return;
  }
  ev->kind = SDK_WS_EV_CLOSE;
  ev->close_code = code;
  ev->data = d->ctrl + 2;
  ev->len = n - 2;
}

/* A final data frame ended: the message is whole. It stays in msg until the next call. */
static void message_event(sdk_ws_decoder *d, sdk_ws_event *ev) {
  uint8_t opcode = d->msg_opcode;
  size_t n = d->msg_len;
  d->msg_opcode = 0;
  d->msg_len = 0;
  if (opcode == SDK_WS_OP_TEXT && !sdk_utf8_valid(d->msg, n)) {
    fail(d, 1007, "a text message that is not UTF-8", ev);
    return;
  }
  ev->kind = opcode == SDK_WS_OP_TEXT ? SDK_WS_EV_TEXT : SDK_WS_EV_BINARY;
  ev->data = d->msg;
  ev->len = n;
}

size_t sdk_ws_decode(sdk_ws_decoder *d, const uint8_t *in, size_t len, sdk_ws_event *ev) {
  ev->kind = SDK_WS_EV_NONE;
  ev->data = NULL;
  ev->len = 0;
  ev->close_code = 0;
  ev->problem = NULL;
  if (d->failed) {
    fail_event(d, ev);
    return 0;
  }
  size_t used = 0;
  for (;;) {
    if (d->hdr_len < d->hdr_need) {
      if (used == len) return used;
      d->hdr[d->hdr_len++] = in[used++];
      if (d->hdr_len == 2 && !check_start(d, ev)) return used;
      if (d->hdr_len < d->hdr_need) continue;
      if (!check_length(d, ev)) return used;
    }
    if (d->payload_read < d->payload_len) {
      if (used == len) return used;
      uint64_t want = d->payload_len - d->payload_read;
      size_t n = len - used;
      if ((uint64_t)n > want) n = (size_t)want;
      if (is_control(d->opcode)) {
        memcpy(d->ctrl + d->payload_read, in + used, n);
      } else {
        memcpy(d->msg + d->msg_len, in + used, n);
        d->msg_len += n;
      }
      d->payload_read += n;
      used += n;
      if (d->payload_read < d->payload_len) return used;
    }
    /* the frame is complete */
    d->hdr_len = 0;
    d->hdr_need = 2;
    if (is_control(d->opcode)) {
      control_event(d, ev);
      return used;
    }
    if (d->fin) {
      message_event(d, ev);
      return used;
    }
  }
}
