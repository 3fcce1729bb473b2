#include "sdk_device_parts.h"

#include <string.h>

#include "sdk_command_run.h"
#include "sdk_port.h"
#include "sdk_protocol.h"
#include "sdk_text.h"

/* DNS, TCP and a TLS handshake (seconds on a Cortex-M0+); then the upgrade and hello clock starts. */
#define CONNECT_TIMEOUT_MS 30000u
#define UPGRADE_TIMEOUT_MS 10000u
#define WELCOME_TIMEOUT_MS 15000u
#define STABLE_CONNECTION_MS 10000u
#define DEFAULT_HEARTBEAT_S 15u
#define REVOKED_MAX_FACTOR 32u
#define DEVICE_PATH "/v1/device"
#define CLOSE_TIMEOUT_MS 3000u

static uint32_t random32(void) {
  uint8_t b[4];
  sdk_port_random(b, sizeof b);
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A local log line "a" + b[0..b_len), composed in the device (not on the small stack). */
static void local_log(sdk_device *dev, int level, const char *a, const char *b, size_t b_len) {
  sdk_text t;
  sdk_text_init(&t, dev->log_line, sizeof dev->log_line);
  sdk_text_add(&t, a);
  sdk_text_add_n(&t, b, b_len);
  sdk_port_log(level, dev->log_line);
}

static void local_log2(sdk_device *dev, int level, const char *a, const char *b) {
  local_log(dev, level, a, b, strlen(b));
}

/* ---------------- connection lifecycle */

static void schedule(sdk_device *dev, uint32_t delay_ms) {
  dev->state = SDK_STATE_IDLE;
  dev->next_attempt_ms = sdk_port_now_ms() + delay_ms;
  dev->tx_len = dev->tx_sent = 0;
}

/* Drops the connection and picks when to try again, from how it ended (docs/firmware.md). */
static void drop(sdk_device *dev, uint16_t code, uint32_t retry_after_s) {
  sdk_port_net_close();
  uint64_t now = sdk_port_now_ms();
  /* The server's 1012 decides even when the TCP connection ends before our close frame is out. */
  if (code == 1006 && dev->close_after_flush && dev->close_code == SDK_CLOSE_SERVICE_RESTART)
    code = SDK_CLOSE_SERVICE_RESTART;
  bool stable = dev->welcomed_ms && now - dev->welcomed_ms >= STABLE_CONNECTION_MS;
  if (stable) sdk_backoff_reset(&dev->backoff);
  dev->welcomed_ms = 0;
  if (dev->stopping) {
    dev->state = SDK_STATE_STOPPED;
    return;
  }
  uint32_t cap = dev->opt.timing.cap_ms;
  if (code == SDK_CLOSE_REPLACED) {
    /* A newer connection with these credentials is live: maybe a second board shares them. */
    sdk_port_log(SDK_LOG_WARN, "replaced by a newer connection with the same credentials; waiting the backoff cap");
    schedule(dev, cap + random32() % (cap / 10 + 1));
    return;
  }
  if (code == SDK_CLOSE_REVOKED || code == 401) {
    sdk_port_log(SDK_LOG_ERROR, "the server refuses these credentials (revoked or wrong): re-provision the device");
    uint32_t factor = 1u << (dev->revoked_count < 5 ? dev->revoked_count : 5);
    if (dev->revoked_count < 31) dev->revoked_count++;
    schedule(dev, cap * (factor > REVOKED_MAX_FACTOR ? REVOKED_MAX_FACTOR : factor));
    return;
  }
  if (code == SDK_CLOSE_SERVICE_RESTART) {
    /* The server restarts: retry within its hint (kept when the close frame came) for a while. */
    sdk_backoff_quick(&dev->backoff, now, SDK_RESTART_RETRY_WINDOW_MS, dev->restart_min_ms, dev->restart_max_ms);
  } else if (code == 1006 && stable) {
    /* A long-lived connection ended without a close frame (a killed server): back within seconds. */
    sdk_backoff_cap_for(&dev->backoff, now, SDK_RESTART_RETRY_LOST_WINDOW_MS, SDK_RESTART_RETRY_LOST_MAX_MS);
  }
  uint32_t delay = sdk_backoff_next_at(&dev->backoff, now, random32());
  uint64_t floor = (uint64_t)retry_after_s * 1000u;
  if (floor > cap) floor = cap;
  if (delay < floor) delay = (uint32_t)floor;
  schedule(dev, delay);
}

static void start_attempt(sdk_device *dev) {
  dev->opened_ms = sdk_port_now_ms();
  dev->welcomed_ms = 0;
  dev->tx_len = dev->tx_sent = 0;
  dev->rx_chunk_len = dev->rx_chunk_off = 0;
  dev->handshake_len = 0;
  dev->close_after_flush = false;
  if (!sdk_port_net_open(dev->opt.server.host, dev->opt.server.port, dev->opt.server.tls)) {
    drop(dev, 1006, 0);
    return;
  }
  dev->state = SDK_STATE_CONNECTING;
}

static void send_upgrade(sdk_device *dev) {
  char host[SDK_URL_HOST_MAX + 10];
  uint8_t nonce[16];
  sdk_port_random(nonce, sizeof nonce);
  if (sdk_url_host_header(&dev->opt.server, host, sizeof host) == 0) {
    drop(dev, 1006, 0);
    return;
  }
  size_t n = sdk_ws_build_upgrade((char *)dev->tx, sizeof dev->tx, host, DEVICE_PATH, dev->opt.device_id,
                                  dev->opt.secret, nonce, dev->ws_key);
  if (n == 0) {
    sdk_port_log(SDK_LOG_ERROR, "the upgrade request does not fit the send buffer");
    drop(dev, 1006, 0);
    return;
  }
  dev->tx_sent = 0;
  dev->tx_len = n;
  dev->state = SDK_STATE_UPGRADING;
  dev->opened_ms = sdk_port_now_ms(); /* the 10 s upgrade and 15 s welcome clocks start here */
}

static void send_hello(sdk_device *dev) {
  sdk_json_writer w;
  sdk_device_begin_frame(dev, &w);
  sdk_jw_begin_object(&w);
  sdk_jw_key(&w, "type");
  sdk_jw_string(&w, "hello");
  sdk_jw_key(&w, "protocol");
  sdk_jw_int(&w, SDK_PROTOCOL_VERSION);
  sdk_jw_key(&w, "firmware");
  sdk_jw_string(&w, dev->opt.firmware_version);
  sdk_jw_key(&w, "board");
  sdk_jw_string(&w, sdk_board_id(dev->opt.board));
  sdk_jw_key(&w, "maxFrame");
  sdk_jw_int(&w, SDK_DEVICE_MAX_FRAME);
  sdk_jw_end_object(&w);
  (void)sdk_device_queue_json(dev, &w);
  dev->state = SDK_STATE_HELLO;
}

/* Reads the upgrade answer into msg; moves bytes after the header block to the frame input. */
static void read_upgrade(sdk_device *dev) {
  size_t room = SDK_DEVICE_HANDSHAKE_BYTES - dev->handshake_len;
  long n = sdk_port_net_recv(dev->msg + dev->handshake_len, room);
  if (n < 0) {
    sdk_port_log(SDK_LOG_WARN, "the server closed the connection during the upgrade");
    drop(dev, 1006, 0);
    return;
  }
  if (n == 0) return;
  dev->handshake_len += (size_t)n;
  sdk_ws_handshake hs;
  sdk_ws_hs_status st = sdk_ws_parse_upgrade_response((const char *)dev->msg, dev->handshake_len, dev->ws_key, &hs);
  switch (st) {
    case SDK_WS_HS_INCOMPLETE:
      if (dev->handshake_len == SDK_DEVICE_HANDSHAKE_BYTES) {
        sdk_port_log(SDK_LOG_WARN, "the upgrade answer is too long");
        drop(dev, 1006, 0);
      }
      return;
    case SDK_WS_HS_SWITCHED: {
      size_t extra = dev->handshake_len - hs.header_len;
      memcpy(dev->rx_chunk, dev->msg + hs.header_len, extra);
      dev->rx_chunk_len = extra;
      dev->rx_chunk_off = 0;
      sdk_ws_decoder_init(&dev->decoder, dev->msg, SDK_DEVICE_MAX_FRAME);
      dev->last_rx_ms = sdk_port_now_ms();
      send_hello(dev);
      return;
    }
    case SDK_WS_HS_UNAUTHORIZED:
      drop(dev, 401, hs.retry_after_s);
      return;
    case SDK_WS_HS_REFUSED:
      sdk_port_log(SDK_LOG_WARN, "the server refused the upgrade");
      drop(dev, 1006, hs.retry_after_s);
      return;
    case SDK_WS_HS_INVALID:
      local_log2(dev, SDK_LOG_WARN, "bad upgrade answer: ", hs.problem ? hs.problem : "?");
      drop(dev, 1006, 0);
      return;
  }
}

/* ---------------- incoming messages */

static void handle_welcome(sdk_device *dev) {
  int64_t hb = DEFAULT_HEARTBEAT_S;
  const sdk_json_field *f = sdk_json_find(&dev->obj, "heartbeatSeconds");
  if (f) (void)sdk_json_get_int(f, 1, 3600, &hb);
  dev->heartbeat_s = (uint32_t)hb;
  dev->welcomed_ms = sdk_port_now_ms();
  dev->revoked_count = 0;
  sdk_backoff_end_quick(&dev->backoff);
  dev->state = SDK_STATE_ONLINE;
  sdk_port_log(SDK_LOG_INFO, "online");
}

static void handle_command(sdk_device *dev, int command, int64_t id) {
  char *message = dev->text;
  const size_t cap = sizeof dev->text;
  sdk_json_writer w;
  const char *code = NULL;
  if (!sdk_command_check(dev->opt.board, command, &dev->obj, message, cap)) {
    code = SDK_DEVICE_ERROR_INVALID_ARGUMENT;
  } else {
    sdk_device_begin_frame(dev, &w);
    sdk_jw_begin_object(&w);
    sdk_jw_key(&w, "type");
    sdk_jw_string(&w, "result");
    sdk_jw_key(&w, "id");
    sdk_jw_int(&w, id);
    sdk_jw_key(&w, "value");
    code = sdk_command_run(dev, command, &dev->obj, &w, message, cap);
    if (!code) {
      sdk_jw_end_object(&w);
      if (sdk_device_queue_json(dev, &w)) return;
      code = SDK_DEVICE_ERROR_IO_ERROR;
      sdk_text t;
      sdk_text_init(&t, message, cap);
      sdk_text_add(&t, "the result does not fit in one frame");
    }
  }
  sdk_device_queue_error(dev, true, id, code, message);
}

static void handle_text(sdk_device *dev, const uint8_t *data, size_t len) {
  sdk_json_status parsed = sdk_json_parse_object((const char *)data, len, &dev->obj);
  if (parsed != SDK_JSON_OK) {
    const char *why = parsed == SDK_JSON_ERR_NOT_OBJECT ? SDK_FRAME_NOT_OBJECT
                      : parsed == SDK_JSON_ERR_SYNTAX   ? SDK_FRAME_NOT_JSON
                                                        : "the frame has more than 32 fields or nests deeper than 64 levels";
    sdk_device_queue_error(dev, false, 0, SDK_DEVICE_ERROR_MALFORMED, why);
    return;
  }
  const sdk_json_field *type = sdk_json_find(&dev->obj, "type");
  char name[SDK_MESSAGE_TYPE_MAX_LENGTH + 1];
  size_t name_len = 0;
  sdk_json_status typed = type ? sdk_json_get_string(type, name, sizeof name, &name_len) : SDK_JSON_ERR_TYPE;
  if (typed == SDK_JSON_ERR_TOO_LONG) {
    memcpy(name, "(a type over 64 characters)", 28); /* no command has such a name */
    name_len = 27;
  } else if (typed != SDK_JSON_OK) {
    sdk_device_queue_error(dev, false, 0, SDK_DEVICE_ERROR_MALFORMED, SDK_FRAME_NO_TYPE);
    return;
  }
  if (strcmp(name, "welcome") == 0) {
    handle_welcome(dev);
    return;
  }
  if (strcmp(name, "error") == 0) {
    const sdk_json_field *m = sdk_json_find(&dev->obj, "message");
    if (!m || sdk_json_get_string(m, dev->text, sizeof dev->text, NULL) != SDK_JSON_OK) dev->text[0] = '\0';
    local_log2(dev, SDK_LOG_WARN, "the server refused a frame: ", dev->text);
    return;
  }
  const sdk_json_field *id_field = sdk_json_find(&dev->obj, "id");
  int64_t id = 0;
  if (!id_field || sdk_json_get_int(id_field, SDK_COMMAND_ID_MIN, SDK_COMMAND_ID_MAX, &id) != SDK_JSON_OK) {
    sdk_device_queue_error(dev, false, 0, SDK_DEVICE_ERROR_MALFORMED, "a command needs an integer id 1" "\xE2\x80\x93" "2147483647");
    return;
  }
  int command = sdk_command_find(name, name_len);
  if (command < 0) {
    sdk_text t;
    sdk_text_init(&t, dev->text, sizeof dev->text);
    sdk_text_add(&t, "unknown command ");
    if (typed == SDK_JSON_OK) sdk_text_add(&t, "\"");
    sdk_text_add(&t, name);
    if (typed == SDK_JSON_OK) sdk_text_add(&t, "\"");
    sdk_device_queue_error(dev, true, id, SDK_DEVICE_ERROR_UNSUPPORTED, dev->text);
    return;
  }
  handle_command(dev, command, id);
}

/* Handles one decoded WebSocket event; false when the connection is over. */
static bool handle_event(sdk_device *dev, const sdk_ws_event *ev) {
  switch (ev->kind) {
    case SDK_WS_EV_TEXT:
      handle_text(dev, ev->data, ev->len);
      return true;
    case SDK_WS_EV_BINARY:
      sdk_port_log(SDK_LOG_WARN, "a binary frame from the server was ignored");
      return true;
    case SDK_WS_EV_PING:
      sdk_device_queue_control(dev, SDK_WS_OP_PONG, ev->data, ev->len);
      return true;
    case SDK_WS_EV_PONG:
    case SDK_WS_EV_NONE:
      return true;
    case SDK_WS_EV_CLOSE:
      local_log(dev, SDK_LOG_INFO, "the server closed the connection: ", (const char *)ev->data, ev->len);
      if (ev->close_code == SDK_CLOSE_SERVICE_RESTART) {
        dev->restart_min_ms = SDK_RESTART_RETRY_MIN_MS;
        dev->restart_max_ms = SDK_RESTART_RETRY_MAX_MS;
        if (!sdk_backoff_parse_hint((const char *)ev->data, ev->len, &dev->restart_min_ms, &dev->restart_max_ms))
          sdk_port_log(SDK_LOG_INFO, "restart without a retry hint: retrying within the default window");
      }
      sdk_device_queue_close(dev, ev->close_code, "");
      sdk_device_begin_closing(dev, ev->close_code);
      return false;
    case SDK_WS_EV_ERROR:
      local_log2(dev, SDK_LOG_WARN, "closing: ", ev->problem ? ev->problem : "protocol error");
      sdk_device_queue_close(dev, ev->close_code, ev->problem ? ev->problem : "");
      sdk_device_begin_closing(dev, 1006);
      return false;
  }
  return true;
}

/* ---------------- the loop */

/* Reads and handles frames until the send buffer holds something or input runs dry. */
static void pump(sdk_device *dev) {
  for (int rounds = 0; rounds < 64; rounds++) {
    if (!sdk_device_flush(dev)) {
      drop(dev, 1006, 0);
      return;
    }
    if (!sdk_device_tx_idle(dev)) return;
    if (dev->close_after_flush) {
      drop(dev, dev->close_code, 0);
      return;
    }
    if (dev->stopping) {
      sdk_device_queue_close(dev, SDK_CLOSE_NORMAL, "device stopping");
      sdk_device_begin_closing(dev, SDK_CLOSE_NORMAL);
      continue;
    }
    if (dev->state == SDK_STATE_ONLINE && sdk_device_queue_next_event(dev)) continue;
    if (dev->rx_chunk_off == dev->rx_chunk_len) {
      long n = sdk_port_net_recv(dev->rx_chunk, sizeof dev->rx_chunk);
      if (n < 0) {
        sdk_port_log(SDK_LOG_WARN, "the connection was lost");
        drop(dev, 1006, 0);
        return;
      }
      if (n == 0) return;
      dev->rx_chunk_len = (size_t)n;
      dev->rx_chunk_off = 0;
      dev->last_rx_ms = sdk_port_now_ms();
    }
    sdk_ws_event ev;
    dev->rx_chunk_off += sdk_ws_decode(&dev->decoder, dev->rx_chunk + dev->rx_chunk_off,
                                       dev->rx_chunk_len - dev->rx_chunk_off, &ev);
    (void)handle_event(dev, &ev);
  }
}

static uint32_t until(uint64_t now, uint64_t when) {
  if (when <= now) return 0;
  uint64_t d = when - now;
  return d > 1000 ? 1000 : (uint32_t)d;
}

uint32_t sdk_device_poll(sdk_device *dev) {
  uint64_t now = sdk_port_now_ms();
  switch (dev->state) {
    case SDK_STATE_STOPPED:
      return 1000;
    case SDK_STATE_IDLE:
      if (dev->stopping) {
        dev->state = SDK_STATE_STOPPED;
        return 0;
      }
      if (now < dev->next_attempt_ms) return until(now, dev->next_attempt_ms);
      start_attempt(dev);
      return 0;
    case SDK_STATE_CONNECTING: {
      sdk_net_status st = sdk_port_net_status();
      if (st == SDK_NET_READY) {
        if (dev->stopping) {
          drop(dev, SDK_CLOSE_NORMAL, 0);
          return 0;
        }
        send_upgrade(dev);
        return 0;
      }
      if (st != SDK_NET_CONNECTING || now - dev->opened_ms >= CONNECT_TIMEOUT_MS || dev->stopping) {
        if (st == SDK_NET_CONNECTING && !dev->stopping) sdk_port_log(SDK_LOG_WARN, "connecting timed out (30 s)");
        drop(dev, 1006, 0);
        return 0;
      }
      return until(now, dev->opened_ms + CONNECT_TIMEOUT_MS);
    }
    case SDK_STATE_UPGRADING:
      if (!sdk_device_flush(dev)) {
        drop(dev, 1006, 0);
        return 0;
      }
      if (dev->stopping) {
        drop(dev, SDK_CLOSE_NORMAL, 0);
        return 0;
      }
      if (sdk_device_tx_idle(dev)) read_upgrade(dev);
      if (dev->state == SDK_STATE_UPGRADING && now - dev->opened_ms >= UPGRADE_TIMEOUT_MS) {
        sdk_port_log(SDK_LOG_WARN, "no upgrade answer within 10 s");
        drop(dev, 1006, 0);
      }
      return dev->state == SDK_STATE_UPGRADING ? until(now, dev->opened_ms + UPGRADE_TIMEOUT_MS) : 0;
    case SDK_STATE_HELLO:
    case SDK_STATE_ONLINE: {
      sdk_device_settle_debounced(dev, now);
      pump(dev);
      now = sdk_port_now_ms();
      if (dev->state != SDK_STATE_HELLO && dev->state != SDK_STATE_ONLINE) return 0;
      if (dev->close_after_flush) {
        /* A peer that stops reading must not keep a closing connection (or a stop) alive. */
        if (now - dev->closing_since_ms >= CLOSE_TIMEOUT_MS) {
          drop(dev, dev->close_code, 0);
          return 0;
        }
        return until(now, dev->closing_since_ms + CLOSE_TIMEOUT_MS);
      }
      if (dev->state == SDK_STATE_HELLO && now - dev->opened_ms >= WELCOME_TIMEOUT_MS) {
        sdk_port_log(SDK_LOG_WARN, "no welcome within 15 s");
        drop(dev, 1006, 0);
        return 0;
      }
      /* Silence: nothing from the server, and (while a frame is going out) no sending progress
         either: input is not read while a frame is being sent, so progress stands in for it. */
      uint64_t alive = dev->last_rx_ms;
      if (!sdk_device_tx_idle(dev) && dev->last_tx_ms > alive) alive = dev->last_tx_ms;
      uint64_t silent_at = alive + (uint64_t)dev->heartbeat_s * 2500u;
      if (dev->state == SDK_STATE_ONLINE && now >= silent_at) {
        sdk_port_log(SDK_LOG_WARN, sdk_device_tx_idle(dev) ? "the server went silent (no ping or frame for 2.5 heartbeats)"
                                                : "the server stopped taking data for 2.5 heartbeats");
        drop(dev, 1006, 0);
        return 0;
      }
      if (sdk_device_tx_idle(dev) && dev->state == SDK_STATE_ONLINE && dev->events_count > 0) return 0;
      uint64_t next = dev->state == SDK_STATE_HELLO ? dev->opened_ms + WELCOME_TIMEOUT_MS : silent_at;
      for (int pin = 0; pin < 30; pin++)
        if (dev->watch[pin].pending && dev->watch[pin].due_ms < next) next = dev->watch[pin].due_ms;
      uint32_t wait = until(now, next);
      return wait > 50 ? 50 : wait; /* UART input is polled */
    }
  }
  return 0;
}

void sdk_device_init(sdk_device *dev, const sdk_device_options *options) {
  memset(dev, 0, sizeof *dev);
  dev->opt = *options;
  /* Never a tight loop: at least 1 ms of backoff, and a cap no smaller than the base. */
  if (dev->opt.timing.base_ms == 0) dev->opt.timing.base_ms = 1;
  if (dev->opt.timing.cap_ms < dev->opt.timing.base_ms) dev->opt.timing.cap_ms = dev->opt.timing.base_ms;
  sdk_backoff_init(&dev->backoff, dev->opt.timing);
  dev->state = SDK_STATE_IDLE;
  dev->next_attempt_ms = 0;
  dev->heartbeat_s = DEFAULT_HEARTBEAT_S;
}

void sdk_device_stop(sdk_device *dev) { dev->stopping = true; }

void sdk_device_retry_now(sdk_device *dev) {
  sdk_backoff_reset(&dev->backoff);
  if (dev->state == SDK_STATE_IDLE && !dev->revoked_count) dev->next_attempt_ms = sdk_port_now_ms();
}

bool sdk_device_stopped(const sdk_device *dev) { return dev->state == SDK_STATE_STOPPED; }
