/* The HTTP/1.1 upgrade of RFC 6455 §4.1: the request with Basic credentials, and the check of the
 * server's answer. */
#include <string.h>

#include "sdk_ws.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define MAX_HEADER_BLOCK 4096u

typedef struct {
  char *out;
  size_t cap;
  size_t len;
  bool overflow;
} writer;

static void put(writer *w, const char *s, size_t n) {
  if (w->overflow || n > w->cap - w->len) {
    w->overflow = true;
    return;
  }
  memcpy(w->out + w->len, s, n);
  w->len += n;
}

static void put_str(writer *w, const char *s) { put(w, s, strlen(s)); }

/* Header values must not end the line or the header block early. */
static bool is_header_safe(const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == 0x7F) return false;
  }
  return true;
}

static uint8_t credential_byte(const char *id, size_t id_len, const char *secret, size_t i) {
  if (i < id_len) return (uint8_t)id[i];
  if (i == id_len) return (uint8_t)':';
  return (uint8_t)secret[i - id_len - 1];
}

/* base64(id ":" secret) without a copy of the joined string: three bytes at a time. */
static void put_credentials(writer *w, const char *id, const char *secret) {
  size_t id_len = strlen(id);
  size_t total = id_len + 1 + strlen(secret);
  for (size_t i = 0; i < total; i += 3) {
    uint8_t group[3];
    size_t n = total - i < 3 ? total - i : 3;
    for (size_t j = 0; j < n; j++) group[j] = credential_byte(id, id_len, secret, i + j);
    char enc[5];
    if (sdk_base64_encode(group, n, enc, sizeof enc) != 4) {
      w->overflow = true;
      return;
    }
    put(w, enc, 4);
  }
}

size_t sdk_ws_build_upgrade(char *out, size_t cap, const char *host_header, const char *path,
                            const char *device_id, const char *secret, const uint8_t nonce[16],
                            char key_out[SDK_WS_KEY_LEN + 1]) {
  if (sdk_base64_encode(nonce, 16, key_out, SDK_WS_KEY_LEN + 1) != SDK_WS_KEY_LEN) return 0;
  if (!host_header[0] || path[0] != '/' || !device_id[0] || strchr(device_id, ':')) return 0;
  if (!is_header_safe(host_header) || !is_header_safe(path) || strchr(path, ' ') ||
      !is_header_safe(device_id) || !is_header_safe(secret)) {
    return 0;
  }
  writer w = {.out = out, .cap = cap, .len = 0, .overflow = false};
  put_str(&w, "GET ");
  put_str(&w, path);
  put_str(&w, " HTTP/1.1\r\nHost: ");
  put_str(&w, host_header);
  put_str(&w, "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
              "Sec-WebSocket-Key: ");
  put_str(&w, key_out);
  put_str(&w, "\r\nAuthorization: Basic ");
  put_credentials(&w, device_id, secret);
  put_str(&w, "\r\n\r\n");
  put(&w, "", 1); /* the NUL, not counted */
  if (w.overflow) return 0;
  return w.len - 1;
}

/* ---------------- the answer */

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

static bool equals_nocase(const char *s, size_t n, const char *lit) {
  size_t m = strlen(lit);
  if (n != m) return false;
  for (size_t i = 0; i < n; i++) {
    if (lower(s[i]) != lower(lit[i])) return false;
  }
  return true;
}

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c)) return true;
  return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* The header block ends at the first CRLFCRLF; returns its length with it, 0 when not there. */
static size_t header_block_len(const char *buf, size_t len) {
  for (size_t i = 0; i + 4 <= len; i++) {
    if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
      return i + 4;
    }
  }
  return 0;
}

/* A comma-separated list (Connection) holds the token, any case, whitespace around items. */
static bool list_has_token(const char *v, size_t n, const char *token) {
  size_t i = 0;
  while (i <= n) {
    size_t start = i;
    while (i < n && v[i] != ',') i++;
    size_t a = start, b = i;
    while (a < b && is_ows(v[a])) a++;
    while (b > a && is_ows(v[b - 1])) b--;
    if (equals_nocase(v + a, b - a, token)) return true;
    i++;
  }
  return false;
}

/* delta-seconds, saturating; an HTTP-date or anything else gives 0. */
static uint32_t parse_retry_after(const char *v, size_t n) {
  if (n == 0) return 0;
  uint32_t s = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_digit(v[i])) return 0;
    uint32_t d = (uint32_t)(v[i] - '0');
    s = s > (UINT32_MAX - d) / 10u ? UINT32_MAX : s * 10u + d;
  }
  return s;
}

typedef struct {
  unsigned upgrade_seen, upgrade_bad, connection_upgrade, accept_seen, accept_good;
  bool extensions, protocol;
} upgrade_facts;

static sdk_ws_hs_status invalid(sdk_ws_handshake *out, const char *problem) {
  out->problem = problem;
  return SDK_WS_HS_INVALID;
}

