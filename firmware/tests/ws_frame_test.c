/* RFC 6455 frames: masked client frames, close payloads and the incremental decoder. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "sdk_ws.h"

static const uint8_t MASK[4] = {0x37, 0xfa, 0x21, 0x3d};

/* A test-side reading of a client frame header: returns the header length, 0 when malformed. */
static size_t parse_client_header(const uint8_t *h, size_t n, uint8_t *opcode, uint64_t *len,
                                  uint8_t mask[4]) {
  if (n < 2 || !(h[0] & 0x80) || (h[0] & 0x70) || !(h[1] & 0x80)) return 0;
  *opcode = h[0] & 0x0F;
  size_t pos = 2;
  uint64_t l = h[1] & 0x7F;
  if (l == 126) {
    l = (uint64_t)h[2] << 8 | h[3];
    if (l < 126) return 0; /* not the shortest form */
    pos = 4;
  } else if (l == 127) {
    l = 0;
    for (int i = 0; i < 8; i++) l = l << 8 | h[2 + i];
    if (l <= 0xFFFF || (l >> 63)) return 0;
    pos = 10;
  }
  memcpy(mask, h + pos, 4);
  *len = l;
  return pos + 4 == n ? n : 0;
}

static void test_encode(void) {
  /* RFC 6455 §5.7: a masked "Hello" */
  uint8_t frame[SDK_WS_MAX_HEADER + 5];
  size_t n = sdk_ws_frame_header(frame, SDK_WS_OP_TEXT, 5, MASK);
  CHECK(n == 6);
  memcpy(frame + n, "Hello", 5);
  sdk_ws_mask(frame + n, 5, MASK);
  static const uint8_t hello[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
  CHECK(memcmp(frame, hello, sizeof hello) == 0);
  /* the masked pong of the same example */
  n = sdk_ws_frame_header(frame, SDK_WS_OP_PONG, 5, MASK);
  CHECK(n == 6 && frame[0] == 0x8a && frame[1] == 0x85);
  /* masking twice gives the original */
  sdk_ws_mask(frame + 6, 5, MASK);
  CHECK(memcmp(frame + 6, "Hello", 5) == 0);
  /* 256 and 65536 bytes */
  n = sdk_ws_frame_header(frame, SDK_WS_OP_BINARY, 256, MASK);
  static const uint8_t h256[] = {0x82, 0xFE, 0x01, 0x00, 0x37, 0xfa, 0x21, 0x3d};
  CHECK(n == 8 && memcmp(frame, h256, n) == 0);
  n = sdk_ws_frame_header(frame, SDK_WS_OP_BINARY, 65536, MASK);
  static const uint8_t h64k[] = {0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0, 0x37, 0xfa, 0x21, 0x3d};
  CHECK(n == 14 && memcmp(frame, h64k, n) == 0);

  /* round trips through the test-side parser */
  static const uint64_t lens[] = {0, 1, 125, 126, 127, 65535, 65536, 0xFFFFFFFFull, 0x7FFFFFFFFFFFFFFFull};
  static const uint8_t ops[] = {SDK_WS_OP_TEXT, SDK_WS_OP_BINARY, SDK_WS_OP_CLOSE, SDK_WS_OP_PING,
                                SDK_WS_OP_PONG};
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
    for (size_t j = 0; j < sizeof ops; j++) {
      uint8_t h[SDK_WS_MAX_HEADER];
      const uint8_t m[4] = {(uint8_t)i, (uint8_t)j, 0xAA, 0x55};
      size_t hn = sdk_ws_frame_header(h, ops[j], lens[i], m);
      uint8_t op = 0, got_mask[4];
      uint64_t len = 0;
      CHECK(parse_client_header(h, hn, &op, &len, got_mask) == hn);
      CHECK(op == ops[j] && len == lens[i] && memcmp(got_mask, m, 4) == 0);
      CHECK(hn == (lens[i] < 126 ? 6u : lens[i] <= 0xFFFF ? 8u : 14u));
    }
  }

  /* mask offsets past 4 */
  uint8_t data[9] = {0};
  sdk_ws_mask(data, 9, MASK);
  CHECK(data[4] == 0x37 && data[7] == 0x3d && data[8] == 0x37);
}

