/*
 * The wall clock for certificate dates: unknown at boot, set by lwIP's SNTP client
 * (SNTP_SET_SYSTEM_TIME_US in lwipopts.h), then kept by the microsecond timer. SNTP asks the
 * server DHCP names first and pool.ntp.org after it. mbedtls reads the time from here
 * (MBEDTLS_PLATFORM_TIME_ALT, MBEDTLS_PLATFORM_GMTIME_R_ALT, MBEDTLS_PLATFORM_MS_TIME_ALT).
 */
#include <stdio.h>
#include <time.h>

#include "lwip/apps/sntp.h"
#include "lwip/dhcp.h"
#include "lwip/ip_addr.h"
#include "mbedtls/platform.h"
#include "mbedtls/platform_time.h"
#include "mbedtls/platform_util.h"
#include "pico/time.h"
#include "pico_net_parts.h"
#include "pico_port.h"
#include "sdk_port.h"

#define FALLBACK_SERVER "pool.ntp.org"
/* How long a TLS connection waits for the first SNTP answer before going on without dates. */
#define CLOCK_WAIT_MS 2000u

static bool known;
static bool started;
static uint64_t started_ms;
static uint64_t epoch_us_at_set; /* microseconds since 1970 when the clock was set */
static uint64_t uptime_us_at_set;
static bool dhcp_server;
static ip_addr_t dhcp_server_addr;

void sdk_pico_clock_set(unsigned long long seconds, unsigned long microseconds) {
  epoch_us_at_set = (uint64_t)seconds * 1000000u + microseconds;
  uptime_us_at_set = time_us_64();
  if (known) return;
  known = true;
  time_t t = (time_t)seconds;
  struct tm tm;
  if (gmtime_r(&t, &tm) == NULL) return;
  char line[96];
  snprintf(line, sizeof line, "clock set by SNTP: %04d-%02d-%02d %02d:%02d:%02d UTC", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  sdk_port_log(SDK_LOG_INFO, line);
}

bool pico_clock_known(void) { return known; }

static uint64_t now_epoch_us(void) { return epoch_us_at_set + (time_us_64() - uptime_us_at_set); }

/* Index 0: the DHCP server's NTP server when it named one, else pool.ntp.org; index 1: pool.ntp.org
 * behind a DHCP-named one. */
static void set_servers(void) {
  if (dhcp_server) {
    sntp_setserver(0, &dhcp_server_addr);
    sntp_setservername(1, FALLBACK_SERVER);
  } else {
    sntp_setservername(0, FALLBACK_SERVER);
    sntp_setserver(1, NULL);
  }
}

/* Called by lwIP's DHCP client (LWIP_DHCP_GET_NTP_SRV) with the servers of each offer; lwIP's own
 * version (SNTP_GET_SERVERS_FROM_DHCP) would drop the fallback server. */
void dhcp_set_ntp_servers(u8_t num, const ip4_addr_t *server) {
  dhcp_server = num > 0 && server != NULL && !ip4_addr_isany(&server[0]);
  if (dhcp_server) ip_addr_copy_from_ip4(dhcp_server_addr, server[0]);
  set_servers();
}

void pico_clock_start(void) {
  if (started) return;
  started = true;
  started_ms = sdk_port_now_ms();
  set_servers();
  sntp_setoperatingmode(SNTP_OPMODE_POLL);
  sntp_init();
}

bool pico_clock_worth_waiting(void) {
  return !known && started && sdk_port_now_ms() - started_ms < CLOCK_WAIT_MS;
}

/* Unknown: 0 (1970), so every certificate would be "not yet valid"; the verify callback does not
 * count dates while pico_clock_known() is false. */
static mbedtls_time_t clock_time(mbedtls_time_t *out) {
  mbedtls_time_t t = known ? (mbedtls_time_t)(now_epoch_us() / 1000000u) : 0;
  if (out != NULL) *out = t;
  return t;
}

void pico_clock_attach_mbedtls(void) { (void)mbedtls_platform_set_time(clock_time); }

struct tm *mbedtls_platform_gmtime_r(const mbedtls_time_t *tt, struct tm *tm_buf) {
  time_t t = (time_t)*tt;
  return gmtime_r(&t, tm_buf);
}

mbedtls_ms_time_t mbedtls_ms_time(void) { return (mbedtls_ms_time_t)(time_us_64() / 1000u); }

/* The originate timestamp SNTP checks answers against (SNTP_CHECK_RESPONSE 2): time since boot
 * until the clock is known. */
void sdk_pico_clock_get(uint32_t *seconds, uint32_t *microseconds) {
  uint64_t us = known ? now_epoch_us() : time_us_64();
  *seconds = (uint32_t)(us / 1000000u);
  *microseconds = (uint32_t)(us % 1000000u);
}
