/* What the Pico port's parts tell each other (sdk_port.h is what they give the core). */
#ifndef SDK_PICO_PORT_H
#define SDK_PICO_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "sdk_config.h"
#include "sdk_device.h"

/* Peripherals (pico_gpio.c, pico_buses.c, pico_ws2812.c, pico_adc.c): set up after
 * cyw43_arch_init (the LED is on the wireless chip). */
void pico_peripherals_init(sdk_device *dev);
/* From the main loop: hands GPIO edges caught by interrupts to the core (sdk_device_pin_changed). */
void pico_peripherals_poll(void);

/* Network (pico_net.c, pico_tls.c): the TLS trust from the config block; false when the CA does not
 * parse (then wss:// is refused with a log line). */
bool pico_net_init(const sdk_config *config);
/* The Wi-Fi link went down: the open connection is closed (the core reconnects with backoff). */
void pico_net_link_down(void);

/* Wi-Fi (pico_wifi.c): joining with retries and backoff, link monitoring, re-joining. */
void pico_wifi_attach(sdk_device *dev); /* told when the link comes up: it retries at once */
void pico_wifi_start(const sdk_config *config);
void pico_wifi_poll(void);
bool pico_wifi_up(void);

/* The wall clock for certificate dates (pico_clock.c): unknown until SNTP answers. */
void sdk_pico_clock_set(unsigned long long seconds, unsigned long microseconds);
bool pico_clock_known(void);

#endif /* SDK_PICO_PORT_H */