static void test_close_payload(void) {
  uint8_t p[125];
  CHECK(sdk_ws_close_payload(p, 1000, "") == 2);
  CHECK(p[0] == 0x03 && p[1] == 0xE8);
  CHECK(sdk_ws_close_payload(p, 4002, NULL) == 2);
  CHECK(p[0] == 0x0F && p[1] == 0xA2);
  CHECK(sdk_ws_close_payload(p, 1001, "bye") == 5);
  CHECK(memcmp(p + 2, "bye", 3) == 0);
  char reason[300];
  memset(reason, 'x', 200);
  reason[200] = '\0';
  CHECK(sdk_ws_close_payload(p, 1000, reason) == 125);
  reason[123] = '\0';
  CHECK(sdk_ws_close_payload(p, 1000, reason) == 125);
  reason[122] = '\0';
  CHECK(sdk_ws_close_payload(p, 1000, reason) == 124);
  /* "é" (2 bytes) ×70: 123 would split one, so 122 */
  for (int i = 0; i < 70; i++) memcpy(reason + 2 * i, "\xc3\xa9", 2);
  reason[140] = '\0';
  CHECK(sdk_ws_close_payload(p, 1000, reason) == 2 + 122);
  /* "€" (3 bytes) ×45: 41 fit exactly */
  for (int i = 0; i < 45; i++) memcpy(reason + 3 * i, "\xe2\x82\xac", 3);
  reason[135] = '\0';
  CHECK(sdk_ws_close_payload(p, 1000, reason) == 2 + 123);
  /* "x" then "😀" (4 bytes) ×40: 1 + 30×4 = 121 */
  reason[0] = 'x';
  for (int i = 0; i < 40; i++) memcpy(reason + 1 + 4 * i, "\xf0\x9f\x98\x80", 4);
  reason[161] = '\0';
  CHECK(sdk_ws_close_payload(p, 1000, reason) == 2 + 121);
  CHECK(memcmp(p + 2, reason, 121) == 0);
}

/* ---------------- decoding */

typedef struct {
  sdk_ws_event_kind kind;
  uint16_t code;
  size_t len;
  uint32_t hash;
  uint8_t head[8];
} rec;

#define MAX_RECS 64

typedef struct {
  rec r[MAX_RECS];
  size_t n;
} recs;

static uint32_t fnv(const uint8_t *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

/* Feeds in chunks of `chunk` bytes (0: all at once); stops after an ERROR. */
static void feed(const uint8_t *in, size_t len, size_t cap, size_t chunk, recs *out) {
  static uint8_t buf[70000];
  sdk_ws_decoder d;
  sdk_ws_decoder_init(&d, buf, cap);
  out->n = 0;
  size_t off = 0;
  while (off < len) {
    size_t end = chunk == 0 || len - off < chunk ? len : off + chunk;
    while (off < end) {
      sdk_ws_event ev;
      size_t used = sdk_ws_decode(&d, in + off, end - off, &ev);
      CHECK(used <= end - off);
      off += used;
      if (ev.kind == SDK_WS_EV_NONE) {
        CHECK(off == end);
        break;
      }
      if (out->n < MAX_RECS) {
        rec *r = &out->r[out->n++];
        memset(r, 0, sizeof *r);
        r->kind = ev.kind;
        r->code = ev.close_code;
        r->len = ev.len;
        r->hash = ev.len ? fnv(ev.data, ev.len) : 0;
        if (ev.len) memcpy(r->head, ev.data, ev.len < 8 ? ev.len : 8);
      }
      if (ev.kind == SDK_WS_EV_ERROR) {
        sdk_ws_event again;
        CHECK(sdk_ws_decode(&d, in + off, len - off, &again) == 0);
        CHECK(again.kind == SDK_WS_EV_ERROR && again.close_code == ev.close_code &&
              again.problem == ev.problem && ev.problem != NULL);
        return;
      }
    }
  }
}

static bool same(const recs *a, const recs *b) {
  if (a->n != b->n) return false;
  for (size_t i = 0; i < a->n; i++) {
    if (a->r[i].kind != b->r[i].kind || a->r[i].code != b->r[i].code ||
        a->r[i].len != b->r[i].len || a->r[i].hash != b->r[i].hash) {
      return false;
    }
  }
  return true;
}

/* Decodes whole, byte by byte and in 3- and 7-byte chunks; all must agree. Returns the events. */
static recs decode(const uint8_t *in, size_t len, size_t cap) {
  recs whole, part;
  feed(in, len, cap, 0, &whole);
  static const size_t chunks[] = {1, 2, 3, 7, 130};
  for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
    feed(in, len, cap, chunks[i], &part);
    CHECK(same(&whole, &part));
  }
  return whole;
}

