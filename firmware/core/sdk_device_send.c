/* The device's send buffer and the messages it sends. */
#include <string.h>

#include "sdk_device_parts.h"
#include "sdk_port.h"
#include "sdk_protocol.h"

static const char *const log_levels[] = SDK_LOG_LEVELS;

/* ---------------- sending */

bool sdk_device_tx_idle(const sdk_device *dev) { return dev->tx_sent == dev->tx_len; }

/* A writer over the payload area of the send buffer (room is kept in front for the header). */
void sdk_device_begin_frame(sdk_device *dev, sdk_json_writer *w) {
  sdk_jw_init(w, (char *)dev->tx + SDK_WS_MAX_HEADER, SDK_DEVICE_TX_BYTES);
}

/* Puts a header in front of the len payload bytes at tx + SDK_WS_MAX_HEADER and masks them. */
static void queue_frame(sdk_device *dev, uint8_t opcode, size_t len) {
  uint8_t mask[4], header[SDK_WS_MAX_HEADER];
  sdk_port_random(mask, sizeof mask);
  size_t hlen = sdk_ws_frame_header(header, opcode, len, mask);
  uint8_t *payload = dev->tx + SDK_WS_MAX_HEADER;
  sdk_ws_mask(payload, len, mask);
  memcpy(payload - hlen, header, hlen);
  dev->tx_sent = SDK_WS_MAX_HEADER - hlen;
  dev->tx_len = SDK_WS_MAX_HEADER + len;
  dev->last_tx_ms = sdk_port_now_ms();
}

bool sdk_device_queue_json(sdk_device *dev, const sdk_json_writer *w) {
  if (!sdk_jw_done(w)) {
    sdk_port_log(SDK_LOG_ERROR, "a message did not fit the send buffer and was dropped");
    return false;
  }
  queue_frame(dev, SDK_WS_OP_TEXT, w->len);
  return true;
}

void sdk_device_queue_control(sdk_device *dev, uint8_t opcode, const uint8_t *data, size_t len) {
  memmove(dev->tx + SDK_WS_MAX_HEADER, data, len);
  queue_frame(dev, opcode, len);
}

void sdk_device_queue_close(sdk_device *dev, uint16_t code, const char *reason) {
  uint8_t payload[125];
  size_t len = code == 1005 ? 0 : sdk_ws_close_payload(payload, code, reason);
  sdk_device_queue_control(dev, SDK_WS_OP_CLOSE, payload, len);
}

void sdk_device_queue_error(sdk_device *dev, bool has_id, int64_t id, const char *code, const char *message) {
  sdk_json_writer w;
  sdk_device_begin_frame(dev, &w);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "type");
  sdk_jw_string(&w, "error");
  if (has_id) {
    sdk_jw_key(&w, "id");
    sdk_jw_int(&w, id);
  }
  sdk_jw_key(&w, "code");
  sdk_jw_string(&w, code);
  sdk_jw_key(&w, "message");
  sdk_jw_string(&w, message);
  sdk_jw_end_object(&w);
  (void)sdk_device_queue_json(dev, &w);
}

/* A close frame is queued: the connection ends once it is sent, or after CLOSE_TIMEOUT_MS. */
void sdk_device_begin_closing(sdk_device *dev, uint16_t code) {
  dev->close_code = code;
  dev->close_after_flush = true;
  dev->closing_since_ms = sdk_port_now_ms();
}

/* Sends what the network takes now; false when the connection broke. */
bool sdk_device_flush(sdk_device *dev) {
  while (!sdk_device_tx_idle(dev)) {
    long n = sdk_port_net_send(dev->tx + dev->tx_sent, dev->tx_len - dev->tx_sent);
    if (n < 0) return false;
    if (n == 0) return true;
    dev->tx_sent += (size_t)n;
    dev->last_tx_ms = sdk_port_now_ms();
  }
  return true;
}

/* ---------------- messages from the port's own code */

bool sdk_device_log(sdk_device *dev, int level, const char *message) {
  if (dev->state != SDK_STATE_ONLINE || !sdk_device_tx_idle(dev) || level < 0 || level > 3) return false;
  sdk_json_writer w;
  sdk_device_begin_frame(dev, &w);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "type");
  sdk_jw_string(&w, "log");
  sdk_jw_key(&w, "level");
  sdk_jw_string(&w, log_levels[level]);
  sdk_jw_key(&w, "message");
  size_t n = strlen(message);
  sdk_jw_string_n(&w, message, n > SDK_LOG_MESSAGE_MAX_LENGTH ? SDK_LOG_MESSAGE_MAX_LENGTH : n);
  sdk_jw_end_object(&w);
  return sdk_device_queue_json(dev, &w);
}

bool sdk_device_state_report(sdk_device *dev, const char *entity_id, const char *json_value) {
  if (dev->state != SDK_STATE_ONLINE || !sdk_device_tx_idle(dev)) return false;
  sdk_json_writer w;
  sdk_device_begin_frame(dev, &w);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "type");
  sdk_jw_string(&w, "state");
  sdk_jw_key(&w, "entityId");
  sdk_jw_string(&w, entity_id);
  sdk_jw_key(&w, "value");
  sdk_jw_raw(&w, json_value, strlen(json_value));
  sdk_jw_end_object(&w);
  return sdk_device_queue_json(dev, &w);
}
