/*
 * The device state machine on a fake port: a clock the test moves, a network the test plays the
 * server on (it reads the device's masked frames and writes server frames), and a few GPIOs.
 * What the conformance suite cannot reach in reasonable time: the 15 s welcome timeout, the 10 s
 * upgrade timeout, the doubling wait after refused credentials, Retry-After, debouncing.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "sdk_device.h"
#include "sdk_port.h"
#include "sdk_protocol.h"

/* ---------------- the fake port */

static uint64_t now_ms = 1000;
static uint32_t random_state = 12345;
static int opens = 0;
static sdk_net_status net = SDK_NET_CLOSED;
static uint8_t to_device[70000];
static size_t to_device_len, to_device_off;
static uint8_t from_device[200000];
static size_t from_device_len;
static uint8_t levels[30];
static bool net_ready_later = false; /* the connection stays "connecting" (a slow TLS handshake) */
static size_t send_budget = SIZE_MAX; /* bytes the network takes from now on: 0 stalls it */
static sdk_device dev;

uint64_t sdk_port_now_ms(void) { return now_ms; }
void sdk_port_random(uint8_t *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    random_state = random_state * 1103515245u + 12345u;
    out[i] = (uint8_t)(random_state >> 16);
  }
}
void sdk_port_log(int level, const char *message) { (void)level, (void)message; }
bool sdk_port_net_open(const char *host, uint16_t port, bool tls) {
  (void)host, (void)port, (void)tls;
  opens++;
  net = net_ready_later ? SDK_NET_CONNECTING : SDK_NET_READY;
  to_device_len = to_device_off = from_device_len = 0;
  return true;
}
sdk_net_status sdk_port_net_status(void) { return net; }
long sdk_port_net_send(const uint8_t *data, size_t len) {
  if (net != SDK_NET_READY) return -1;
  if (len > send_budget) len = send_budget;
  if (send_budget != SIZE_MAX) send_budget -= len;
  memcpy(from_device + from_device_len, data, len);
  from_device_len += len;
  return (long)len;
}
long sdk_port_net_recv(uint8_t *out, size_t cap) {
  if (to_device_off < to_device_len) {
    size_t n = to_device_len - to_device_off < cap ? to_device_len - to_device_off : cap;
    memcpy(out, to_device + to_device_off, n);
    to_device_off += n;
    return (long)n;
  }
  return net == SDK_NET_READY ? 0 : -1;
}
void sdk_port_net_close(void) { net = SDK_NET_CLOSED; }
void sdk_port_gpio_mode(uint8_t pin, bool output, uint8_t pull) { (void)pin, (void)output, (void)pull; }
void sdk_port_gpio_write(uint8_t pin, uint8_t level) {
  if (pin < 30) levels[pin] = level;
}
uint8_t sdk_port_gpio_read(uint8_t pin) { return pin < 30 ? levels[pin] : 0; }
void sdk_port_gpio_watch(uint8_t pin, bool enable) { (void)pin, (void)enable; }
void sdk_port_pwm(uint8_t pin, double frequency, double duty) { (void)pin, (void)frequency, (void)duty; }
uint16_t sdk_port_adc_read(uint8_t channel) { return (uint16_t)(channel * 1000u); }
double sdk_port_temperature(void) { return 21.5; }
void sdk_port_i2c_configure(uint8_t bus, uint8_t sda, uint8_t scl, uint32_t frequency) {
  (void)bus, (void)sda, (void)scl, (void)frequency;
}
sdk_io_status sdk_port_i2c_write(uint8_t bus, uint8_t address, const uint8_t *data, size_t len) {
  (void)bus, (void)data, (void)len;
  return address == 0x50 ? SDK_IO_OK : SDK_IO_NACK;
}
sdk_io_status sdk_port_i2c_read(uint8_t bus, uint8_t address, const uint8_t *reg, uint8_t *out, size_t len) {
  (void)bus, (void)reg;
  memset(out, 7, len);
  return address == 0x50 ? SDK_IO_OK : SDK_IO_NACK;
}
bool sdk_port_i2c_probe(uint8_t bus, uint8_t address) { return bus == 0 && address == 0x50; }
void sdk_port_spi_configure(uint8_t bus, uint8_t sck, uint8_t tx, uint8_t rx, uint32_t frequency, uint8_t mode) {
  (void)bus, (void)sck, (void)tx, (void)rx, (void)frequency, (void)mode;
}
void sdk_port_spi_transfer(uint8_t bus, const uint8_t *tx, uint8_t *rx, size_t len) {
  (void)bus;
  memcpy(rx, tx, len);
}
void sdk_port_uart_configure(uint8_t uart, uint8_t tx, uint8_t rx, uint32_t baud, uint8_t data_bits,
                             uint8_t parity, uint8_t stop_bits) {
  (void)uart, (void)tx, (void)rx, (void)baud, (void)data_bits, (void)parity, (void)stop_bits;
}
void sdk_port_uart_write(uint8_t uart, const uint8_t *data, size_t len) { (void)uart, (void)data, (void)len; }
size_t sdk_port_uart_read(uint8_t uart, uint8_t *out, size_t cap) {
  (void)uart, (void)out, (void)cap;
  return 0;
}
void sdk_port_ws2812_write(uint8_t pin, const uint8_t *rgb, size_t pixels) { (void)pin, (void)rgb, (void)pixels; }

