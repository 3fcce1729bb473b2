/* RFC 6455 client pieces: SHA-1, base64, the upgrade, frame encoding and the frame decoder. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "sdk_ws.h"

static const char ACCEPT_OF_RFC_KEY[] = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
static const char RFC_KEY[] = "dGhlIHNhbXBsZSBub25jZQ==";

static void hex(const uint8_t *b, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[b[i] >> 4];
    out[2 * i + 1] = digits[b[i] & 15];
  }
  out[2 * n] = '\0';
}

static const char *sha1_hex(const void *data, size_t len) {
  static char out[41];
  uint8_t d[20];
  sdk_sha1(data, len, d);
  hex(d, 20, out);
  return out;
}

static void test_sha1(void) {
  /* RFC 3174 §7.3 TEST1-TEST4, and the empty string */
  CHECK_STR(sha1_hex("abc", 3), "a9993e364706816aba3e25717850c26c9cd0d89d");
  const char *t2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK_STR(sha1_hex(t2, strlen(t2)), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  static uint8_t million[1000000];
  memset(million, 'a', sizeof million);
  CHECK_STR(sha1_hex(million, sizeof million), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  char t4[641];
  for (int i = 0; i < 10; i++) memcpy(t4 + 64 * i, "0123456701234567012345670123456701234567012345670123456701234567", 64);
  CHECK_STR(sha1_hex(t4, 640), "dea356a2cddd90c7a7ecedc5ebb563934f460452");
  CHECK_STR(sha1_hex("", 0), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  /* the padding boundaries: 55, 56 and 64 bytes */
  CHECK_STR(sha1_hex(million, 55), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
  CHECK_STR(sha1_hex(million, 56), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
  CHECK_STR(sha1_hex(million, 64), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
}

static void test_base64(void) {
  /* RFC 4648 §10 */
  static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  static const char *const enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (size_t i = 0; i < 7; i++) {
    char out[16];
    size_t n = sdk_base64_encode((const uint8_t *)plain[i], strlen(plain[i]), out, sizeof out);
    CHECK(n == strlen(enc[i]));
    CHECK_STR(out, enc[i]);
  }
  char out[9];
  CHECK(sdk_base64_encode((const uint8_t *)"foobar", 6, out, 9) == 8); /* exactly fits with NUL */
  CHECK(sdk_base64_encode((const uint8_t *)"foobar", 6, out, 8) == 0); /* no room for the NUL */
  const uint8_t all[3] = {0xFB, 0xFF, 0xBF};
  CHECK(sdk_base64_encode(all, 3, out, sizeof out) == 4);
  CHECK_STR(out, "+/+/");
}

/* ---------------- upgrade */

static const uint8_t SAMPLE_NONCE[16] = {'t', 'h', 'e', ' ', 's', 'a', 'm', 'p',
                                         'l', 'e', ' ', 'n', 'o', 'n', 'c', 'e'};

static void test_build_upgrade(void) {
  char out[512];
  char key[SDK_WS_KEY_LEN + 1];
  size_t n = sdk_ws_build_upgrade(out, sizeof out, "192.168.1.10:8080", "/v1/device",
                                  "dev_conformance", "conformance-s3cret", SAMPLE_NONCE, key);
  const char *expected =
      "GET /v1/device HTTP/1.1\r\n"
      "Host: 192.168.1.10:8080\r\n"
      "Upgrade: websocket\r\n"
      "Connection: Upgrade\r\n"
      "Sec-WebSocket-Version: 13\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
      "Authorization: Basic ZGV2X2NvbmZvcm1hbmNlOmNvbmZvcm1hbmNlLXMzY3JldA==\r\n"
      "\r\n";
  CHECK(n == strlen(expected));
  CHECK_STR(out, expected);
  CHECK_STR(key, RFC_KEY);
  /* the smallest buffer: the request and its NUL */
  char tight[256];
  CHECK(sdk_ws_build_upgrade(tight, n + 1, "192.168.1.10:8080", "/v1/device", "dev_conformance",
                             "conformance-s3cret", SAMPLE_NONCE, key) == n);
  CHECK_STR(tight, expected);
  CHECK(sdk_ws_build_upgrade(tight, n, "192.168.1.10:8080", "/v1/device", "dev_conformance",
                             "conformance-s3cret", SAMPLE_NONCE, key) == 0);
  CHECK(sdk_ws_build_upgrade(tight, 10, "h", "/", "d", "s", SAMPLE_NONCE, key) == 0);
  /* credentials whose joined length is 1, 2 and 0 mod 3 */
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "h", "/", "a", "", SAMPLE_NONCE, key) > 0);
  CHECK(strstr(out, "Authorization: Basic YTo=\r\n") != NULL);
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "h", "/", "a", "b", SAMPLE_NONCE, key) > 0);
  CHECK(strstr(out, "Authorization: Basic YTpi\r\n") != NULL);
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "h", "/", "ab", "c", SAMPLE_NONCE, key) > 0);
  CHECK(strstr(out, "Authorization: Basic YWI6Yw==\r\n") != NULL);
  /* unusable arguments */
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "h", "/", "", "s", SAMPLE_NONCE, key) == 0);
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "h", "/", "a:b", "s", SAMPLE_NONCE, key) == 0);
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "h", "v1", "a", "s", SAMPLE_NONCE, key) == 0);
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "h\r\nX: y", "/", "a", "s", SAMPLE_NONCE, key) == 0);
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "h", "/a b", "a", "s", SAMPLE_NONCE, key) == 0);
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "h", "/", "a", "s\n", SAMPLE_NONCE, key) == 0);
  CHECK(sdk_ws_build_upgrade(out, sizeof out, "", "/", "a", "s", SAMPLE_NONCE, key) == 0);
}

