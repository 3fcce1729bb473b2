/* The in-memory peripherals of the host port: see host_peripherals.h. */
#include "host_peripherals.h"

#include <math.h>
#include <string.h>

#include "sdk_port.h"
#include "host_board.h"

typedef enum { FN_NONE, FN_GPIO, FN_PWM, FN_I2C, FN_SPI, FN_UART, FN_WS2812 } pin_function;
typedef enum { MODE_NONE, MODE_INPUT, MODE_OUTPUT } pin_mode;

typedef struct {
  pin_function function;
  pin_mode mode;
  uint8_t pull;
  uint8_t output;   /* the output latch */
  int8_t driven;    /* level driven from outside, -1 for none */
  bool pwm;
  double pwm_frequency;
  double pwm_duty;
  bool watched;
} pin_record;

typedef enum { I2C_NONE, I2C_TMP102, I2C_EEPROM, I2C_ATTACHED } i2c_kind;

typedef struct {
  double celsius;
  uint8_t pointer;
  uint16_t registers[4];
} tmp102;

typedef struct {
  uint8_t memory[256];
  uint8_t address;
} eeprom;

typedef struct {
  uint8_t data[HOST_I2C_TARGET_BYTES];
  size_t len;
} i2c_target;

typedef struct {
  i2c_kind kind[128];
  i2c_target attached[128];
  tmp102 tmp;
  eeprom rom;
} i2c_bus;

typedef struct {
  bool configured;
  uint8_t fifo[HOST_UART_FIFO_BYTES];
  size_t head;
  size_t count;
} uart_port;

typedef struct {
  bool written;
  size_t pixels;
  uint8_t rgb[HOST_WS2812_PIXELS * 3u];
} ws2812_strip;

static sdk_device *device;
static pin_record pins[HOST_GPIO_COUNT];
static uint8_t led;
static double adc_volts[3];
static double chip_celsius;
static i2c_bus i2c[2];
static uart_port uarts[2];
static ws2812_strip strips[HOST_GPIO_COUNT];

/* Math.round: halves go up. */
static double js_round(double x) {
  double r = floor(x);
  return x - r >= 0.5 ? r + 1.0 : r;
}

/* gpio.ts level(): what the pin shows. */
static uint8_t level_of(const pin_record *r) {
  if (r->function == FN_GPIO && r->mode == MODE_OUTPUT) return r->output;
  if (r->function == FN_PWM && r->pwm) return r->pwm_duty >= 1.0 ? 1 : r->pwm_duty <= 0.0 ? 0 : r->output;
  if (r->driven >= 0) return (uint8_t)r->driven;
  return r->pull == SDK_PULL_UP ? 1 : 0;
}

/* After a change of pin's record: tells the device when a watched pin's level moved. */
static void changed(uint8_t pin, uint8_t before) {
  uint8_t after = level_of(&pins[pin]);
  if (after != before && pins[pin].watched && device) sdk_device_pin_changed(device, pin, after);
}

static bool is_gpio(uint8_t pin) { return pin < HOST_GPIO_COUNT; }

/* Hands a pin to a peripheral (setFunction in gpio.ts). */
static void set_function(uint8_t pin, pin_function fn) {
  if (!is_gpio(pin)) return;
  pin_record *r = &pins[pin];
  uint8_t before = level_of(r);
  r->function = fn;
  if (fn != FN_PWM) r->pwm = false;
  if (fn != FN_GPIO) r->mode = MODE_NONE;
  changed(pin, before);
}

static void i2c_bus_reset(i2c_bus *b) {
  memset(b, 0, sizeof *b);
  b->kind[0x48] = I2C_TMP102;
  b->kind[0x50] = I2C_EEPROM;
  b->tmp.celsius = 21.5;
  b->tmp.registers[1] = 0x60a0;
  b->tmp.registers[2] = 0x4b00;
  b->tmp.registers[3] = 0x5000;
  memset(b->rom.memory, 0xff, sizeof b->rom.memory);
}

