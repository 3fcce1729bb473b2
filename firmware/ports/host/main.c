/*
 * sdk-firmware-host: the firmware core on Linux, a Pico W or Pico 2 W as far as the server can
 * tell. Configuration comes from a config block file (--config, the same bytes a Pico reads from
 * flash) and/or flags; stdin carries the control protocol of packages/conformance/README.md,
 * stdout its answers, stderr the local log.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_control.h"
#include "host_net.h"
#include "host_peripherals.h"
#include "sdk_config.h"
#include "sdk_device.h"
#include "sdk_port.h"
#include "sdk_url.h"

static sdk_device device;
static sdk_config config;
static uint8_t config_bytes[8192];
static volatile sig_atomic_t signalled = 0;

/* A control line: `uart` with 12,000 bytes of hex is 24 KB. */
#define CONTROL_LINE_MAX ((size_t)64 * 1024)

static void on_signal(int sig) {
  (void)sig;
  signalled = 1;
}

static void usage(FILE *out) {
  fputs(
      "usage: sdk-firmware-host [--config FILE] [--url URL] [--device ID] [--secret SECRET]\n"
      "                         [--board pico_w|pico2_w] [--backoff-base-ms N] [--backoff-cap-ms N]\n"
      "                         [--no-control]\n"
      "\n"
      "Runs the sdk device firmware on Linux: it connects to the server and answers commands with\n"
      "in-memory peripherals. --config reads a config block (docs/firmware.md); flags override it.\n"
      "--url takes a server address or URL (192.168.1.10:8080, https://sdk.example.com).\n"
      "stdin: control lines (input, uart, pin, pixels, i2c, adc, temperature, stop); stdout: answers.\n"
      "The device stops when stdin ends, unless --no-control (stdin ignored; stop with SIGTERM).\n",
      out);
}

static bool parse_u32(const char *text, uint32_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long v = strtoul(text, &end, 10);
  if (errno || !end || *end || end == text || v < 1 || v > 3600000ul) return false;
  *out = (uint32_t)v;
  return true;
}

static bool load_config(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "sdk-firmware-host: cannot open %s: %s\n", path, strerror(errno));
    return false;
  }
  size_t n = fread(config_bytes, 1, sizeof config_bytes, f);
  fclose(f);
  const char *field = "";
  sdk_config_status st = sdk_config_parse(config_bytes, n, &config, &field);
  if (st != SDK_CONFIG_OK) {
    fprintf(stderr, "sdk-firmware-host: %s: %s%s%s\n", path, sdk_config_status_text(st), *field ? ": " : "", field);
    return false;
  }
  return true;
}

/* One control line: its answer goes to stdout at once. */
static void answer_line(char *line, size_t len, bool overlong) {
  static char answer[HOST_CONTROL_ANSWER_MAX];
  line[len] = '\0';
  if (len > 0 && line[len - 1] == '\r') line[len - 1] = '\0';
  bool stop = false;
  if (overlong) {
    (void)snprintf(answer, sizeof answer, "error the line is longer than %zu bytes", CONTROL_LINE_MAX);
  } else {
    stop = host_control_line(line, answer, sizeof answer);
  }
  printf("%s\n", answer);
  fflush(stdout);
  if (stop) sdk_device_stop(&device);
}

/* Reads what stdin has (poll said it would not block) and answers every complete line. Returns
 * false at end of input, after answering a last line that had no newline. */
static bool read_control(void) {
  static char line[CONTROL_LINE_MAX + 1];
  static size_t len = 0;
  static bool overlong = false;
  char chunk[4096];
  ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  if (n == 0) {
    if (len > 0 || overlong) answer_line(line, len, overlong);
    len = 0;
    return false;
  }
  for (ssize_t i = 0; i < n; i++) {
    if (chunk[i] != '\n') {
      if (len < CONTROL_LINE_MAX) line[len++] = chunk[i];
      else overlong = true;
      continue;
    }
    answer_line(line, len, overlong);
    len = 0;
    overlong = false;
  }
  return true;
}

