/*
 * What a port (ports/host, ports/pico) provides to the core: time, randomness, a local log, one
 * network connection, and the board's peripherals. The core validates every argument against the
 * board's pin tables before calling a peripheral function, and tracks which buses are configured,
 * so these functions only do the hardware part. None may block for long: the core calls them from
 * its single poll loop.
 */
#ifndef SDK_PORT_H
#define SDK_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The onboard LED (on the wireless chip), where a pin number is expected. */
#define SDK_PIN_LED 0xFFu

/* ---------------- time, randomness, local log */

uint64_t sdk_port_now_ms(void);               /* monotonic milliseconds */
void sdk_port_random(uint8_t *out, size_t n); /* unpredictable bytes: masks, nonces, jitter */

enum { SDK_LOG_DEBUG = 0, SDK_LOG_INFO = 1, SDK_LOG_WARN = 2, SDK_LOG_ERROR = 3 };
/* A line for the local console (stderr, USB serial); never sent to the server by itself. */
void sdk_port_log(int level, const char *message);

/* ---------------- the network: one connection at a time */

typedef enum {
  SDK_NET_CONNECTING = 0, /* DNS, TCP or TLS handshake still under way */
  SDK_NET_READY = 1,      /* bytes can flow */
  SDK_NET_CLOSED = -1,    /* the peer closed, or sdk_port_net_close was called */
  SDK_NET_FAILED = -2     /* could not connect (DNS, refused, TLS verification, timeout) */
} sdk_net_status;

/* Starts connecting to host:port, with TLS (verified against the configured CA or key pin, host
 * name checked) when tls is set. false when it cannot even start (then say why via sdk_port_log). */
bool sdk_port_net_open(const char *host, uint16_t port, bool tls);
sdk_net_status sdk_port_net_status(void);
/* Bytes accepted for sending (0 when the send buffer is full right now), or -1 on a broken connection. */
long sdk_port_net_send(const uint8_t *data, size_t len);
/* Bytes received (0 when none are waiting), or -1 when the connection is closed or broken. */
long sdk_port_net_recv(uint8_t *out, size_t cap);
/* Closes the connection (sending what is queued when possible); safe to call when none is open. */
void sdk_port_net_close(void);

/* ---------------- peripherals (pins are GPIO numbers, or SDK_PIN_LED where a command allows it) */

enum { SDK_PULL_NONE = 0, SDK_PULL_UP = 1, SDK_PULL_DOWN = 2 };

void sdk_port_gpio_mode(uint8_t pin, bool output, uint8_t pull);
/* Drives a pin; a pin that is not an output yet becomes one. */
void sdk_port_gpio_write(uint8_t pin, uint8_t level);
/* The output latch for an output, else the level on the pin. */
uint8_t sdk_port_gpio_read(uint8_t pin);
/* Start (or stop) calling sdk_device_pin_changed for every level change of this pin. */
void sdk_port_gpio_watch(uint8_t pin, bool enable);
/* PWM on a pin (replacing what the pin did), frequency in Hz, duty 0-1. */
void sdk_port_pwm(uint8_t pin, double frequency, double duty);

/* ADC channel 0-2 (GP26-28): a 12-bit sample. */
uint16_t sdk_port_adc_read(uint8_t channel);
/* The chip's temperature sensor, °C. */
double sdk_port_temperature(void);

typedef enum { SDK_IO_OK = 0, SDK_IO_NACK = 1, SDK_IO_FAILED = 2 } sdk_io_status;

void sdk_port_i2c_configure(uint8_t bus, uint8_t sda, uint8_t scl, uint32_t frequency);
sdk_io_status sdk_port_i2c_write(uint8_t bus, uint8_t address, const uint8_t *data, size_t len);
/* Reads len bytes; with reg non-NULL, writes that byte first (repeated start). */
sdk_io_status sdk_port_i2c_read(uint8_t bus, uint8_t address, const uint8_t *reg, uint8_t *out, size_t len);
/* Whether an address acknowledges (for i2c_scan). */
bool sdk_port_i2c_probe(uint8_t bus, uint8_t address);

void sdk_port_spi_configure(uint8_t bus, uint8_t sck, uint8_t tx, uint8_t rx, uint32_t frequency, uint8_t mode);
/* Full duplex: sends tx[0..len), stores what arrived meanwhile in rx[0..len). */
void sdk_port_spi_transfer(uint8_t bus, const uint8_t *tx, uint8_t *rx, size_t len);

/* parity: 0 none, 1 even, 2 odd */
void sdk_port_uart_configure(uint8_t uart, uint8_t tx, uint8_t rx, uint32_t baud, uint8_t data_bits,
                             uint8_t parity, uint8_t stop_bits);
void sdk_port_uart_write(uint8_t uart, const uint8_t *data, size_t len);
/* Bytes received on a configured UART since the last call (at most cap); 0 when none. */
size_t sdk_port_uart_read(uint8_t uart, uint8_t *out, size_t cap);

/* Writes pixels (r,g,b triples, first pixel first) to a WS2812 strip on pin. */
void sdk_port_ws2812_write(uint8_t pin, const uint8_t *rgb, size_t pixels);

#endif /* SDK_PORT_H */