static sdk_ws_hs_status parse(const char *text, const char *key, sdk_ws_handshake *hs) {
  return sdk_ws_parse_upgrade_response(text, strlen(text), key, hs);
}

#define GOOD_101                         \
  "HTTP/1.1 101 Switching Protocols\r\n" \
  "Upgrade: websocket\r\n"               \
  "Connection: Upgrade\r\n"              \
  "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"

static void test_parse_upgrade(void) {
  sdk_ws_handshake hs;
  CHECK(parse(GOOD_101, RFC_KEY, &hs) == SDK_WS_HS_SWITCHED);
  CHECK(hs.status == 101);
  CHECK(hs.header_len == strlen(GOOD_101));
  CHECK(hs.problem == NULL);
  CHECK(strlen(ACCEPT_OF_RFC_KEY) == 28);

  /* the accept for another key, from the nonce 00 01 … 0f */
  uint8_t nonce[16];
  for (uint8_t i = 0; i < 16; i++) nonce[i] = i;
  char req[512], key[SDK_WS_KEY_LEN + 1];
  CHECK(sdk_ws_build_upgrade(req, sizeof req, "h", "/", "a", "b", nonce, key) > 0);
  CHECK_STR(key, "AAECAwQFBgcICQoLDA0ODw==");
  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n"
              "Sec-WebSocket-Accept: Bz3qJYTGdOe8gUSpLosEdiLKDrk=\r\n\r\n",
              key, &hs) == SDK_WS_HS_SWITCHED);

  /* case-insensitive names and values, whitespace, Connection as a list, other headers */
  CHECK(parse("HTTP/1.1 101 OK\r\nserver: x\r\nUPGRADE:WebSocket \r\n"
              "connection: keep-alive ,  UPGRADE\r\nsec-websocket-accept: \t"
              "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\t\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_SWITCHED);
  CHECK(parse("HTTP/1.1 101\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_SWITCHED);

  /* bytes after the blank line are frames, not header */
  char with_frame[256];
  strcpy(with_frame, GOOD_101);
  size_t hl = strlen(with_frame);
  memcpy(with_frame + hl, "\x81\x05Hello", 7);
  CHECK(sdk_ws_parse_upgrade_response(with_frame, hl + 7, RFC_KEY, &hs) == SDK_WS_HS_SWITCHED);
  CHECK(hs.header_len == hl);
  /* a frame that itself looks like CRLFCRLF does not move the end */
  memcpy(with_frame + hl, "\x81\x04\r\n\r\n", 6);
  CHECK(sdk_ws_parse_upgrade_response(with_frame, hl + 6, RFC_KEY, &hs) == SDK_WS_HS_SWITCHED);
  CHECK(hs.header_len == hl);

  /* incomplete at every prefix */
  size_t good_len = strlen(GOOD_101);
  int incomplete = 0;
  for (size_t i = 0; i < good_len; i++) {
    if (sdk_ws_parse_upgrade_response(GOOD_101, i, RFC_KEY, &hs) == SDK_WS_HS_INCOMPLETE) incomplete++;
  }
  CHECK(incomplete == (int)good_len);

  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOp=\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(hs.problem != NULL && strstr(hs.problem, "Accept") != NULL);
  CHECK(hs.status == 101);
  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(hs.problem != NULL && strstr(hs.problem, "Upgrade") != NULL);
  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: keep-alive\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrades\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(parse(GOOD_101, "AAECAwQFBgcICQoLDA0ODw==", &hs) == SDK_WS_HS_INVALID);
  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
              "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(hs.problem != NULL && strstr(hs.problem, "extension") != NULL);
  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Protocol: chat\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(hs.problem != NULL && strstr(hs.problem, "subprotocol") != NULL);
  CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
              "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_INVALID);

  const char *unauthorized =
      "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nRetry-After: 30\r\n"
      "Content-Length: 2\r\n\r\n{}";
  CHECK(parse(unauthorized, RFC_KEY, &hs) == SDK_WS_HS_UNAUTHORIZED);
  CHECK(hs.status == 401);
  CHECK(hs.retry_after_s == 30);
  CHECK(hs.header_len == strlen(unauthorized) - 2);
  CHECK(parse("HTTP/1.1 503 Service Unavailable\r\nretry-after:  120 \r\n\r\n", RFC_KEY, &hs) ==
        SDK_WS_HS_REFUSED);
  CHECK(hs.status == 503);
  CHECK(hs.retry_after_s == 120);
  CHECK(parse("HTTP/1.1 503 Service Unavailable\r\nRetry-After: Fri, 31 Dec 1999 23:59:59 GMT\r\n\r\n",
              RFC_KEY, &hs) == SDK_WS_HS_REFUSED);
  CHECK(hs.retry_after_s == 0);
  CHECK(parse("HTTP/1.1 503 x\r\nRetry-After: 99999999999999\r\n\r\n", RFC_KEY, &hs) ==
        SDK_WS_HS_REFUSED);
  CHECK(hs.retry_after_s == UINT32_MAX);
  CHECK(parse("HTTP/1.1 200 OK\r\n\r\n", RFC_KEY, &hs) == SDK_WS_HS_REFUSED);
  CHECK(hs.retry_after_s == 0);
  CHECK(parse("HTTP/1.0 404 Not Found\r\n\r\n", NULL, &hs) == SDK_WS_HS_REFUSED);

  /* not HTTP, at once or once the block ends */
  CHECK(parse("SSH-2.0-OpenSSH\r\n", RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(hs.status == 0);
  CHECK(parse("HTTP/1.1 abc\r\n\r\n", RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(parse("HTTP/1.1 101 OK\r\nno colon here\r\n\r\n", RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(parse("HTTP/1.1 101 OK\r\nUpgrade : websocket\r\n\r\n", RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(parse("HTTP/1.1 101 OK\r\nUpgrade: web\rsocket\r\n\r\n", RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(parse("HTTP/1.1 101 OK\nUpgrade: websocket\r\n\r\n", RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(parse("HTTP/1.1 401 OK\r\n folded\r\n\r\n", RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  /* LF-only line ends never end the block */
  CHECK(parse("HTTP/1.1 101 OK\n\n", RFC_KEY, &hs) == SDK_WS_HS_INCOMPLETE);

  /* a header block of 4096 bytes or more that has not ended */
  static char big[5000];
  memcpy(big, "HTTP/1.1 101 OK\r\nX: ", 20);
  memset(big + 20, 'a', sizeof big - 20);
  CHECK(sdk_ws_parse_upgrade_response(big, 4095, RFC_KEY, &hs) == SDK_WS_HS_INCOMPLETE);
  CHECK(sdk_ws_parse_upgrade_response(big, 4096, RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  CHECK(sdk_ws_parse_upgrade_response(big, sizeof big, RFC_KEY, &hs) == SDK_WS_HS_INVALID);
  /* one that ends exactly at 4096 bytes is fine */
  memcpy(big + 4092, "\r\n\r\n", 4);
  CHECK(sdk_ws_parse_upgrade_response(big, 4096, RFC_KEY, &hs) == SDK_WS_HS_INVALID); /* 101, no checks */
  CHECK(hs.header_len == 4096);
  memcpy(big, "HTTP/1.1 503", 12);
  CHECK(sdk_ws_parse_upgrade_response(big, 4096, RFC_KEY, &hs) == SDK_WS_HS_REFUSED);
}

/* ---------------- frames */

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
  test_sha1();
  test_base64();
  test_build_upgrade();
  test_parse_upgrade();
  test_encode();
  test_close_payload();
  test_decode_rfc_examples();
  test_decode_sequences();
  test_decode_errors();
  test_split_equivalence();
  return check_exit("ws");
}
