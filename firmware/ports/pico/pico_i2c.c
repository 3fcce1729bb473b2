/* I2C on the Pico: the two I2C blocks as bus masters, with the pins' internal pull-ups on (weak,
 * about 50 kΩ: external pull-ups are still needed above 100 kHz or on long wires). */
#include "hardware/gpio.h"
#include "hardware/i2c.h"
#include "hardware/watchdog.h"
#include "pico_pins.h"
#include "sdk_port.h"

/* A transfer's timeout must end inside the 8 s watchdog (pico_main.c), which is fed just before it. */
#define TIMEOUT_US_MAX 7000000u

static uint32_t frequencies[2];
static uint8_t bus_pins[2][2]; /* SDA, SCL of each configured bus */

static i2c_inst_t *bus_of(uint8_t bus) { return bus == 0 ? i2c0 : bus == 1 ? i2c1 : NULL; }

void sdk_port_i2c_configure(uint8_t bus, uint8_t sda, uint8_t scl, uint32_t frequency) {
  i2c_inst_t *i2c = bus_of(bus);
  if (!i2c || frequency == 0) return;
  i2c_deinit(i2c);
  pico_pins_release(PICO_PIN_I2C, bus);
  frequencies[bus] = i2c_init(i2c, frequency);
  const uint8_t pins[2] = {sda, scl};
  bus_pins[bus][0] = sda;
  bus_pins[bus][1] = scl;
  for (int i = 0; i < 2; i++) {
    (void)pico_pin_take(pins[i], PICO_PIN_I2C, bus);
    gpio_set_function(pins[i], GPIO_FUNC_I2C);
    gpio_pull_up(pins[i]);
  }
}

/* One and a half times the bytes' time on the wire (9 clocks each, plus the address and the stops)
 * plus slack for a target that stretches the clock; 0 when that would outlast the watchdog (at
 * 10 kHz: over about 5000 bytes). */
#define STRETCH_US 50000u
#define PROBE_STRETCH_US 5000u /* a scan is 112 probes in one go: at most about 1.2 s at 10 kHz */

static uint32_t timeout_us(uint8_t bus, size_t len, uint32_t slack_us) {
  uint32_t hz = frequencies[bus] ? frequencies[bus] : 10000u;
  uint64_t us = ((uint64_t)len + 3u) * 9u * 1000000u / hz * 3u / 2u + slack_us;
  return us > TIMEOUT_US_MAX ? 0 : (uint32_t)us;
}

static sdk_io_status status_of(int result, size_t len) {
  if (result == PICO_ERROR_TIMEOUT) return SDK_IO_FAILED;
  if (result < 0) return SDK_IO_NACK;            /* PICO_ERROR_GENERIC: the address was not acknowledged */
  if ((size_t)result < len) return SDK_IO_NACK; /* a data byte was not acknowledged */
  return SDK_IO_OK;
}

/* A target cut off mid-byte can hold SDA low for ever: clock SCL (open drain, by hand) until it lets
 * go, at most 9 times, then send a STOP (SDA rising while SCL is high). */
static void release_bus(uint bus) {
  const uint8_t sda = bus_pins[bus][0], scl = bus_pins[bus][1];
  gpio_put(sda, 0);
  gpio_put(scl, 0);
  gpio_set_dir(sda, GPIO_IN);
  gpio_set_dir(scl, GPIO_IN);
  gpio_set_function(sda, GPIO_FUNC_SIO);
  gpio_set_function(scl, GPIO_FUNC_SIO);
  for (int i = 0; i < 9 && !gpio_get(sda); i++) {
    gpio_set_dir(scl, GPIO_OUT); /* low */
    busy_wait_us(10);
    gpio_set_dir(scl, GPIO_IN); /* released: pulled high */
    busy_wait_us(10);
  }
  gpio_set_dir(sda, GPIO_OUT);
  busy_wait_us(10);
  gpio_set_dir(sda, GPIO_IN);
  busy_wait_us(10);
  gpio_set_function(sda, GPIO_FUNC_I2C);
  gpio_set_function(scl, GPIO_FUNC_I2C);
}

/* The SDK remembers a transfer left open (nostop) to start the next with a repeated start; after a
 * failure the hardware has sent a stop already, so the next transfer must start afresh. After a
 * timeout the bus may be stuck mid-transfer: it is released by hand and the block reset. */
static void after_failure(i2c_inst_t *i2c, sdk_io_status st) {
  if (st == SDK_IO_OK) return;
  i2c->restart_on_next = false;
  if (st == SDK_IO_FAILED && frequencies[i2c_get_index(i2c)]) {
    uint bus = i2c_get_index(i2c);
    release_bus(bus);
    frequencies[bus] = i2c_init(i2c, frequencies[bus]);
  }
}

/* The block cannot send an address without data: a 1-byte read asks the same question. */
bool sdk_port_i2c_probe(uint8_t bus, uint8_t address) {
  i2c_inst_t *i2c = bus_of(bus);
  if (!i2c || address > 0x7f) return false;
  watchdog_update();
  uint8_t byte;
  sdk_io_status st = status_of(i2c_read_timeout_us(i2c, address, &byte, 1, false, timeout_us(bus, 1, PROBE_STRETCH_US)), 1);
  after_failure(i2c, st);
  return st == SDK_IO_OK;
}

sdk_io_status sdk_port_i2c_write(uint8_t bus, uint8_t address, const uint8_t *data, size_t len) {
  i2c_inst_t *i2c = bus_of(bus);
  if (!i2c || address > 0x7f) return SDK_IO_FAILED;
  if (len == 0) return sdk_port_i2c_probe(bus, address) ? SDK_IO_OK : SDK_IO_NACK;
  uint32_t timeout = timeout_us(bus, len, STRETCH_US);
  if (timeout == 0) {
    sdk_port_log(SDK_LOG_WARN, "I2C write refused: it would outlast the watchdog at this bus frequency");
    return SDK_IO_FAILED;
  }
  watchdog_update();
  sdk_io_status st = status_of(i2c_write_timeout_us(i2c, address, data, len, false, timeout), len);
  after_failure(i2c, st);
  return st;
}

sdk_io_status sdk_port_i2c_read(uint8_t bus, uint8_t address, const uint8_t *reg, uint8_t *out, size_t len) {
  i2c_inst_t *i2c = bus_of(bus);
  if (!i2c || address > 0x7f || len == 0) return SDK_IO_FAILED;
  uint32_t timeout = timeout_us(bus, len, STRETCH_US);
  if (timeout == 0) {
    sdk_port_log(SDK_LOG_WARN, "I2C read refused: it would outlast the watchdog at this bus frequency");
    return SDK_IO_FAILED;
  }
  watchdog_update();
  if (reg) {
    sdk_io_status st = status_of(i2c_write_timeout_us(i2c, address, reg, 1, true, timeout_us(bus, 1, STRETCH_US)), 1);
    after_failure(i2c, st);
    if (st != SDK_IO_OK) return st;
  }
  sdk_io_status st = status_of(i2c_read_timeout_us(i2c, address, out, len, false, timeout), len);
  after_failure(i2c, st);
  return st;
}
