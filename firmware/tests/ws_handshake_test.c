/* RFC 6455 client pieces: SHA-1, base64, the upgrade request and the check of its answer. */
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

int main(void) {
  test_sha1();
  test_base64();
  test_build_upgrade();
  test_parse_upgrade();
  return check_exit("ws_handshake");
}
