/*
 * deviceSocketUrl (packages/protocol/src/device.ts) in C. That function hands the address to the
 * WHATWG URL parser, so this file follows the parser's steps for special (http/ws) URLs: tab and
 * newline removal, any run of / or \ before the host, userinfo, host/port split, percent-decoding,
 * lowercasing, forbidden host characters, IPv4 numbers (127.1, 0x7f.0.0.1) and IPv6 compression.
 * What it refuses although deviceSocketUrl prints a URL: non-ASCII bytes, a user name, password,
 * query or fragment in a full URL, hosts past 253 characters and user+host+port past 511
 * (docs/firmware.md, "Server address").
 */
#include "sdk_url.h"

#include <string.h>

#include "sdk_protocol.h"

#define AUTHORITY_MAX 512

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
static bool is_tab_or_newline(char c) { return c == '\t' || c == '\n' || c == '\r'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Whether s[0..len) starts with the lowercase prefix, ignoring case. */
static bool starts_with(const char *s, size_t len, const char *prefix) {
  size_t n = strlen(prefix);
  if (len < n) return false;
  for (size_t i = 0; i < n; i++) {
    if (lower(s[i]) != prefix[i]) return false;
  }
  return true;
}

/* ---------------------------------------------------------------- IPv4 */

#define IPV4_TOO_BIG 0x100000000ull

/* The WHATWG IPv4 number parser: decimal, 0x hex or 0-prefixed octal; "0x" alone is 0. */
static bool ipv4_number(const char *s, size_t len, uint64_t *out) {
  if (len == 0) return false;
  unsigned radix = 10;
  if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    radix = 16;
    s += 2;
    len -= 2;
  } else if (len >= 2 && s[0] == '0') {
    radix = 8;
    s++;
    len--;
  }
  uint64_t value = 0;
  for (size_t i = 0; i < len; i++) {
    int d = hex_value(s[i]);
    if (d < 0 || (unsigned)d >= radix) return false;
    value = value * radix + (unsigned)d;
    if (value > IPV4_TOO_BIG) value = IPV4_TOO_BIG;
  }
  *out = value;
  return true;
}

/* The host without one trailing dot, as the IPv4 parser splits it. */
static size_t without_final_dot(const char *host, size_t len) {
  return (len > 1 && host[len - 1] == '.') ? len - 1 : len;
}

static bool ends_in_number(const char *host, size_t len) {
  if (len == 1 && host[0] == '.') return false;
  len = without_final_dot(host, len);
  size_t start = len;
  while (start > 0 && host[start - 1] != '.') start--;
  const char *last = host + start;
  size_t last_len = len - start;
  if (last_len == 0) return false;
  bool digits = true;
  for (size_t i = 0; i < last_len; i++) digits = digits && is_digit(last[i]);
  uint64_t ignored;
  return digits || ipv4_number(last, last_len, &ignored);
}

static bool parse_ipv4(const char *host, size_t len, uint32_t *out) {
  len = without_final_dot(host, len);
  uint64_t numbers[4];
  size_t count = 0, start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && host[i] != '.') continue;
    if (count == 4) return false;
    if (!ipv4_number(host + start, i - start, &numbers[count])) return false;
    count++;
    start = i + 1;
  }
  for (size_t i = 0; i + 1 < count; i++) {
    if (numbers[i] > 255) return false;
  }
  uint64_t limit = 1ull << (8 * (5 - count));
  if (numbers[count - 1] >= limit) return false;
  uint64_t ipv4 = numbers[count - 1];
  for (size_t i = 0; i + 1 < count; i++) ipv4 += numbers[i] << (8 * (3 - i));
  *out = (uint32_t)ipv4;
  return true;
}

static size_t put_decimal(char *out, uint32_t value) {
  char digits[10];
  size_t n = 0;
  do {
    digits[n++] = (char)('0' + value % 10);
    value /= 10;
  } while (value);
  for (size_t i = 0; i < n; i++) out[i] = digits[n - 1 - i];
  return n;
}

static void format_ipv4(uint32_t ipv4, char *out) {
  size_t at = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    at += put_decimal(out + at, (ipv4 >> shift) & 0xFFu);
    out[at++] = shift ? '.' : '\0';
  }
}

/* ---------------------------------------------------------------- IPv6 */