/* ---------------- playing the server */

static void server_bytes(const char *text) {
  size_t n = strlen(text);
  memcpy(to_device + to_device_len, text, n);
  to_device_len += n;
}

static void server_frame(uint8_t opcode, const char *payload, size_t n) {
  uint8_t *p = to_device + to_device_len;
  size_t h = 0;
  p[h++] = (uint8_t)(0x80 | opcode);
  if (n < 126) {
    p[h++] = (uint8_t)n;
  } else {
    p[h++] = 126;
    p[h++] = (uint8_t)(n >> 8);
    p[h++] = (uint8_t)n;
  }
  memcpy(p + h, payload, n);
  to_device_len += h + n;
}

static void server_text(const char *json) { server_frame(SDK_WS_OP_TEXT, json, strlen(json)); }

static void server_close(uint16_t code) {
  char payload[2] = {(char)(code >> 8), (char)(code & 0xFF)};
  server_frame(SDK_WS_OP_CLOSE, payload, 2);
}

static void server_close_reason(uint16_t code, const char *reason) {
  char payload[128];
  size_t n = strlen(reason);
  payload[0] = (char)(code >> 8);
  payload[1] = (char)(code & 0xFF);
  memcpy(payload + 2, reason, n);
  server_frame(SDK_WS_OP_CLOSE, payload, n + 2);
}