#define DECODE(lit, cap) decode((const uint8_t *)(lit), sizeof(lit) - 1, (cap))

static bool is_error(recs r, uint16_t code) {
  return r.n >= 1 && r.r[r.n - 1].kind == SDK_WS_EV_ERROR && r.r[r.n - 1].code == code;
}

static void test_decode_rfc_examples(void) {
  recs r = DECODE("\x81\x05Hello", 300);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_TEXT && r.r[0].len == 5);
  CHECK(memcmp(r.r[0].head, "Hello", 5) == 0);
  r = DECODE("\x01\x03Hel\x80\x02lo", 300);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_TEXT && r.r[0].len == 5);
  CHECK(memcmp(r.r[0].head, "Hello", 5) == 0);
  r = DECODE("\x89\x05Hello", 300);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_PING && r.r[0].len == 5);
  CHECK(memcmp(r.r[0].head, "Hello", 5) == 0);
  r = DECODE("\x8a\x05Hello", 300);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_PONG && r.r[0].len == 5);

  static uint8_t big[10 + 65536];
  memcpy(big, "\x82\x7e\x01\x00", 4);
  for (size_t i = 0; i < 256; i++) big[4 + i] = (uint8_t)i;
  r = decode(big, 4 + 256, 300);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_BINARY && r.r[0].len == 256);
  CHECK(r.r[0].hash == fnv(big + 4, 256));
  memcpy(big, "\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00", 10);
  for (size_t i = 0; i < 65536; i++) big[10 + i] = (uint8_t)(i * 7);
  r = decode(big, sizeof big, 65536);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_BINARY && r.r[0].len == 65536);
  CHECK(r.r[0].hash == fnv(big + 10, 65536));
  /* the same message with a 65535-byte buffer is too big, after its 10 header bytes only */
  r = decode(big, 10, 65535);
  CHECK(is_error(r, 1009));
}

static void test_decode_sequences(void) {
  /* pings and a close between fragments; empty frames; two messages in one buffer */
  recs r = DECODE("\x01\x02He\x89\x01p\x00\x01l\x8a\x00\x00\x00\x80\x02lo"
                  "\x82\x00"
                  "\x81\x02ok"
                  "\x88\x00",
                  300);
  CHECK(r.n == 6);
  CHECK(r.r[0].kind == SDK_WS_EV_PING && r.r[0].len == 1 && r.r[0].head[0] == 'p');
  CHECK(r.r[1].kind == SDK_WS_EV_PONG && r.r[1].len == 0);
  CHECK(r.r[2].kind == SDK_WS_EV_TEXT && r.r[2].len == 5 && memcmp(r.r[2].head, "Hello", 5) == 0);
  CHECK(r.r[3].kind == SDK_WS_EV_BINARY && r.r[3].len == 0);
  CHECK(r.r[4].kind == SDK_WS_EV_TEXT && r.r[4].len == 2);
  CHECK(r.r[5].kind == SDK_WS_EV_CLOSE && r.r[5].code == 1005 && r.r[5].len == 0);

  r = DECODE("\x88\x0c\x03\xe8going away", 300);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_CLOSE && r.r[0].code == 1000 && r.r[0].len == 10);
  CHECK(memcmp(r.r[0].head, "going aw", 8) == 0);
  r = DECODE("\x88\x02\x0f\xa1", 300);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_CLOSE && r.r[0].code == 4001 && r.r[0].len == 0);

  /* exactly msg_cap over three fragments, and a UTF-8 character split across fragments */
  r = DECODE("\x01\x01\xe2\x00\x01\x82\x80\x01\xac", 3);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_TEXT && r.r[0].len == 3);
  /* a message that fits follows one that just fit: the buffer is reused */
  r = DECODE("\x81\x03" "abc\x81\x03" "def", 3);
  CHECK(r.n == 2 && r.r[1].len == 3 && memcmp(r.r[1].head, "def", 3) == 0);
  /* valid UTF-8 edges: U+0000, U+007F, U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF */
  r = DECODE("\x81\x14\x00\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 300);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_TEXT && r.r[0].len == 20);
  /* binary messages need not be UTF-8 */
  r = DECODE("\x82\x02\xff\xfe", 300);
  CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_BINARY);
  /* a zero-capacity buffer still takes empty messages and control frames */
  r = DECODE("\x81\x00\x89\x00", 0);
  CHECK(r.n == 2 && r.r[0].kind == SDK_WS_EV_TEXT && r.r[1].kind == SDK_WS_EV_PING);
}