static bool parse_ipv6(const char *s, size_t len, uint16_t address[8]) {
  memset(address, 0, 8 * sizeof address[0]);
  size_t at = 0, piece = 0;
  long compress = -1;
#define C (at < len ? s[at] : '\0')
  if (C == ':') {
    if (at + 1 >= len || s[at + 1] != ':') return false;
    at += 2;
    piece++;
    compress = (long)piece;
  }
  while (at < len) {
    if (piece == 8) return false;
    if (C == ':') {
      if (compress != -1) return false;
      at++;
      piece++;
      compress = (long)piece;
      continue;
    }
    unsigned value = 0, length = 0;
    while (length < 4 && at < len && hex_value(C) >= 0) {
      value = value * 16 + (unsigned)hex_value(C);
      at++;
      length++;
    }
    if (C == '.' && at < len) {
      if (length == 0 || piece > 6) return false;
      at -= length;
      unsigned seen = 0;
      while (at < len) {
        if (seen > 0) {
          if (C != '.' || seen >= 4) return false;
          at++;
        }
        if (!is_digit(C) || at >= len) return false;
        int part = -1;
        while (at < len && is_digit(C)) {
          int d = C - '0';
          if (part == -1) {
            part = d;
          } else if (part == 0) {
            return false;
          } else {
            part = part * 10 + d;
          }
          if (part > 255) return false;
          at++;
        }
        address[piece] = (uint16_t)((unsigned)address[piece] * 0x100u + (unsigned)part);
        seen++;
        if (seen == 2 || seen == 4) piece++;
      }
      if (seen != 4) return false;
      break;
    }
    if (C == ':' && at < len) {
      at++;
      if (at >= len) return false;
    } else if (at < len) {
      return false;
    }
    address[piece] = (uint16_t)value;
    piece++;
  }
#undef C
  if (compress != -1) {
    size_t swaps = piece - (size_t)compress;
    size_t to = 7;
    while (to != 0 && swaps > 0) {
      size_t from = (size_t)compress + swaps - 1;
      uint16_t t = address[to];
      address[to] = address[from];
      address[from] = t;
      to--;
      swaps--;
    }
  } else if (piece != 8) {
    return false;
  }
  return true;
}

static void format_ipv6(const uint16_t address[8], char *out) {
  static const char digits[] = "0123456789abcdef";
  int compress = -1, best = 1;
  for (int i = 0; i < 8;) {
    int run = 0;
    while (i + run < 8 && address[i + run] == 0) run++;
    if (run > best) {
      best = run;
      compress = i;
    }
    i += run ? run : 1;
  }
  size_t at = 0;
  bool skipping = false;
  for (int i = 0; i < 8; i++) {
    if (skipping && address[i] == 0) continue;
    skipping = false;
    if (compress == i) {
      if (i == 0) out[at++] = ':';
      out[at++] = ':';
      skipping = true;
      continue;
    }
    bool started = false;
    for (int shift = 12; shift >= 0; shift -= 4) {
      unsigned d = (address[i] >> shift) & 0xFu;
      if (d || started || shift == 0) {
        out[at++] = digits[d];
        started = true;
      }
    }
    if (i != 7) out[at++] = ':';
  }
  out[at] = '\0';
}

/* ---------------------------------------------------------------- host */

static bool forbidden_in_domain(char c) {
  unsigned char u = (unsigned char)c;
  return u <= 0x20 || u == 0x7F || strchr("#%/:<>?@[\\]^|", c) != NULL;
}

/* The WHATWG host parser for a special URL, ASCII only: writes the serialized host (IPv6 unbracketed). */
static sdk_url_status parse_host(const char *s, size_t len, char out[SDK_URL_HOST_MAX + 1]) {
  if (len == 0) return SDK_URL_BAD_HOST;
  if (s[0] == '[') {
    if (len < 2 || s[len - 1] != ']') return SDK_URL_BAD_HOST;
    uint16_t address[8];
    if (!parse_ipv6(s + 1, len - 2, address)) return SDK_URL_BAD_HOST;
    format_ipv6(address, out);
    return SDK_URL_OK;
  }
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c == '%' && i + 2 < len && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      c = (char)(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    }
    if ((unsigned char)c >= 0x80) return SDK_URL_BAD_HOST; /* would need IDNA */
    if (forbidden_in_domain(c)) return SDK_URL_BAD_HOST;
    if (n == SDK_URL_HOST_MAX) return SDK_URL_BAD_HOST;
    out[n++] = lower(c);
  }
  out[n] = '\0';
  if (ends_in_number(out, n)) {
    uint32_t ipv4;
    if (!parse_ipv4(out, n, &ipv4)) return SDK_URL_BAD_HOST;
    format_ipv4(ipv4, out);
  }
  return SDK_URL_OK;
}

/* ---------------------------------------------------------------- address */

/* "ftp://…": a scheme (a letter, then letters, digits, + - .) followed by "://". */
static bool has_other_scheme(const char *s, size_t len) {
  size_t i = 0;
  if (len == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  while (i < len && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || is_digit(s[i]) ||
                     s[i] == '+' || s[i] == '-' || s[i] == '.'))
    i++;
  return i + 2 < len && s[i] == ':' && s[i + 1] == '/' && s[i + 2] == '/';
}

