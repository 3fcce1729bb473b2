/* TEMPORARY: stubs until pico_net.c, pico_tls.c, pico_clock.c and the peripheral files exist.
 * Whoever implements a function deletes it here. */
#include "pico_port.h"
#include "sdk_port.h"

void pico_peripherals_init(sdk_device *dev) { (void)dev; }
void pico_peripherals_poll(void) {}
void sdk_port_gpio_mode(uint8_t pin, bool output, uint8_t pull) { (void)pin; (void)output; (void)pull; }
void sdk_port_gpio_write(uint8_t pin, uint8_t level) { (void)pin; (void)level; }
uint8_t sdk_port_gpio_read(uint8_t pin) { (void)pin; return 0; }
void sdk_port_gpio_watch(uint8_t pin, bool enable) { (void)pin; (void)enable; }
void sdk_port_pwm(uint8_t pin, double frequency, double duty) { (void)pin; (void)frequency; (void)duty; }
uint16_t sdk_port_adc_read(uint8_t channel) { (void)channel; return 0; }
double sdk_port_temperature(void) { return 0; }
void sdk_port_i2c_configure(uint8_t bus, uint8_t sda, uint8_t scl, uint32_t frequency) { (void)bus; (void)sda; (void)scl; (void)frequency; }
sdk_io_status sdk_port_i2c_write(uint8_t bus, uint8_t address, const uint8_t *data, size_t len) { (void)bus; (void)address; (void)data; (void)len; return SDK_IO_FAILED; }
sdk_io_status sdk_port_i2c_read(uint8_t bus, uint8_t address, const uint8_t *reg, uint8_t *out, size_t len) { (void)bus; (void)address; (void)reg; (void)out; (void)len; return SDK_IO_FAILED; }
bool sdk_port_i2c_probe(uint8_t bus, uint8_t address) { (void)bus; (void)address; return false; }
void sdk_port_spi_configure(uint8_t bus, uint8_t sck, uint8_t tx, uint8_t rx, uint32_t frequency, uint8_t mode) { (void)bus; (void)sck; (void)tx; (void)rx; (void)frequency; (void)mode; }
void sdk_port_spi_transfer(uint8_t bus, const uint8_t *tx, uint8_t *rx, size_t len) { (void)bus; (void)tx; (void)rx; (void)len; }
void sdk_port_uart_configure(uint8_t uart, uint8_t tx, uint8_t rx, uint32_t baud, uint8_t data_bits, uint8_t parity, uint8_t stop_bits) { (void)uart; (void)tx; (void)rx; (void)baud; (void)data_bits; (void)parity; (void)stop_bits; }
void sdk_port_uart_write(uint8_t uart, const uint8_t *data, size_t len) { (void)uart; (void)data; (void)len; }
size_t sdk_port_uart_read(uint8_t uart, uint8_t *out, size_t cap) { (void)uart; (void)out; (void)cap; return 0; }
void sdk_port_ws2812_write(uint8_t pin, const uint8_t *rgb, size_t pixels) { (void)pin; (void)rgb; (void)pixels; }