static void test_decode_errors(void) {
  CHECK(is_error(DECODE("\x81\x85\x37\xfa\x21\x3d\x7f", 300), 1002)); /* masked */
  CHECK(is_error(DECODE("\xc1\x00", 300), 1002));                     /* RSV1 */
  CHECK(is_error(DECODE("\xa1\x00", 300), 1002));                     /* RSV2 */
  CHECK(is_error(DECODE("\x91\x00", 300), 1002));                     /* RSV3 */
  static const uint8_t unknown[] = {3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF};
  for (size_t i = 0; i < sizeof unknown; i++) {
    uint8_t f[2] = {(uint8_t)(0x80 | unknown[i]), 0};
    CHECK(is_error(decode(f, 2, 300), 1002));
  }
  CHECK(is_error(DECODE("\x09\x00", 300), 1002));          /* a ping without FIN */
  CHECK(is_error(DECODE("\x08\x00", 300), 1002));          /* a close without FIN */
  CHECK(is_error(DECODE("\x89\x7e\x00\x7e", 300), 1002));  /* a 126-byte ping */
  CHECK(is_error(DECODE("\x8a\x7f", 300), 1002));          /* a 64-bit pong length */
  CHECK(is_error(DECODE("\x80\x01x", 300), 1002));         /* continuation, no message */
  CHECK(is_error(DECODE("\x00\x01x", 300), 1002));
  CHECK(is_error(DECODE("\x01\x01x\x81\x01y", 300), 1002)); /* TEXT inside a message */
  CHECK(is_error(DECODE("\x02\x01x\x82\x01y", 300), 1002)); /* BINARY inside a message */
  CHECK(is_error(DECODE("\x01\x01x\x02\x01y", 300), 1002));
  CHECK(is_error(DECODE("\x82\x7f\x80\x00\x00\x00\x00\x00\x00\x00", 300), 1002)); /* top bit */

  /* too big, as soon as the header says so: no payload needed */
  recs r = DECODE("\x82\x7e\x01\x2d", 300);
  CHECK(is_error(r, 1009) && r.n == 1);
  r = DECODE("\x82\x7e\x01\x2c", 300); /* 300: fits, waits for the payload */
  CHECK(r.n == 0);
  r = DECODE("\x81\x7f\xff\xff\xff\xff\xff\xff\xff\xff", 300);
  CHECK(is_error(r, 1002));
  r = DECODE("\x81\x7f\x7f\xff\xff\xff\xff\xff\xff\xff", 300);
  CHECK(is_error(r, 1009));
  /* the sum of fragments */
  static uint8_t frags[4 + 200 + 4];
  memcpy(frags, "\x02\x7e\x00\xc8", 4);
  memset(frags + 4, 'a', 200);
  memcpy(frags + 204, "\x80\x7e\x00\x65", 4); /* 101 more: 301 */
  r = decode(frags, sizeof frags, 300);
  CHECK(is_error(r, 1009) && r.n == 1);
  frags[207] = 0x64; /* 100 more: 300, fits */
  r = decode(frags, sizeof frags, 300);
  CHECK(r.n == 0);

  /* text that is not UTF-8, found when the message completes */
  static const char *const bad_utf8[] = {
      "\xc0\x80",         /* overlong NUL */
      "\xc1\xbf",         /* overlong */
      "\xe0\x80\x80",     /* overlong 3 */
      "\xe0\x9f\xbf",     /* overlong 3 */
      "\xf0\x80\x80\x80", /* overlong 4 */
      "\xf0\x8f\xbf\xbf", /* overlong 4 */
      "\xed\xa0\x80",     /* U+D800 */
      "\xed\xbf\xbf",     /* U+DFFF */
      "\xf4\x90\x80\x80", /* U+110000 */
      "\xf5\x80\x80\x80", "\xff", "\xfe",
      "\x80",             /* a lone continuation */
      "\xe2\x82",         /* truncated */
      "\xf0\x9f\x98",     /* truncated */
      "\xc3",             /* truncated */
      "\xc3\x28",         /* a bad continuation */
      "\xe2\x28\xa1", "\xe2\x82\x28", "\xf0\x28\x8c\xbc", "\xf0\x90\x28\xbc", "\xf0\x9f\x98\x28",
  };
  for (size_t i = 0; i < sizeof bad_utf8 / sizeof bad_utf8[0]; i++) {
    uint8_t f[16];
    size_t n = strlen(bad_utf8[i]);
    f[0] = 0x81;
    f[1] = (uint8_t)(n + 1);
    f[2] = 'a';
    memcpy(f + 3, bad_utf8[i], n);
    r = decode(f, n + 3, 300);
    CHECK(is_error(r, 1007) && r.n == 1);
    /* and again split over two fragments: the error waits for the final fragment */
    uint8_t g[24];
    memcpy(g, "\x01\x01" "a", 3);
    g[3] = 0x80;
    g[4] = (uint8_t)n;
    memcpy(g + 5, bad_utf8[i], n);
    r = decode(g, n + 5, 300);
    CHECK(is_error(r, 1007));
    r = decode(g, n + 4, 300); /* the last byte missing: no verdict yet */
    CHECK(r.n == 0);
  }
  /* a truncated character at the end of a fragment and a ping in between is still an error */
  CHECK(is_error(DECODE("\x01\x01\xe2\x89\x00\x80\x01\x82", 300), 1007));

  /* close frames */
  CHECK(is_error(DECODE("\x88\x01\x03", 300), 1002));
  static const uint16_t bad_codes[] = {0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535};
  for (size_t i = 0; i < sizeof bad_codes / sizeof bad_codes[0]; i++) {
    uint8_t f[4] = {0x88, 2, (uint8_t)(bad_codes[i] >> 8), (uint8_t)bad_codes[i]};
    CHECK(is_error(decode(f, 4, 300), 1002));
  }
  static const uint16_t good_codes[] = {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011,
                                        1012, 1013, 1014, 3000, 4000, 4999};
  for (size_t i = 0; i < sizeof good_codes / sizeof good_codes[0]; i++) {
    uint8_t f[4] = {0x88, 2, (uint8_t)(good_codes[i] >> 8), (uint8_t)good_codes[i]};
    r = decode(f, 4, 300);
    CHECK(r.n == 1 && r.r[0].kind == SDK_WS_EV_CLOSE && r.r[0].code == good_codes[i]);
  }
  CHECK(is_error(DECODE("\x88\x04\x03\xe8\xc3\x28", 300), 1007));
  CHECK(is_error(DECODE("\x88\x03\x03\xe8\xed", 300), 1007));

  /* an error after good events keeps those events, and sticks */
  r = DECODE("\x81\x02ok\x89\x00\xc1\x00\x81\x02no", 300);
  CHECK(r.n == 3 && r.r[0].kind == SDK_WS_EV_TEXT && r.r[1].kind == SDK_WS_EV_PING);
  CHECK(is_error(r, 1002));
}

