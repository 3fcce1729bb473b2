/* The frame decoder on arbitrary bytes, fed in chunks whose sizes the input chooses, with a small
 * and a large message buffer; every split must give the events of feeding it whole. The upgrade
 * response parser runs on the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdk_ws.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EVENTS 256

typedef struct {
  sdk_ws_event_kind kind;
  uint16_t code;
  size_t len;
  uint32_t hash;
} rec;

static uint32_t fnv(const uint8_t *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static void check(int ok) {
  if (!ok) abort();
}

/* Feeds data; chunk sizes come from `sizes` (1..16 each), or the whole rest when sizes is NULL. */
static size_t run(const uint8_t *data, size_t size, uint8_t *buf, size_t cap, const uint8_t *sizes,
                  size_t nsizes, rec *out) {
  sdk_ws_decoder d;
  sdk_ws_decoder_init(&d, buf, cap);
  size_t n = 0, off = 0, k = 0;
  while (off < size) {
    size_t chunk = sizes ? (size_t)(sizes[k++ % nsizes] % 16u) + 1u : size - off;
    size_t end = size - off < chunk ? size : off + chunk;
    while (off < end) {
      sdk_ws_event ev;
      size_t used = sdk_ws_decode(&d, data + off, end - off, &ev);
      check(used <= end - off);
      off += used;
      if (ev.kind == SDK_WS_EV_NONE) {
        check(off == end);
        break;
      }
      switch (ev.kind) {
        case SDK_WS_EV_TEXT:
        case SDK_WS_EV_BINARY:
          check(ev.len <= cap && (ev.len == 0 || ev.data == buf));
          break;
        case SDK_WS_EV_PING:
        case SDK_WS_EV_PONG:
          check(ev.len <= 125);
          break;
        case SDK_WS_EV_CLOSE:
          check(ev.len <= 123 && ev.close_code >= 1000 && ev.close_code <= 4999);
          break;
        case SDK_WS_EV_ERROR:
          check(ev.close_code == 1002 || ev.close_code == 1007 || ev.close_code == 1009);
          check(ev.problem != NULL && ev.len == 0);
          break;
        case SDK_WS_EV_NONE:
          break;
      }
      if (ev.len) (void)fnv(ev.data, ev.len); /* touch every byte for ASan */
      if (n < MAX_EVENTS) {
        out[n] = (rec){ev.kind, ev.close_code, ev.len, ev.len ? fnv(ev.data, ev.len) : 0};
      }
      n++;
      if (ev.kind == SDK_WS_EV_ERROR) {
        sdk_ws_event again;
        check(sdk_ws_decode(&d, data + off, size - off, &again) == 0);
        check(again.kind == SDK_WS_EV_ERROR && again.close_code == ev.close_code &&
              again.problem == ev.problem);
        return n;
      }
    }
  }
  return n;
}

static void compare(const rec *a, size_t na, const rec *b, size_t nb) {
  check(na == nb);
  size_t n = na < MAX_EVENTS ? na : MAX_EVENTS;
  for (size_t i = 0; i < n; i++) {
    check(a[i].kind == b[i].kind && a[i].code == b[i].code && a[i].len == b[i].len &&
          a[i].hash == b[i].hash);
  }
}

static uint8_t small_buf[300];
static uint8_t large_buf[65536];
static rec whole[MAX_EVENTS], split[MAX_EVENTS];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the tail of the input chooses the chunk sizes, the whole input is the stream */
  size_t nsizes = size < 8 ? size : 8;
  const uint8_t *sizes = data + size - nsizes;

  uint8_t *bufs[2] = {small_buf, large_buf};
  size_t caps[2] = {sizeof small_buf, sizeof large_buf};
  for (int b = 0; b < 2; b++) {
    size_t nw = run(data, size, bufs[b], caps[b], NULL, 0, whole);
    size_t ns = run(data, size, bufs[b], caps[b], nsizes ? sizes : NULL, nsizes, split);
    compare(whole, nw, split, ns);
    size_t n1 = run(data, size, bufs[b], caps[b], (const uint8_t *)"\0", 1, split);
    compare(whole, nw, split, n1);
  }

  sdk_ws_handshake hs;
  sdk_ws_hs_status st =
      sdk_ws_parse_upgrade_response((const char *)data, size, "dGhlIHNhbXBsZSBub25jZQ==", &hs);
  check(hs.header_len <= size);
  if (st == SDK_WS_HS_INCOMPLETE) check(hs.header_len == 0 && size < 4096);
  if (st == SDK_WS_HS_INVALID) check(hs.problem != NULL);
  if (st == SDK_WS_HS_SWITCHED) check(hs.status == 101 && hs.header_len >= 4);
  if (st == SDK_WS_HS_UNAUTHORIZED) check(hs.status == 401);
  if (st == SDK_WS_HS_REFUSED) check(hs.status >= 100 && hs.status != 101 && hs.status != 401);
  if (st != SDK_WS_HS_INCOMPLETE && st != SDK_WS_HS_INVALID) {
    check(hs.header_len >= 4 && memcmp(data + hs.header_len - 4, "\r\n\r\n", 4) == 0);
  }
  if (st == SDK_WS_HS_SWITCHED) {
    /* what follows the upgrade answer is the first frames */
    size_t nw = run(data + hs.header_len, size - hs.header_len, small_buf, sizeof small_buf, NULL,
                    0, whole);
    size_t ns = run(data + hs.header_len, size - hs.header_len, small_buf, sizeof small_buf,
                    (const uint8_t *)"\x02", 1, split);
    compare(whole, nw, split, ns);
  }
  return 0;
}