/* Accepts the upgrade request the device sent (computing Sec-WebSocket-Accept from its key). */
static void server_accepts(void) {
  char *key = strstr((char *)from_device, "Sec-WebSocket-Key: ");
  CHECK(key != NULL);
  if (!key) return;
  char joined[128];
  snprintf(joined, sizeof joined, "%.24s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key + 19);
  uint8_t digest[20];
  sdk_sha1((const uint8_t *)joined, strlen(joined), digest);
  char accept[32];
  sdk_base64_encode(digest, sizeof digest, accept, sizeof accept);
  char answer[256];
  snprintf(answer, sizeof answer,
           "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Accept: %s\r\n\r\n",
           accept);
  server_bytes(answer);
  from_device_len = 0;
}

/* The n-th text frame the device sent since the last reset of from_device, unmasked. */
static bool device_text(size_t index, char *out, size_t cap) {
  size_t at = 0, seen = 0;
  while (at + 2 <= from_device_len) {
    uint8_t opcode = from_device[at] & 0x0F;
    size_t len = from_device[at + 1] & 0x7F, h = 2;
    if (len == 126) {
      len = (size_t)from_device[at + 2] << 8 | from_device[at + 3];
      h = 4;
    }
    const uint8_t *mask = from_device + at + h;
    const uint8_t *payload = mask + 4;
    if (opcode == SDK_WS_OP_TEXT && seen++ == index) {
      size_t n = len < cap - 1 ? len : cap - 1;
      for (size_t i = 0; i < n; i++) out[i] = (char)(payload[i] ^ mask[i % 4]);
      out[n] = '\0';
      return true;
    }
    at += h + 4 + len;
  }
  return false;
}

static void run_for(uint64_t ms) {
  uint64_t end = now_ms + ms;
  while (now_ms < end) {
    uint32_t wait = sdk_device_poll(&dev);
    (void)sdk_device_poll(&dev);
    now_ms += wait == 0 ? 1 : (wait < end - now_ms ? wait : end - now_ms);
  }
  (void)sdk_device_poll(&dev);
}

static void start(void) {
  sdk_device_options o = {.device_id = "dev_test", .secret = "s3cret", .board = SDK_BOARD_PICO_W,
                          .firmware_version = "9.9.9", .timing = {.base_ms = 250, .cap_ms = 30000}};
  CHECK(sdk_url_from_address("localhost:8080", &o.server) == SDK_URL_OK);
  opens = 0;
  send_budget = SIZE_MAX;
  sdk_device_init(&dev, &o);
}

/* Connects and says welcome; leaves from_device empty. */
static void online(uint32_t heartbeat) {
  run_for(1);
  server_accepts();
  run_for(1);
  char hello[256];
  CHECK(device_text(0, hello, sizeof hello));
  CHECK(strstr(hello, "\"type\":\"hello\"") && strstr(hello, "\"maxFrame\":65535") && strstr(hello, "\"board\":\"pico_w\""));
  char welcome[160];
  snprintf(welcome, sizeof welcome,
           "{\"type\":\"welcome\",\"protocol\":1,\"deviceId\":\"dev_test\",\"serverTime\":\"x\",\"heartbeatSeconds\":%u}",
           heartbeat);
  server_text(welcome);
  run_for(1);
  CHECK(dev.state == SDK_STATE_ONLINE);
  from_device_len = 0;
}

/* ---------------- cases */

static void welcome_timeout(void) {
  start();
  run_for(1);
  server_accepts();
  run_for(14000);
  CHECK(dev.state == SDK_STATE_HELLO);
  run_for(1500);
  CHECK(dev.state == SDK_STATE_IDLE || opens == 2); /* dropped after 15 s without welcome */
}

static void connect_timeout(void) {
  start();
  net_ready_later = true;
  run_for(29000);
  CHECK(dev.state == SDK_STATE_CONNECTING && opens == 1);
  run_for(1500);
  CHECK(dev.state != SDK_STATE_CONNECTING || opens > 1);
  net_ready_later = false;
}

static void upgrade_timeout(void) {
  start();
  run_for(9000);
  CHECK(dev.state == SDK_STATE_UPGRADING);
  run_for(1500);
  CHECK(dev.state != SDK_STATE_UPGRADING || opens > 1);
}

static void refused_credentials_wait_longer_each_time(void) {
  start();
  run_for(1);
  int before = opens;
  server_bytes("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
  run_for(1);
  CHECK(dev.state == SDK_STATE_IDLE);
  uint64_t first = dev.next_attempt_ms - now_ms;
  CHECK(first >= 29000 && first <= 30001);
  run_for(first + 1);
  CHECK(opens == before + 1);
  server_bytes("HTTP/1.1 401 Unauthorized\r\n\r\n");
  run_for(1);
  uint64_t second = dev.next_attempt_ms - now_ms;
  CHECK(second >= 59000 && second <= 60001);
}

static void retry_after_is_a_floor(void) {
  start();
  run_for(1);
  server_bytes("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 20\r\n\r\n");
  run_for(1);
  CHECK(dev.state == SDK_STATE_IDLE);
  CHECK(dev.next_attempt_ms - now_ms >= 19990);
}

static void replaced_waits_the_cap(void) {
  start();
  online(15);
  server_close(SDK_CLOSE_REPLACED);
  run_for(1);
  CHECK(dev.state == SDK_STATE_IDLE);
  CHECK(dev.next_attempt_ms - now_ms >= 29990);
}

/* The delay until the next attempt, once the device is idle again. */
static uint64_t next_delay(void) {
  for (int i = 0; i < 100 && dev.state != SDK_STATE_IDLE; i++) run_for(1);
  CHECK(dev.state == SDK_STATE_IDLE);
  return dev.next_attempt_ms - now_ms;
}

static void restart_retries_within_the_hint_then_backs_off(void) {
  start();
  online(15);
  server_close_reason(SDK_CLOSE_SERVICE_RESTART, "server restarting; retry in 3000-3500 ms");
  uint64_t first = next_delay();
  CHECK(first >= 2990 && first <= 3500);
  /* The new server is not up yet: every failed attempt for 30 s waits within the hint again. */
  uint64_t closed_at = now_ms;
  int failed = 0;
  while (now_ms - closed_at < 25000) {
    int before = opens;
    run_for(dev.next_attempt_ms - now_ms + 1);
    CHECK(opens == before + 1);
    net = SDK_NET_CLOSED; /* the connection is refused */
    uint64_t delay = next_delay();
    CHECK(delay >= 2990 && delay <= 3500);
    failed++;
  }
  CHECK(failed >= 6);
  /* After the window: the normal backoff, going on from the n the window's retries reached (not
   * from its first steps: a fleet whose server is still down spreads out instead of piling up). */
  while (now_ms - closed_at < 30000) {
    run_for(dev.next_attempt_ms - now_ms + 1);
    net = SDK_NET_CLOSED;
    (void)next_delay();
  }
  run_for(dev.next_attempt_ms - now_ms + 1);
  net = SDK_NET_CLOSED;
  CHECK(dev.backoff.attempt >= (uint32_t)failed + 1);
  CHECK(next_delay() < 30000);

  /* Without a hint: the default window; back online ends the window. */
  start();
  online(15);
  server_close_reason(SDK_CLOSE_SERVICE_RESTART, "restarting");
  uint64_t d = next_delay();
  CHECK(d >= SDK_RESTART_RETRY_MIN_MS - 10 && d <= SDK_RESTART_RETRY_MAX_MS);
  run_for(d + 1);
  server_accepts();
  run_for(1);
  server_text("{\"type\":\"welcome\",\"protocol\":1,\"deviceId\":\"dev_test\",\"serverTime\":\"x\",\"heartbeatSeconds\":15}");
  run_for(1);
  CHECK(dev.state == SDK_STATE_ONLINE);
  CHECK(dev.backoff.quick_until_ms == 0);
}

static void a_lost_long_lived_connection_retries_within_two_seconds(void) {
  start();
  online(15);
  /* Many failures before: the ceiling had grown to the cap. */
  dev.backoff.attempt = 20;
  run_for(12000);
  CHECK(dev.state == SDK_STATE_ONLINE);
  net = SDK_NET_CLOSED; /* no close frame: the server was killed */
  uint64_t delay = next_delay();
  CHECK(delay <= SDK_RESTART_RETRY_LOST_MAX_MS);
}

static void silence_drops_after_two_and_a_half_heartbeats(void) {
  start();
  online(2);
  int before = opens;
  run_for(4900);
  CHECK(opens == before && dev.state == SDK_STATE_ONLINE);
  run_for(200);
  CHECK(dev.state != SDK_STATE_ONLINE);
  /* a ping keeps it alive, and is answered with a pong carrying the same bytes */
  start();
  online(2);
  run_for(4000);
  server_frame(SDK_WS_OP_PING, "hb", 2);
  run_for(2000);
  CHECK(dev.state == SDK_STATE_ONLINE);
  CHECK((from_device[0] & 0x0F) == SDK_WS_OP_PONG && (from_device[1] & 0x7F) == 2);
  CHECK((from_device[6] ^ from_device[2]) == 'h' && (from_device[7] ^ from_device[3]) == 'b');
}

static void commands_answered_in_order_with_events_after(void) {
  start();
  online(15);
  server_text("{\"type\":\"gpio_watch\",\"id\":1,\"pin\":8,\"edge\":\"both\"}");
  server_text("{\"type\":\"gpio_write\",\"id\":2,\"pin\":8,\"value\":1}");
  run_for(1);
  sdk_device_pin_changed(&dev, 8, 1); /* as a port would, while the write runs */
  server_text("{\"type\":\"i2c_configure\",\"id\":3,\"bus\":0,\"sda\":4,\"scl\":5,\"frequency\":100000}");
  server_text("{\"type\":\"i2c_read\",\"id\":4,\"bus\":0,\"address\":72,\"length\":2}");
  server_text("{\"type\":\"adc_read\",\"id\":5,\"pin\":27}");
  server_text("{\"type\":\"gpio_read\",\"pin\":2}");
  server_text("{\"type\":\"warp\",\"id\":6}");
  run_for(5);
  char m[512];
  const char *expected[] = {
      "{\"type\":\"result\",\"id\":1,\"value\":null}",
      "{\"type\":\"result\",\"id\":2,\"value\":null}",
      "{\"type\":\"gpio_change\",\"pin\":8,\"value\":1}",
      "{\"type\":\"result\",\"id\":3,\"value\":null}",
      "{\"type\":\"error\",\"id\":4,\"code\":\"io_error\",\"message\":\"no device acknowledged address 0x48 on I2C bus 0 (NACK)\"}",
      "{\"type\":\"result\",\"id\":5,\"value\":{\"volts\":0.8059,\"raw\":1000}}",
      ("{\"type\":\"error\",\"code\":\"malformed\",\"message\":\"a command needs an integer id 1\xE2\x80\x93"
       "2147483647\"}"),
      "{\"type\":\"error\",\"id\":6,\"code\":\"unsupported\",\"message\":\"unknown command \\\"warp\\\"\"}",
  };
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    bool got = device_text(i, m, sizeof m);
    CHECK(got);
    if (got) CHECK_STR(m, expected[i]);
  }
  CHECK(!device_text(sizeof expected / sizeof expected[0], m, sizeof m));
}

static void debounce_reports_the_settled_level_once(void) {
  start();
  online(15);
  server_text("{\"type\":\"gpio_watch\",\"id\":1,\"pin\":15,\"edge\":\"falling\",\"debounceMs\":20}");
  run_for(2);
  from_device_len = 0;
  sdk_device_pin_changed(&dev, 15, 1);
  run_for(5);
  sdk_device_pin_changed(&dev, 15, 0);
  run_for(5);
  sdk_device_pin_changed(&dev, 15, 1); /* bouncing: back to the stable level */
  run_for(30);
  char m[128];
  CHECK(!device_text(0, m, sizeof m));
  sdk_device_pin_changed(&dev, 15, 0);
  run_for(10);
  CHECK(!device_text(0, m, sizeof m)); /* not yet: 20 ms have not passed */
  run_for(15);
  CHECK(device_text(0, m, sizeof m));
  CHECK_STR(m, "{\"type\":\"gpio_change\",\"pin\":15,\"value\":0}");
}

static void stop_closes_with_1000(void) {
  start();
  online(15);
  sdk_device_stop(&dev);
  run_for(2);
  CHECK(sdk_device_stopped(&dev));
  CHECK(from_device[0] == (0x80 | SDK_WS_OP_CLOSE));
  CHECK(((from_device[6] ^ from_device[2]) << 8 | (from_device[7] ^ from_device[3])) == 1000);
  int before = opens;
  run_for(60000);
  CHECK(opens == before);
}

static void a_stalled_network_cannot_keep_a_connection_or_a_stop_alive(void) {
  /* stop while the peer takes no bytes: the close cannot go out, the device stops anyway */
  start();
  online(15);
  send_budget = 0;
  sdk_device_stop(&dev);
  run_for(2000);
  CHECK(!sdk_device_stopped(&dev));
  run_for(1500);
  CHECK(sdk_device_stopped(&dev));
  /* a large answer that stops going out: dropped after 2.5 heartbeats without progress */
  start();
  online(2);
  server_text("{\"type\":\"spi_configure\",\"id\":1,\"bus\":0,\"sck\":18,\"tx\":19,\"rx\":16,\"frequency\":1000}");
  run_for(1);
  static char big[60000];
  size_t at = (size_t)snprintf(big, sizeof big, "{\"type\":\"spi_transfer\",\"id\":2,\"bus\":0,\"data\":[255");
  for (int i = 1; i < 12000; i++) at += (size_t)snprintf(big + at, sizeof big - at, ",255");
  snprintf(big + at, sizeof big - at, "]}");
  server_text(big);
  from_device_len = 0;
  send_budget = 20000; /* the answer (~48 KB) is partly out when the peer stops reading */
  run_for(1);
  CHECK(from_device_len == 20000);
  int before = opens;
  run_for(4900);
  CHECK(dev.state == SDK_STATE_ONLINE && opens == before); /* 2.5 heartbeats since the last progress: not yet */
  run_for(200);
  CHECK(dev.state != SDK_STATE_ONLINE || opens > before);
}

static void frames_that_are_not_commands(void) {
  start();
  online(15);
  server_text("[1,2]");
  char long_type[200];
  snprintf(long_type, sizeof long_type, "{\"type\":\"%070d\",\"id\":9}", 0);
  server_text(long_type);
  run_for(3);
  char m[256];
  CHECK(device_text(0, m, sizeof m));
  CHECK_STR(m, "{\"type\":\"error\",\"code\":\"malformed\",\"message\":\"a frame must be a JSON object\"}");
  CHECK(device_text(1, m, sizeof m));
  CHECK_STR(m, "{\"type\":\"error\",\"id\":9,\"code\":\"unsupported\",\"message\":\"unknown command (a type over 64 characters)\"}");
}

int main(void) {
  connect_timeout();
  a_stalled_network_cannot_keep_a_connection_or_a_stop_alive();
  frames_that_are_not_commands();
  welcome_timeout();
  upgrade_timeout();
  refused_credentials_wait_longer_each_time();
  retry_after_is_a_floor();
  replaced_waits_the_cap();
  restart_retries_within_the_hint_then_backs_off();
  a_lost_long_lived_connection_retries_within_two_seconds();
  silence_drops_after_two_and_a_half_heartbeats();
  commands_answered_in_order_with_events_after();
  debounce_reports_the_settled_level_once();
  stop_closes_with_1000();
  return check_exit("device");
}