/* A long mixed stream: whole, byte by byte and every chunk size 1..40 give the same events. */
static void test_split_equivalence(void) {
  static uint8_t stream[4096];
  size_t n = 0;
  for (int round = 0; round < 12; round++) {
    size_t len = (size_t)(round * 23 % 250);
    stream[n++] = 0x01;
    stream[n++] = 0x7e;
    stream[n++] = (uint8_t)(len >> 8);
    stream[n++] = (uint8_t)len;
    for (size_t i = 0; i < len; i++) stream[n++] = (uint8_t)('a' + (i + (size_t)round) % 26);
    memcpy(stream + n, "\x89\x03pin", 5);
    n += 5;
    memcpy(stream + n, "\x80\x02\xc3\xa9", 4);
    n += 4;
    memcpy(stream + n, "\x82\x01\xff", 3);
    n += 3;
  }
  memcpy(stream + n, "\x88\x05\x03\xe9" "bye", 7);
  n += 7;
  recs whole, part;
  feed(stream, n, 300, 0, &whole);
  CHECK(whole.n == 12 * 3 + 1);
  CHECK(whole.r[whole.n - 1].kind == SDK_WS_EV_CLOSE && whole.r[whole.n - 1].code == 1001);
  int mismatches = 0;
  for (size_t chunk = 1; chunk <= 40; chunk++) {
    feed(stream, n, 300, chunk, &part);
    if (!same(&whole, &part)) mismatches++;
  }
  CHECK(mismatches == 0);
}

int main(void) {
  test_encode();
  test_close_payload();
  test_decode_rfc_examples();
  test_decode_sequences();
  test_decode_errors();
  test_split_equivalence();
  return check_exit("ws_frame");
}
