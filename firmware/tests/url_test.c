/* sdk_url_from_address + sdk_url_format against packages/protocol/vectors/device-socket-url.jsonl
 * (what deviceSocketUrl prints), plus the Host header and short buffers. */
#include "check.h"
#include "sdk_protocol.h"
#include "sdk_url.h"
#include "vectors.h"

static char line[VECTOR_LINE_MAX];
static vector_row row;

static bool is_zeroed(const sdk_url *u) {
  static const sdk_url zero;
  return memcmp(u, &zero, sizeof zero) == 0;
}

static void check_vector(const char *address, const char *expected, bool firmware_refuses) {
  sdk_url url;
  memset(&url, 0xAA, sizeof url);
  sdk_url_status status = sdk_url_from_address(address, &url);
  char printed[400] = "", host[300] = "", joined[400];
  if (status == SDK_URL_OK) {
    CHECK(sdk_url_format(&url, printed, sizeof printed) == strlen(printed));
    CHECK(sdk_url_host_header(&url, host, sizeof host) == strlen(host));
    snprintf(joined, sizeof joined, "%s%s%s", url.tls ? "wss://" : "ws://", host, SDK_DEVICE_SOCKET_PATH);
    CHECK_STR(printed, joined);
    CHECK(url.port_explicit || url.port == (url.tls ? 443 : 80));
  } else {
    CHECK(is_zeroed(&url));
  }
  const char *want = firmware_refuses ? "" : expected;
  if (strcmp(printed, want) != 0) fprintf(stderr, "address \"%s\" (status %d): ", address, (int)status);
  CHECK_STR(printed, want);
}

static void check_vectors(void) {
  FILE *f = vector_open("device-socket-url.jsonl");
  CHECK(f != NULL);
  if (!f) return;
  size_t rows = 0, urls = 0;
  while (vector_next_line(f, line)) {
    bool parsed = vector_parse(line, &row);
    CHECK(parsed);
    const char *address = vector_get(&row, "address"), *url = vector_get(&row, "url");
    const char *refuses = vector_get(&row, "firmwareRefuses");
    CHECK(address && url);
    if (!parsed || !address || !url) continue;
    rows++;
    if (url[0]) urls++;
    check_vector(address, url, refuses && strcmp(refuses, "true") == 0);
  }
  fclose(f);
  CHECK(rows >= 50);
  CHECK(urls >= 30 && urls < rows);
}

static void check_statuses(void) {
  sdk_url url;
  CHECK(sdk_url_from_address("", &url) == SDK_URL_EMPTY);
  CHECK(sdk_url_from_address(" \t/ ", &url) == SDK_URL_EMPTY);
  CHECK(sdk_url_from_address(NULL, &url) == SDK_URL_EMPTY);
  CHECK(sdk_url_from_address("host:65536", &url) == SDK_URL_BAD_PORT);
  CHECK(sdk_url_from_address("host:8o", &url) == SDK_URL_BAD_PORT);
  CHECK(sdk_url_from_address("bad host", &url) == SDK_URL_BAD_HOST);

  CHECK(sdk_url_from_address("[::1]:8080", &url) == SDK_URL_OK);
  CHECK_STR(url.host, "::1");
  CHECK(!url.tls && url.port == 8080 && url.port_explicit);
  CHECK(sdk_url_from_address("sdk.example.com", &url) == SDK_URL_OK);
  CHECK(url.tls && url.port == 443 && !url.port_explicit);
  CHECK(sdk_url_from_address("ws://x:80", &url) == SDK_URL_OK);
  CHECK(!url.tls && url.port == 80 && !url.port_explicit);
}

/* Every buffer too short for the text (and its NUL) gives 0 and an empty string. */
static void check_short_buffers(void) {
  sdk_url url;
  CHECK(sdk_url_from_address("[2001:db8::1]:8443", &url) == SDK_URL_OK);
  char out[64];
  size_t full = sdk_url_format(&url, out, sizeof out);
  CHECK_STR(out, "ws://[2001:db8::1]:8443/v1/device");
  for (size_t cap = 0; cap <= full; cap++) {
    out[0] = 'x';
    CHECK(sdk_url_format(&url, out, cap) == 0);
    CHECK(cap == 0 || out[0] == '\0');
  }
  CHECK(sdk_url_format(&url, out, full + 1) == full);
  size_t host = sdk_url_host_header(&url, out, sizeof out);
  CHECK_STR(out, "[2001:db8::1]:8443");
  for (size_t cap = 0; cap <= host; cap++) CHECK(sdk_url_host_header(&url, out, cap) == 0);
  CHECK(sdk_url_host_header(&url, out, host + 1) == host);
}

int main(void) {
  check_vectors();
  check_statuses();
  check_short_buffers();
  return check_exit("url_test");
}
