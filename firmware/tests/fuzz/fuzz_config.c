/*
 * sdk_config_parse and sdk_url_from_address on arbitrary input. The first byte picks the mode:
 * 0 the rest is a raw block; 1 the rest is a payload, wrapped in a header with its correct CRC so
 * the field reader is reached; 2 the rest is a server address (NUL-terminated here).
 */
#include <stdlib.h>
#include <string.h>

#include "sdk_config.h"
#include "sdk_protocol.h"
#include "sdk_url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t block[SDK_CONFIG_BLOCK_BYTES];
static char address[1024];

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void check_config(const uint8_t *blk, size_t len) {
  sdk_config config;
  const char *field = NULL;
  sdk_config_status status = sdk_config_parse(blk, len, &config, &field);
  if (field == NULL || sdk_config_status_text(status)[0] == '\0') abort();
  if (status != SDK_CONFIG_OK) {
    static const sdk_config zero;
    if (memcmp(&config, &zero, sizeof zero) != 0) abort();
    return;
  }
  if (field[0] != '\0') abort();
  if (strlen(config.device_id) == 0 || strlen(config.server) == 0 || strlen(config.wifi_country) != 2) abort();
  if (config.ca_der && (config.ca_der < blk || config.ca_der + config.ca_der_len > blk + len)) abort();
}

static void check_url(const uint8_t *data, size_t size) {
  if (size >= sizeof address) size = sizeof address - 1;
  memcpy(address, data, size);
  address[size] = '\0';
  sdk_url url;
  if (sdk_url_from_address(address, &url) != SDK_URL_OK) return;
  char printed[400], host[300];
  size_t n = sdk_url_format(&url, printed, sizeof printed);
  if (n == 0 || n != strlen(printed) || sdk_url_host_header(&url, host, sizeof host) == 0) abort();
  /* What the firmware prints reads back as the same URL. */
  sdk_url again;
  if (sdk_url_from_address(printed, &again) != SDK_URL_OK) abort();
  if (again.tls != url.tls || again.port != url.port || again.port_explicit != url.port_explicit ||
      strcmp(again.host, url.host) != 0) {
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  uint8_t mode = data[0] % 3;
  data++;
  size--;
  if (mode == 0) {
    check_config(data, size);
  } else if (mode == 1) {
    if (size > SDK_CONFIG_BLOCK_BYTES - SDK_CONFIG_HEADER_BYTES) return 0;
    memset(block, 0xFF, sizeof block);
    put_u32(block, SDK_CONFIG_MAGIC);
    block[4] = SDK_CONFIG_LAYOUT_VERSION;
    block[5] = 0;
    block[6] = (uint8_t)SDK_CONFIG_HEADER_BYTES;
    block[7] = 0;
    put_u32(block + 8, (uint32_t)size);
    if (size) memcpy(block + SDK_CONFIG_HEADER_BYTES, data, size);
    put_u32(block + 12, sdk_crc32(block + SDK_CONFIG_HEADER_BYTES, size));
    check_config(block, sizeof block);
  } else {
    check_url(data, size);
  }
  return 0;
}