void host_peripherals_init(sdk_device *dev) {
  device = dev;
  for (size_t i = 0; i < HOST_GPIO_COUNT; i++) {
    memset(&pins[i], 0, sizeof pins[i]);
    pins[i].function = FN_NONE;
    pins[i].mode = MODE_NONE;
    pins[i].pull = SDK_PULL_NONE;
    pins[i].driven = -1;
    strips[i].written = false;
    strips[i].pixels = 0;
  }
  led = 0;
  for (size_t i = 0; i < 3; i++) adc_volts[i] = 0.0;
  chip_celsius = 21.5;
  for (size_t i = 0; i < 2; i++) {
    i2c_bus_reset(&i2c[i]);
    uarts[i].configured = false;
    uarts[i].head = 0;
    uarts[i].count = 0;
  }
}

sdk_board host_peripherals_board(void) { return device ? device->opt.board : SDK_BOARD_PICO_W; }

/* ---------------- GPIO and PWM */

void sdk_port_gpio_mode(uint8_t pin, bool output, uint8_t pull) {
  if (!is_gpio(pin)) return; /* the LED: an output already (the core rejects input) */
  pin_record *r = &pins[pin];
  uint8_t before = level_of(r);
  r->function = FN_GPIO;
  r->pwm = false;
  r->mode = output ? MODE_OUTPUT : MODE_INPUT;
  r->pull = pull;
  changed(pin, before);
}

void sdk_port_gpio_write(uint8_t pin, uint8_t level) {
  uint8_t value = level ? 1 : 0;
  if (pin == SDK_PIN_LED) {
    led = value;
    return;
  }
  if (!is_gpio(pin)) return;
  pin_record *r = &pins[pin];
  uint8_t before = level_of(r);
  if (r->function != FN_GPIO || r->mode != MODE_OUTPUT) {
    r->function = FN_GPIO;
    r->pwm = false;
    r->mode = MODE_OUTPUT;
  }
  r->output = value;
  changed(pin, before);
}

uint8_t sdk_port_gpio_read(uint8_t pin) { return host_peripherals_level(pin); }

void sdk_port_gpio_watch(uint8_t pin, bool enable) {
  if (!is_gpio(pin)) return;
  pin_record *r = &pins[pin];
  if (enable && r->mode == MODE_NONE) {
    r->function = FN_GPIO;
    r->mode = MODE_INPUT;
  }
  r->watched = enable;
}

void sdk_port_pwm(uint8_t pin, double frequency, double duty) {
  if (!is_gpio(pin)) return;
  pin_record *r = &pins[pin];
  uint8_t before = level_of(r);
  r->function = FN_PWM;
  r->mode = MODE_OUTPUT;
  r->pwm = true;
  r->pwm_frequency = frequency;
  r->pwm_duty = duty;
  changed(pin, before);
}

void host_peripherals_drive(uint8_t pin, int level) {
  if (!is_gpio(pin)) return;
  pin_record *r = &pins[pin];
  uint8_t before = level_of(r);
  r->driven = (int8_t)(level < 0 ? -1 : level ? 1 : 0);
  changed(pin, before);
}

uint8_t host_peripherals_level(uint8_t pin) {
  if (pin == SDK_PIN_LED) return led;
  if (!is_gpio(pin)) return 0;
  return level_of(&pins[pin]);
}

bool host_peripherals_pwm(uint8_t pin, double *frequency, double *duty) {
  if (!is_gpio(pin) || !pins[pin].pwm) return false;
  *frequency = pins[pin].pwm_frequency;
  *duty = pins[pin].pwm_duty;
  return true;
}

/* ---------------- ADC and temperature */

uint16_t sdk_port_adc_read(uint8_t channel) {
  if (channel > 2) return 0;
  double max_raw = host_board_adc_max_raw();
  double raw = js_round(adc_volts[channel] / host_board_adc_max_volts() * max_raw);
  return (uint16_t)(raw < 0.0 ? 0.0 : raw > max_raw ? max_raw : raw);
}

double sdk_port_temperature(void) { return chip_celsius; }