/* "HTTP/1.1 101 Switching Protocols": returns the status, 0 when the line is not a status line. */
static int parse_status_line(const char *line, size_t n) {
  if (n < 12 || memcmp(line, "HTTP/", 5) != 0 || !is_digit(line[5]) || line[6] != '.' ||
      !is_digit(line[7]) || line[8] != ' ' || !is_digit(line[9]) || !is_digit(line[10]) ||
      !is_digit(line[11]) || (n > 12 && line[12] != ' ')) {
    return 0;
  }
  if (line[9] == '0') return 0;
  return (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
}

sdk_ws_hs_status sdk_ws_parse_upgrade_response(const char *buf, size_t len, const char *key,
                                               sdk_ws_handshake *out) {
  out->status = 0;
  out->retry_after_s = 0;
  out->header_len = 0;
  out->problem = NULL;
  static const char prefix[] = "HTTP/";
  size_t check = len < 5 ? len : 5;
  if (check > 0 && memcmp(buf, prefix, check) != 0) return invalid(out, "not an HTTP response");
  size_t block = header_block_len(buf, len < MAX_HEADER_BLOCK ? len : MAX_HEADER_BLOCK);
  if (block == 0) {
    if (len >= MAX_HEADER_BLOCK) return invalid(out, "the header block is too long");
    return SDK_WS_HS_INCOMPLETE;
  }
  out->header_len = block;

  /* Every line ends with CRLF; the last "line" before the blank one is the last header. */
  size_t end = block - 2;
  size_t pos = 0;
  size_t eol = 0;
  while (buf[eol] != '\r') eol++;
  if (buf[eol + 1] != '\n') return invalid(out, "a bare CR in the status line");
  out->status = parse_status_line(buf, eol);
  if (out->status == 0) return invalid(out, "not an HTTP status line");
  for (size_t i = 0; i < eol; i++) {
    if (buf[i] == '\n' || buf[i] == '\0') return invalid(out, "a bare LF or NUL in the status line");
  }
  pos = eol + 2;

  upgrade_facts f = {0};
  char expected[29] = {0};
  if (out->status == 101) {
    uint8_t joined[SDK_WS_KEY_LEN + sizeof WS_GUID - 1];
    size_t key_len = key ? strlen(key) : 0;
    if (key_len != SDK_WS_KEY_LEN) return invalid(out, "no Sec-WebSocket-Key to check against");
    memcpy(joined, key, SDK_WS_KEY_LEN);
    memcpy(joined + SDK_WS_KEY_LEN, WS_GUID, sizeof WS_GUID - 1);
    uint8_t digest[20];
    sdk_sha1(joined, sizeof joined, digest);
    if (sdk_base64_encode(digest, sizeof digest, expected, sizeof expected) != 28) {
      return invalid(out, "internal: accept does not fit");
    }
  }

  while (pos < end) {
    size_t line_end = pos;
    while (buf[line_end] != '\r') line_end++;
    if (buf[line_end + 1] != '\n') return invalid(out, "a bare CR in the header block");
    const char *line = buf + pos;
    size_t n = line_end - pos;
    pos = line_end + 2;
    if (is_ows(line[0])) return invalid(out, "obsolete header line folding");
    size_t colon = 0;
    while (colon < n && is_token_char(line[colon])) colon++;
    if (colon == 0 || colon == n || line[colon] != ':') return invalid(out, "a malformed header line");
    const char *v = line + colon + 1;
    size_t vn = n - colon - 1;
    for (size_t i = 0; i < vn; i++) {
      if (v[i] == '\n' || v[i] == '\0') return invalid(out, "a bare LF or NUL in a header");
    }
    while (vn > 0 && is_ows(v[0])) {
      v++;
      vn--;
    }
    while (vn > 0 && is_ows(v[vn - 1])) vn--;

    if (equals_nocase(line, colon, "Retry-After")) {
      out->retry_after_s = parse_retry_after(v, vn);
    } else if (equals_nocase(line, colon, "Upgrade")) {
      f.upgrade_seen++;
      if (!equals_nocase(v, vn, "websocket")) f.upgrade_bad++;
    } else if (equals_nocase(line, colon, "Connection")) {
      if (list_has_token(v, vn, "upgrade")) f.connection_upgrade++;
    } else if (equals_nocase(line, colon, "Sec-WebSocket-Accept")) {
      f.accept_seen++;
      if (out->status == 101 && vn == 28 && memcmp(v, expected, 28) == 0) f.accept_good++;
    } else if (equals_nocase(line, colon, "Sec-WebSocket-Extensions")) {
      f.extensions = true;
    } else if (equals_nocase(line, colon, "Sec-WebSocket-Protocol")) {
      f.protocol = true;
    }
  }

  if (out->status == 401) return SDK_WS_HS_UNAUTHORIZED;
  if (out->status != 101) return SDK_WS_HS_REFUSED;
  if (f.upgrade_seen == 0 || f.upgrade_bad) return invalid(out, "no Upgrade: websocket");
  if (f.connection_upgrade == 0) return invalid(out, "no Connection: Upgrade");
  if (f.accept_seen != 1) return invalid(out, "no single Sec-WebSocket-Accept");
  if (f.accept_good != 1) return invalid(out, "Sec-WebSocket-Accept does not match the key");
  if (f.extensions) return invalid(out, "an extension we did not ask for");
  if (f.protocol) return invalid(out, "a subprotocol we did not ask for");
  return SDK_WS_HS_SWITCHED;
}
