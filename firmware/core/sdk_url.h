/*
 * The server address → socket URL rule of docs/protocol.md (deviceSocketUrl in @sdk/protocol):
 * an explicit port means ws://, a bare hostname wss:// on 443, a full URL keeps its scheme
 * (http/ws → ws, https/wss → wss), host and port; the path is always /v1/device.
 * firmware/tests/url_test.c checks it against packages/protocol/vectors/device-socket-url.jsonl.
 * Unlike deviceSocketUrl it refuses non-ASCII bytes, a user name, password, query or fragment in
 * a full URL and hosts past SDK_URL_HOST_MAX characters (docs/firmware.md, "Server address").
 */
#ifndef SDK_URL_H
#define SDK_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SDK_URL_HOST_MAX 253

typedef struct {
  bool tls;                       /* wss:// */
  char host[SDK_URL_HOST_MAX + 1]; /* hostname or address, IPv6 without brackets */
  uint16_t port;                  /* always set: 80/443 when the URL names none */
  bool port_explicit;             /* the port appears in the URL (it differs from the scheme's default) */
} sdk_url;

typedef enum {
  SDK_URL_OK = 0,
  SDK_URL_EMPTY,
  SDK_URL_BAD_SCHEME, /* a scheme other than http, https, ws, wss ("ftp://…") */
  SDK_URL_BAD_HOST,
  SDK_URL_BAD_PORT
} sdk_url_status;

/* On failure *out is zeroed. */
sdk_url_status sdk_url_from_address(const char *address, sdk_url *out);
/* The URL as deviceSocketUrl prints it: "wss://sdk.example.com/v1/device". 0 when cap is short. */
size_t sdk_url_format(const sdk_url *url, char *out, size_t cap);
/* The Host header: host, [v6] or either with ":port" when the port is explicit. 0 when cap is short. */
size_t sdk_url_host_header(const sdk_url *url, char *out, size_t cap);

#endif /* SDK_URL_H */