bool host_peripherals_set_voltage(uint8_t pin, double volts) {
  if (pin < 26 || pin > 28 || !isfinite(volts)) return false;
  double max = host_board_adc_max_volts();
  adc_volts[pin - 26] = volts < 0.0 ? 0.0 : volts > max ? max : volts;
  return true;
}

void host_peripherals_set_temperature(double celsius) { chip_celsius = celsius; }

/* ---------------- I2C */

static void tmp102_encode(double celsius, uint8_t out[2]) {
  double counts = js_round(celsius / 0.0625);
  if (!(counts >= -2048.0)) counts = -2048.0;
  if (counts > 2047.0) counts = 2047.0;
  uint16_t bits = (uint16_t)((int32_t)counts & 0xfff);
  out[0] = (uint8_t)(bits >> 4);
  out[1] = (uint8_t)((bits & 0xfu) << 4);
}

static void tmp102_write(tmp102 *t, const uint8_t *data, size_t len) {
  if (len == 0) return;
  t->pointer = data[0] & 0x03u;
  if (len >= 3 && t->pointer != 0) t->registers[t->pointer] = (uint16_t)((data[1] << 8) | data[2]);
}

static void tmp102_read(tmp102 *t, const uint8_t *reg, uint8_t *out, size_t len) {
  if (reg) t->pointer = *reg & 0x03u;
  uint8_t bytes[2];
  if (t->pointer == 0) {
    tmp102_encode(t->celsius, bytes);
  } else {
    bytes[0] = (uint8_t)(t->registers[t->pointer] >> 8);
    bytes[1] = (uint8_t)(t->registers[t->pointer] & 0xffu);
  }
  for (size_t i = 0; i < len; i++) out[i] = bytes[i % 2];
}

static void eeprom_write(eeprom *e, const uint8_t *data, size_t len) {
  if (len == 0) return;
  e->address = data[0];
  for (size_t i = 1; i < len; i++) e->memory[e->address++] = data[i];
}

static void eeprom_read(eeprom *e, const uint8_t *reg, uint8_t *out, size_t len) {
  if (reg) e->address = *reg;
  for (size_t i = 0; i < len; i++) out[i] = e->memory[e->address++];
}

void sdk_port_i2c_configure(uint8_t bus, uint8_t sda, uint8_t scl, uint32_t frequency) {
  (void)bus;
  (void)frequency;
  set_function(sda, FN_I2C);
  set_function(scl, FN_I2C);
}

sdk_io_status sdk_port_i2c_write(uint8_t bus, uint8_t address, const uint8_t *data, size_t len) {
  if (bus > 1 || address > 127) return SDK_IO_FAILED;
  i2c_bus *b = &i2c[bus];
  switch (b->kind[address]) {
    case I2C_TMP102: tmp102_write(&b->tmp, data, len); return SDK_IO_OK;
    case I2C_EEPROM: eeprom_write(&b->rom, data, len); return SDK_IO_OK;
    case I2C_ATTACHED: return SDK_IO_OK;
    case I2C_NONE: break;
  }
  return SDK_IO_NACK;
}

sdk_io_status sdk_port_i2c_read(uint8_t bus, uint8_t address, const uint8_t *reg, uint8_t *out, size_t len) {
  if (bus > 1 || address > 127) return SDK_IO_FAILED;
  i2c_bus *b = &i2c[bus];
  switch (b->kind[address]) {
    case I2C_TMP102: tmp102_read(&b->tmp, reg, out, len); return SDK_IO_OK;
    case I2C_EEPROM: eeprom_read(&b->rom, reg, out, len); return SDK_IO_OK;
    case I2C_ATTACHED: {
      const i2c_target *t = &b->attached[address];
      for (size_t i = 0; i < len; i++) out[i] = i < t->len ? t->data[i] : 0;
      return SDK_IO_OK;
    }
    case I2C_NONE: break;
  }
  return SDK_IO_NACK;
}

bool sdk_port_i2c_probe(uint8_t bus, uint8_t address) {
  return bus <= 1 && address <= 127 && i2c[bus].kind[address] != I2C_NONE;
}