sdk_url_status sdk_url_from_address(const char *address, sdk_url *out) {
  memset(out, 0, sizeof *out);
  if (address == NULL) return SDK_URL_EMPTY;
  size_t len = strlen(address);
  for (size_t i = 0; i < len; i++) {
    if ((unsigned char)address[i] >= 0x80) return SDK_URL_BAD_HOST;
  }
  /* server.trim().replace(/\/+$/, "") */
  const char *s = address;
  while (len > 0 && is_space(s[0])) {
    s++;
    len--;
  }
  while (len > 0 && is_space(s[len - 1])) len--;
  while (len > 0 && s[len - 1] == '/') len--;
  if (len == 0) return SDK_URL_EMPTY;

  bool full = false, tls = false;
  size_t at = 0;
  static const char *const schemes[] = {"https://", "http://", "wss://", "ws://"};
  for (size_t i = 0; i < 4 && !full; i++) {
    if (starts_with(s, len, schemes[i])) {
      full = true;
      tls = i == 0 || i == 2;
      at = strlen(schemes[i]) - 2; /* after the colon */
    }
  }
  if (!full && has_other_scheme(s, len)) return SDK_URL_BAD_SCHEME;
  /* The URL parser drops trailing C0 controls and spaces, and tabs and newlines anywhere. */
  while (len > 0 && (unsigned char)s[len - 1] <= 0x20) len--;
  while (at < len && (s[at] == '/' || s[at] == '\\' || is_tab_or_newline(s[at]))) at++;

  char authority[AUTHORITY_MAX];
  size_t n = 0, at_sign = SIZE_MAX, at_signs = 0;
  for (; at < len; at++) {
    char c = s[at];
    if (c == '/' || c == '\\' || c == '?' || c == '#') break;
    if (is_tab_or_newline(c)) continue;
    if (n == sizeof authority) return SDK_URL_BAD_HOST;
    if (c == '@') {
      at_sign = n;
      at_signs++;
    }
    authority[n++] = c;
  }
  if (full) {
    /* deviceSocketUrl keeps a user name or password; "@" or ":@" alone leaves neither */
    bool empty_userinfo = at_signs == 1 && (at_sign == 0 || (at_sign == 1 && authority[0] == ':'));
    if (at_signs > 0 && !empty_userinfo) return SDK_URL_BAD_HOST;
    for (; at < len; at++) {
      if (s[at] == '?' || s[at] == '#') return SDK_URL_BAD_HOST; /* ... and a query or fragment */
    }
  }
  size_t host_start = at_sign == SIZE_MAX ? 0 : at_sign + 1;

  size_t host_end = host_start;
  bool brackets = false;
  while (host_end < n && (brackets || authority[host_end] != ':')) {
    if (authority[host_end] == '[') brackets = true;
    if (authority[host_end] == ']') brackets = false;
    host_end++;
  }
  if (host_end == host_start) return SDK_URL_BAD_HOST;

  bool has_port = false;
  uint32_t port = 0;
  for (size_t i = host_end + 1; i < n; i++) {
    if (!is_digit(authority[i])) return SDK_URL_BAD_PORT;
    port = port * 10 + (uint32_t)(authority[i] - '0');
    if (port > 65535) return SDK_URL_BAD_PORT;
    has_port = true;
  }

  sdk_url_status status = parse_host(authority + host_start, host_end - host_start, out->host);
  if (status != SDK_URL_OK) {
    memset(out, 0, sizeof *out);
    return status;
  }
  if (has_port && port == 0) {
    memset(out, 0, sizeof *out);
    return SDK_URL_BAD_PORT;
  }
  if (!full) tls = !has_port; /* any port written, 80 included, means plain ws:// */
  uint16_t default_port = tls ? 443 : 80;
  out->tls = tls;
  out->port_explicit = has_port && port != default_port;
  out->port = out->port_explicit ? (uint16_t)port : default_port;
  return SDK_URL_OK;
}

/* Appends text to out[*at..cap), keeping room for the NUL; false when it does not fit. */
static bool append(char *out, size_t cap, size_t *at, const char *text) {
  size_t n = strlen(text);
  if (cap == 0 || n > cap - 1 - *at) return false;
  memcpy(out + *at, text, n);
  *at += n;
  out[*at] = '\0';
  return true;
}

static bool append_host_port(const sdk_url *url, char *out, size_t cap, size_t *at) {
  bool v6 = strchr(url->host, ':') != NULL;
  if (v6 && !append(out, cap, at, "[")) return false;
  if (!append(out, cap, at, url->host)) return false;
  if (v6 && !append(out, cap, at, "]")) return false;
  if (url->port_explicit) {
    char port[7] = ":";
    port[1 + put_decimal(port + 1, url->port)] = '\0';
    if (!append(out, cap, at, port)) return false;
  }
  return true;
}

size_t sdk_url_host_header(const sdk_url *url, char *out, size_t cap) {
  size_t at = 0;
  if (cap > 0) out[0] = '\0';
  if (!append_host_port(url, out, cap, &at)) {
    if (cap > 0) out[0] = '\0';
    return 0;
  }
  return at;
}

size_t sdk_url_format(const sdk_url *url, char *out, size_t cap) {
  size_t at = 0;
  if (cap > 0) out[0] = '\0';
  if (!append(out, cap, &at, url->tls ? "wss://" : "ws://") || !append_host_port(url, out, cap, &at) ||
      !append(out, cap, &at, SDK_DEVICE_SOCKET_PATH)) {
    if (cap > 0) out[0] = '\0';
    return 0;
  }
  return at;
}
