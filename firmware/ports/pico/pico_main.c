/*
 * The sdk firmware on a Pico W / Pico 2 W: reads the config block from flash, joins Wi-Fi, and runs
 * the core's device in one poll loop with cyw43 + lwIP (pico_cyw43_arch_lwip_poll), fed by a
 * hardware watchdog.
 */
#include <stdio.h>

#include "hardware/watchdog.h"
#include "pico/binary_info.h"
#include "pico/cyw43_arch.h"
#include "pico/stdlib.h"
#include "pico_port.h"
#include "sdk_config.h"
#include "sdk_device.h"
#include "sdk_port.h"
#include "sdk_protocol.h"

/* Below the RP2040's 8388 ms maximum (RP2040-E1); the loop never blocks for long. */
#define WATCHDOG_MS 8000u
#define LOOP_WAIT_MAX_MS 100u

bi_decl(bi_program_feature("USB serial log; 1200-baud touch resets into BOOTSEL"));

static sdk_device device;
static sdk_config config;

/* Waits (feeding the watchdog) for a USB terminal to see the first lines, at most 1.5 s. */
static void settle_usb(void) {
  for (int i = 0; i < 15 && !stdio_usb_connected(); i++) {
    watchdog_update();
    sleep_ms(100);
  }
}

/* No usable configuration: say why on USB every 5 s and blink the LED, until re-flashed. */
static void __attribute__((noreturn)) unconfigured(const char *why, const char *field) {
  for (uint32_t n = 0;; n++) {
    if (n % 50 == 0) {
      char line[200];
      snprintf(line, sizeof line, "not configured: %s%s%s; flash the board with `sdk flash`", why,
               field && *field ? ": " : "", field ? field : "");
      sdk_port_log(SDK_LOG_ERROR, line);
    }
    cyw43_arch_gpio_put(CYW43_WL_GPIO_LED_PIN, n % 10 == 0);
    watchdog_update();
    sleep_ms(100);
  }
}

static uint32_t country_code(const char *country) {
  if (country[0] >= 'A' && country[0] <= 'Z' && country[1] >= 'A' && country[1] <= 'Z')
    return CYW43_COUNTRY(country[0], country[1], 0);
  return CYW43_COUNTRY_WORLDWIDE;
}

int main(void) {
  stdio_init_all();
  bool by_watchdog = watchdog_enable_caused_reboot();
  watchdog_enable(WATCHDOG_MS, true);
  settle_usb();
  printf("sdk firmware %s (%s), protocol %d\n", SDK_FIRMWARE_VERSION, sdk_board_id(SDK_BOARD), SDK_PROTOCOL_VERSION);
  if (by_watchdog) sdk_port_log(SDK_LOG_WARN, "restarted by the watchdog");

  const uint8_t *block = (const uint8_t *)(XIP_BASE + SDK_CONFIG_FLASH_OFFSET);
  const char *field = "";
  sdk_config_status status = sdk_config_parse(block, SDK_CONFIG_BLOCK_BYTES, &config, &field);
  if (cyw43_arch_init_with_country(status == SDK_CONFIG_OK ? country_code(config.wifi_country)
                                                            : CYW43_COUNTRY_WORLDWIDE) != 0) {
    sdk_port_log(SDK_LOG_ERROR, "the wireless chip did not start; restarting");
    watchdog_reboot(0, 0, 100);
    for (;;) tight_loop_contents();
  }
  if (status != SDK_CONFIG_OK) unconfigured(sdk_config_status_text(status), field);

  sdk_device_options options = {
      .device_id = config.device_id,
      .secret = config.secret,
      .board = SDK_BOARD,
      .firmware_version = SDK_FIRMWARE_VERSION,
      .timing = {.base_ms = 250, .cap_ms = 30000},
  };
  if (sdk_url_from_address(config.server, &options.server) != SDK_URL_OK)
    unconfigured("the server address cannot be used", config.server);

  cyw43_arch_enable_sta_mode();
  pico_peripherals_init(&device);
  if (!pico_net_init(&config)) sdk_port_log(SDK_LOG_ERROR, "the CA certificate in the config block does not parse");
  sdk_device_init(&device, &options);
  pico_wifi_attach(&device);
  pico_wifi_start(&config);

  for (;;) {
    cyw43_arch_poll();
    pico_wifi_poll();
    pico_peripherals_poll();
    uint32_t wait = sdk_device_poll(&device);
    watchdog_update();
    if (wait > 0) cyw43_arch_wait_for_work_until(make_timeout_time_ms(wait < LOOP_WAIT_MAX_MS ? wait : LOOP_WAIT_MAX_MS));
  }
}