bool host_peripherals_i2c_attach(uint8_t bus, uint8_t address, const uint8_t *data, size_t len) {
  if (bus > 1 || address > 127 || len > HOST_I2C_TARGET_BYTES) return false;
  i2c_bus *b = &i2c[bus];
  b->kind[address] = I2C_ATTACHED;
  if (len) memcpy(b->attached[address].data, data, len);
  b->attached[address].len = len;
  return true;
}

/* ---------------- SPI */

void sdk_port_spi_configure(uint8_t bus, uint8_t sck, uint8_t tx, uint8_t rx, uint32_t frequency, uint8_t mode) {
  (void)bus;
  (void)frequency;
  (void)mode;
  set_function(sck, FN_SPI);
  set_function(tx, FN_SPI);
  set_function(rx, FN_SPI);
}

void sdk_port_spi_transfer(uint8_t bus, const uint8_t *tx, uint8_t *rx, size_t len) {
  (void)bus;
  if (len) memmove(rx, tx, len); /* MISO looped back to MOSI */
}

/* ---------------- UART */

void sdk_port_uart_configure(uint8_t uart, uint8_t tx, uint8_t rx, uint32_t baud, uint8_t data_bits,
                             uint8_t parity, uint8_t stop_bits) {
  (void)baud;
  (void)data_bits;
  (void)parity;
  (void)stop_bits;
  if (uart > 1) return;
  set_function(tx, FN_UART);
  set_function(rx, FN_UART);
  uarts[uart].configured = true;
}

void sdk_port_uart_write(uint8_t uart, const uint8_t *data, size_t len) {
  /* TX looped back to RX; bytes that do not fit the FIFO are lost, like an overrun. */
  (void)host_peripherals_uart_inject(uart, data, len);
}

size_t sdk_port_uart_read(uint8_t uart, uint8_t *out, size_t cap) {
  if (uart > 1) return 0;
  uart_port *u = &uarts[uart];
  size_t n = u->count < cap ? u->count : cap;
  for (size_t i = 0; i < n; i++) out[i] = u->fifo[(u->head + i) % HOST_UART_FIFO_BYTES];
  u->head = (u->head + n) % HOST_UART_FIFO_BYTES;
  u->count -= n;
  return n;
}

bool host_peripherals_uart_configured(uint8_t uart) { return uart <= 1 && uarts[uart].configured; }

size_t host_peripherals_uart_space(uint8_t uart) {
  return uart <= 1 ? HOST_UART_FIFO_BYTES - uarts[uart].count : 0;
}

size_t host_peripherals_uart_pending(uint8_t uart) { return uart <= 1 ? uarts[uart].count : 0; }

size_t host_peripherals_uart_inject(uint8_t uart, const uint8_t *data, size_t len) {
  if (!host_peripherals_uart_configured(uart)) return 0;
  uart_port *u = &uarts[uart];
  size_t space = HOST_UART_FIFO_BYTES - u->count;
  size_t n = len < space ? len : space;
  for (size_t i = 0; i < n; i++) u->fifo[(u->head + u->count + i) % HOST_UART_FIFO_BYTES] = data[i];
  u->count += n;
  return n;
}

/* ---------------- WS2812 */

void sdk_port_ws2812_write(uint8_t pin, const uint8_t *rgb, size_t pixels) {
  if (!is_gpio(pin)) return;
  set_function(pin, FN_WS2812);
  ws2812_strip *s = &strips[pin];
  s->pixels = pixels < HOST_WS2812_PIXELS ? pixels : HOST_WS2812_PIXELS;
  if (s->pixels) memcpy(s->rgb, rgb, s->pixels * 3u);
  s->written = true;
}

bool host_peripherals_pixels(uint8_t pin, const uint8_t **rgb, size_t *pixels) {
  if (!is_gpio(pin) || !strips[pin].written) return false;
  *rgb = strips[pin].rgb;
  *pixels = strips[pin].pixels;
  return true;
}
