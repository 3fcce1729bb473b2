/*
 * Wi-Fi: join with retries and backoff (a first failure, even "bad auth", is often transient),
 * watch the link, re-join after a loss. Power save is off (docs/firmware.md, "Wi-Fi").
 */
#include <stdio.h>

#include "pico/cyw43_arch.h"
#include "pico_port.h"
#include "sdk_backoff.h"
#include "sdk_port.h"

#define JOIN_TIMEOUT_MS 30000u
#define LINK_CHECK_MS 1000u

static enum { WIFI_OFF, WIFI_WAITING, WIFI_JOINING, WIFI_UP } state = WIFI_OFF;
static const sdk_config *cfg;
static sdk_device *device;
static sdk_backoff backoff;
static uint64_t next_ms;
static uint64_t deadline_ms;

void pico_wifi_attach(sdk_device *dev) { device = dev; }

static void retry_later(const char *why, int status) {
  char line[120];
  uint32_t delay = 1000u + sdk_backoff_next(&backoff, (uint32_t)sdk_port_now_ms() * 2654435761u);
  snprintf(line, sizeof line, "Wi-Fi: %s (status %d); joining again in %lu ms", why, status, (unsigned long)delay);
  sdk_port_log(SDK_LOG_WARN, line);
  cyw43_arch_disable_sta_mode();
  cyw43_arch_enable_sta_mode();
  state = WIFI_WAITING;
  next_ms = sdk_port_now_ms() + delay;
}

static const char *status_text(int status) {
  switch (status) {
    case CYW43_LINK_FAIL: return "the join failed";
    case CYW43_LINK_NONET: return "no network with that name (a 2.4 GHz network is needed)";
    case CYW43_LINK_BADAUTH: return "the passphrase was refused";
    default: return "no connection";
  }
}

void pico_wifi_start(const sdk_config *config) {
  cfg = config;
  sdk_backoff_init(&backoff, (sdk_backoff_timing){.base_ms = 1000, .cap_ms = 30000});
  state = WIFI_WAITING;
  next_ms = 0;
}

bool pico_wifi_up(void) { return state == WIFI_UP; }

void pico_wifi_poll(void) {
  uint64_t now = sdk_port_now_ms();
  switch (state) {
    case WIFI_OFF:
      return;
    case WIFI_WAITING: {
      if (now < next_ms) return;
      bool open = cfg->wifi_passphrase[0] == '\0';
      int err = cyw43_arch_wifi_connect_async(cfg->wifi_ssid, open ? NULL : cfg->wifi_passphrase,
                                              open ? CYW43_AUTH_OPEN : CYW43_AUTH_WPA2_AES_PSK);
      if (err != 0) {
        retry_later("the join could not start", err);
        return;
      }
      char line[96];
      snprintf(line, sizeof line, "Wi-Fi: joining \"%s\"", cfg->wifi_ssid);
      sdk_port_log(SDK_LOG_INFO, line);
      state = WIFI_JOINING;
      deadline_ms = now + JOIN_TIMEOUT_MS;
      return;
    }
    case WIFI_JOINING: {
      int status = cyw43_tcpip_link_status(&cyw43_state, CYW43_ITF_STA);
      if (status == CYW43_LINK_UP) {
        /* No power save: the board is on mains power; power-save modes are reported to miss
           disassociations and add latency (docs/firmware.md). */
        cyw43_wifi_pm(&cyw43_state, CYW43_NONE_PM);
        char line[96];
        snprintf(line, sizeof line, "Wi-Fi: up, address %s", ip4addr_ntoa(netif_ip4_addr(netif_default)));
        sdk_port_log(SDK_LOG_INFO, line);
        sdk_backoff_reset(&backoff);
        state = WIFI_UP;
        next_ms = now + LINK_CHECK_MS;
        if (device) sdk_device_retry_now(device);
        return;
      }
      if (status < 0) {
        retry_later(status_text(status), status);
      } else if (now >= deadline_ms) {
        retry_later("no address within 30 s", status);
      }
      return;
    }
    case WIFI_UP: {
      if (now < next_ms) return;
      next_ms = now + LINK_CHECK_MS;
      int status = cyw43_tcpip_link_status(&cyw43_state, CYW43_ITF_STA);
      if (status != CYW43_LINK_UP) {
        pico_net_link_down();
        retry_later("the link was lost", status);
      }
      return;
    }
  }
}
