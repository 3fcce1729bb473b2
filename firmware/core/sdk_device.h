/*
 * The device: one connection to the server at a time, driven by sdk_device_poll from the port's
 * main loop. It connects, upgrades, says hello, answers every command in order, reports watched
 * pins and UART input, watches the server's heartbeat and reconnects with backoff after every
 * close except the ones that say not to (docs/firmware.md, "Close codes").
 *
 * All memory is inside sdk_device (no heap): declare one static instance.
 */
#ifndef SDK_DEVICE_H
#define SDK_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sdk_backoff.h"
#include "sdk_commands.h"
#include "sdk_json.h"
#include "sdk_url.h"
#include "sdk_ws.h"

/* The largest frame this build receives (announced as hello.maxFrame, 256-65535). */
#ifndef SDK_DEVICE_MAX_FRAME
#define SDK_DEVICE_MAX_FRAME 65535u
#endif
/* The largest frame this build sends: a spi_transfer result of 12000 bytes needs ~48 KB. */
#ifndef SDK_DEVICE_TX_BYTES
#define SDK_DEVICE_TX_BYTES 65536u
#endif
#define SDK_DEVICE_WATCH_QUEUE 64u    /* gpio_change events waiting to be sent */
#define SDK_DEVICE_UART_CHUNK 4096u   /* bytes per uart_rx message */
#define SDK_DEVICE_HANDSHAKE_BYTES 2048u

typedef struct {
  const char *device_id;
  const char *secret;
  sdk_board board;
  const char *firmware_version; /* hello.firmware */
  sdk_url server;
  sdk_backoff_timing timing; /* 250 ms / 30 s unless a test says otherwise */
} sdk_device_options;

typedef enum {
  SDK_STATE_IDLE,         /* waiting for the next attempt */
  SDK_STATE_CONNECTING,   /* TCP/TLS under way */
  SDK_STATE_UPGRADING,    /* upgrade sent, waiting for 101 */
  SDK_STATE_HELLO,        /* hello sent, waiting for welcome */
  SDK_STATE_ONLINE,       /* welcome received */
  SDK_STATE_STOPPED       /* stopped on purpose (sdk_device_stop) */
} sdk_device_state;

typedef struct {
  uint8_t edge;  /* 0 none (not watched), 1 rising, 2 falling, 3 both */
  uint16_t debounce_ms;
  uint8_t stable;  /* the last level reported (or the level when the watch began) */
  uint8_t latest;  /* the last level the port reported */
  bool pending;    /* a debounce deadline is running */
  uint64_t due_ms;
} sdk_pin_watch;

typedef struct {
  sdk_device_options opt;
  sdk_device_state state;
  sdk_backoff backoff;
  uint64_t next_attempt_ms;
  uint64_t opened_ms;     /* when the attempt began; from the upgrade on, when the upgrade was sent */
  uint64_t welcomed_ms;   /* when welcome arrived */
  uint64_t last_rx_ms;    /* last byte from the server */
  uint32_t heartbeat_s;   /* from welcome */
  bool stopping;          /* sdk_device_stop was called */
  bool close_after_flush; /* a close frame is queued: drop the connection once it is sent */
  uint16_t close_code;    /* the code that ended the connection (picks the next delay) */
  uint32_t revoked_count; /* consecutive 401/4001 refusals */
  uint32_t restart_min_ms; /* the retry window of the last 1012 close (its reason's hint) */
  uint32_t restart_max_ms;
  uint64_t closing_since_ms; /* when the close frame was queued */
  uint64_t last_tx_ms;       /* when a frame was queued or bytes of it were sent */
  /* the socket */
  char ws_key[SDK_WS_KEY_LEN + 1];
  size_t handshake_len;
  sdk_ws_decoder decoder;
  uint8_t rx_chunk[2048];
  size_t rx_chunk_len;
  size_t rx_chunk_off;
  /* outgoing bytes not yet accepted by the network */
  uint8_t tx[SDK_DEVICE_TX_BYTES + SDK_WS_MAX_HEADER];
  size_t tx_len;
  size_t tx_sent;
  uint32_t pins_used; /* pins a command gave a function since boot (gpio_watch makes the others inputs) */
  /* buses configured since boot */
  bool i2c_ready[2];
  bool spi_ready[2];
  bool uart_ready[2];
  sdk_pin_watch watch[30];
  struct { uint8_t pin; uint8_t value; } events[SDK_DEVICE_WATCH_QUEUE];
  size_t events_head;
  size_t events_count;
  uint32_t events_dropped;
  /* big buffers */
  uint8_t msg[SDK_DEVICE_MAX_FRAME];  /* incoming messages, and the upgrade answer before them */
  uint8_t scratch[12288];             /* decoded byte arrays and pixels, UART chunks */
  char text[1024];                    /* error messages being composed (kept off the small stack) */
  char log_line[320];                 /* local log lines being composed */
  sdk_json_object obj;
} sdk_device;

void sdk_device_init(sdk_device *dev, const sdk_device_options *options);
/* Does all work that is due; returns how many ms the port may sleep (waiting on the network)
 * before the next call. Call it again at once after network input arrives. */
uint32_t sdk_device_poll(sdk_device *dev);
/* The network has just come up (a Wi-Fi join): the next attempt starts now, from the first
 * backoff step, instead of waiting out a delay chosen while there was no network. */
void sdk_device_retry_now(sdk_device *dev);
/* Closes with 1000 and stays down; sdk_device_stopped() says when the close has gone out. */
void sdk_device_stop(sdk_device *dev);
bool sdk_device_stopped(const sdk_device *dev);

/* From the port: a watched pin changed level (interrupt context is not allowed: queue it first). */
void sdk_device_pin_changed(sdk_device *dev, uint8_t pin, uint8_t level);

/* Messages from the port's own code, sent when online (false when they cannot go out now). */
bool sdk_device_log(sdk_device *dev, int level, const char *message);
bool sdk_device_state_report(sdk_device *dev, const char *entity_id, const char *json_value);

#endif /* SDK_DEVICE_H */