int main(int argc, char **argv) {
  const char *url = NULL, *device_id = NULL, *secret = NULL, *board_id = "pico_w", *config_path = NULL;
  sdk_backoff_timing timing = {.base_ms = 250, .cap_ms = 30000};
  bool control = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--no-control")) {
      control = false;
      continue;
    }
    if (!strcmp(a, "--version")) {
      printf("%s\n", SDK_FIRMWARE_VERSION);
      return 0;
    }
    if (!v) {
      fprintf(stderr, "sdk-firmware-host: %s needs a value (or unknown option)\n", a);
      usage(stderr);
      return 2;
    }
    i++;
    if (!strcmp(a, "--config")) config_path = v;
    else if (!strcmp(a, "--url")) url = v;
    else if (!strcmp(a, "--device")) device_id = v;
    else if (!strcmp(a, "--secret")) secret = v;
    else if (!strcmp(a, "--board")) board_id = v;
    else if (!strcmp(a, "--backoff-base-ms") && parse_u32(v, &timing.base_ms)) continue;
    else if (!strcmp(a, "--backoff-cap-ms") && parse_u32(v, &timing.cap_ms)) continue;
    else {
      fprintf(stderr, "sdk-firmware-host: bad option %s %s\n", a, v);
      usage(stderr);
      return 2;
    }
  }
  if (config_path && !load_config(config_path)) return 1;
  if (!url) url = config_path ? config.server : NULL;
  if (!device_id) device_id = config_path ? config.device_id : NULL;
  if (!secret) secret = config_path ? config.secret : NULL;
  if (!url || !device_id || !secret || !*device_id || !*secret) {
    fputs("sdk-firmware-host: the server address, device id and secret are needed (--config or flags)\n", stderr);
    usage(stderr);
    return 2;
  }
  int board = sdk_board_find(board_id);
  if (board < 0) {
    fprintf(stderr, "sdk-firmware-host: unknown board %s (pico_w or pico2_w)\n", board_id);
    return 2;
  }
  sdk_device_options options = {
      .device_id = device_id,
      .secret = secret,
      .board = (sdk_board)board,
      .firmware_version = SDK_FIRMWARE_VERSION,
      .timing = timing,
  };
  sdk_url_status us = sdk_url_from_address(url, &options.server);
  if (us != SDK_URL_OK) {
    fprintf(stderr, "sdk-firmware-host: bad server address %s\n", url);
    return 2;
  }
  if (config_path) host_net_set_trust(config.ca_der, config.ca_der_len, config.has_key_pin ? config.key_pin : NULL);

  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);

  host_peripherals_init(&device);
  sdk_device_init(&device, &options);
  char url_text[300];
  if (sdk_url_format(&options.server, url_text, sizeof url_text))
    fprintf(stderr, "sdk-firmware-host %s (%s): connecting to %s as %s\n", SDK_FIRMWARE_VERSION, board_id,
            url_text, device_id);

  bool stdin_open = control;
  for (;;) {
    if (signalled) sdk_device_stop(&device);
    uint32_t wait = sdk_device_poll(&device);
    if (sdk_device_stopped(&device)) break;
    struct pollfd fds[2];
    nfds_t count = 0;
    if (stdin_open) fds[count++] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    int net = host_net_fd();
    if (net >= 0) fds[count++] = (struct pollfd){.fd = net, .events = (short)(POLLIN | (host_net_wants_write() ? POLLOUT : 0))};
    if (host_net_has_buffered_input()) wait = 0; /* decrypted bytes poll() cannot see */
    int ready = poll(fds, count, (int)wait);
    if (ready < 0 && errno != EINTR) {
      perror("poll");
      return 1;
    }
    if (ready > 0 && stdin_open && fds[0].revents) {
      if (!read_control()) {
        stdin_open = false; /* the controller went away: stop as if told to */
        sdk_device_stop(&device);
      }
    }
  }
  sdk_port_net_close();
  return 0;
}
