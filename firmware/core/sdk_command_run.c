#include "sdk_command_run.h"

#include <string.h>

#include "sdk_port.h"
#include "sdk_protocol.h"
#include "sdk_text.h"

#define SPI_CHUNK 256u

static int64_t arg_int(const sdk_json_object *args, const char *name, int64_t fallback) {
  const sdk_json_field *f = sdk_json_find(args, name);
  int64_t v;
  if (f && sdk_json_get_int(f, INT32_MIN, INT32_MAX, &v) == SDK_JSON_OK) return v;
  return fallback;
}

static double arg_number(const sdk_json_object *args, const char *name) {
  const sdk_json_field *f = sdk_json_find(args, name);
  double v = 0;
  if (f) (void)sdk_json_get_number(f, &v);
  return v;
}

/* A pin argument: a GPIO number, or SDK_PIN_LED for "LED". */
static uint8_t arg_pin(const sdk_json_object *args, const char *name) {
  const sdk_json_field *f = sdk_json_find(args, name);
  if (f && sdk_json_string_equals(f, SDK_ONBOARD_LED)) return SDK_PIN_LED;
  return (uint8_t)arg_int(args, name, 0);
}

static bool arg_is(const sdk_json_object *args, const char *name, const char *value) {
  const sdk_json_field *f = sdk_json_find(args, name);
  return f && sdk_json_string_equals(f, value);
}

static void use_pin(sdk_device *dev, uint8_t pin) {
  if (pin < 32) dev->pins_used |= 1u << pin;
}

static const char *not_configured(sdk_text *t, const char *what, int64_t bus, const char *command) {
  sdk_text_add(t, what);
  sdk_text_int(t, bus);
  sdk_text_add(t, " is not configured; send ");
  sdk_text_add(t, command);
  sdk_text_add(t, " first");
  return SDK_DEVICE_ERROR_INVALID_ARGUMENT;
}

static const char *nack(sdk_text *t, int64_t address, int64_t bus) {
  sdk_text_add(t, "no device acknowledged address 0x");
  sdk_text_hex2(t, (uint32_t)address);
  sdk_text_add(t, " on I2C bus ");
  sdk_text_int(t, bus);
  sdk_text_add(t, " (NACK)");
  return SDK_DEVICE_ERROR_IO_ERROR;
}

static const char *io_failed(sdk_text *t, const char *what) {
  sdk_text_add(t, what);
  sdk_text_add(t, " failed");
  return SDK_DEVICE_ERROR_IO_ERROR;
}

static void level_value(sdk_json_writer *w, uint8_t level) {
  sdk_jw_begin_object(w);
  sdk_jw_key(w, "value");
  sdk_jw_int(w, level);
  sdk_jw_end_object(w);
}

static void data_value(sdk_json_writer *w, const char *key, const uint8_t *data, size_t n) {
  sdk_jw_begin_object(w);
  sdk_jw_key(w, key);
  sdk_jw_bytes(w, data, n);
  sdk_jw_end_object(w);
}

static void start_watch(sdk_device *dev, uint8_t pin, uint8_t edge, uint16_t debounce_ms) {
  if (!(dev->pins_used & (1u << pin))) {
    sdk_port_gpio_mode(pin, false, SDK_PULL_NONE);
    use_pin(dev, pin);
  }
  sdk_pin_watch *watch = &dev->watch[pin];
  uint8_t level = sdk_port_gpio_read(pin);
  *watch = (sdk_pin_watch){.edge = edge, .debounce_ms = debounce_ms, .stable = level, .latest = level};
  sdk_port_gpio_watch(pin, true);
}

static const char *run_i2c(sdk_device *dev, int command, const sdk_json_object *args, sdk_json_writer *w,
                           sdk_text *t) {
  int64_t bus = arg_int(args, "bus", 0);
  if (!dev->i2c_ready[bus]) return not_configured(t, "I2C bus ", bus, "i2c_configure");
  int64_t address = arg_int(args, "address", 0);
  switch (command) {
    case SDK_COMMAND_I2C_WRITE: {
      size_t n = 0;
      if (sdk_json_get_bytes(sdk_json_find(args, "data"), dev->scratch, sizeof dev->scratch, &n, NULL) !=
          SDK_JSON_OK)
        return io_failed(t, "decoding data");
      sdk_io_status st = sdk_port_i2c_write((uint8_t)bus, (uint8_t)address, dev->scratch, n);
      if (st == SDK_IO_NACK) return nack(t, address, bus);
      if (st != SDK_IO_OK) return io_failed(t, "the I2C write");
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_I2C_READ: {
      size_t length = (size_t)arg_int(args, "length", 1);
      const sdk_json_field *reg_field = sdk_json_find(args, "register");
      uint8_t reg = (uint8_t)arg_int(args, "register", 0);
      sdk_io_status st =
          sdk_port_i2c_read((uint8_t)bus, (uint8_t)address, reg_field ? &reg : NULL, dev->scratch, length);
      if (st == SDK_IO_NACK) return nack(t, address, bus);
      if (st != SDK_IO_OK) return io_failed(t, "the I2C read");
      data_value(w, "data", dev->scratch, length);
      return NULL;
    }
    default: { /* SDK_COMMAND_I2C_SCAN */
      sdk_jw_begin_object(w);
      sdk_jw_key(w, "addresses");
      sdk_jw_begin_array(w);
      for (uint8_t a = SDK_I2C_ADDRESS_MIN; a <= SDK_I2C_ADDRESS_MAX; a++)
        if (sdk_port_i2c_probe((uint8_t)bus, a)) sdk_jw_int(w, a);
      sdk_jw_end_array(w);
      sdk_jw_end_object(w);
      return NULL;
    }
  }
}

static const char *run_spi_transfer(sdk_device *dev, const sdk_json_object *args, sdk_json_writer *w,
                                    sdk_text *t) {
  int64_t bus = arg_int(args, "bus", 0);
  if (!dev->spi_ready[bus]) return not_configured(t, "SPI bus ", bus, "spi_configure");
  size_t n = 0;
  if (sdk_json_get_bytes(sdk_json_find(args, "data"), dev->scratch, sizeof dev->scratch, &n, NULL) != SDK_JSON_OK)
    return io_failed(t, "decoding data");
  bool has_cs = sdk_json_find(args, "cs") != NULL;
  uint8_t cs = (uint8_t)arg_int(args, "cs", 0);
  if (has_cs) {
    use_pin(dev, cs);
    sdk_port_gpio_write(cs, 0);
  }
  /* Received bytes go straight into the result, a chunk at a time, while CS stays low. */
  sdk_jw_begin_object(w);
  sdk_jw_key(w, "data");
  sdk_jw_begin_array(w);
  uint8_t rx[SPI_CHUNK];
  for (size_t off = 0; off < n; off += SPI_CHUNK) {
    size_t chunk = n - off < SPI_CHUNK ? n - off : SPI_CHUNK;
    sdk_port_spi_transfer((uint8_t)bus, dev->scratch + off, rx, chunk);
    for (size_t i = 0; i < chunk; i++) sdk_jw_int(w, rx[i]);
  }
  sdk_jw_end_array(w);
  sdk_jw_end_object(w);
  if (has_cs) sdk_port_gpio_write(cs, 1);
  return NULL;
}

const char *sdk_command_run(sdk_device *dev, int command, const sdk_json_object *args, sdk_json_writer *w,
                            char *msg, size_t cap) {
  sdk_text t;
  sdk_text_init(&t, msg, cap);
  switch (command) {
    case SDK_COMMAND_PIN_MODE: {
      uint8_t pin = arg_pin(args, "pin");
      bool output = arg_is(args, "mode", "output");
      if (pin == SDK_PIN_LED) {
        if (!output) {
          sdk_text_add(&t, "the onboard LED is an output only");
          return SDK_DEVICE_ERROR_UNSUPPORTED;
        }
      } else {
        uint8_t pull = arg_is(args, "pull", "up") ? SDK_PULL_UP
                       : arg_is(args, "pull", "down") ? SDK_PULL_DOWN
                                                      : SDK_PULL_NONE;
        use_pin(dev, pin);
        sdk_port_gpio_mode(pin, output, pull);
      }
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_GPIO_WRITE: {
      uint8_t pin = arg_pin(args, "pin");
      use_pin(dev, pin);
      sdk_port_gpio_write(pin, (uint8_t)arg_int(args, "value", 0));
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_GPIO_READ:
      level_value(w, sdk_port_gpio_read(arg_pin(args, "pin")));
      return NULL;
    case SDK_COMMAND_GPIO_TOGGLE: {
      uint8_t pin = arg_pin(args, "pin");
      uint8_t level = sdk_port_gpio_read(pin) ? 0 : 1;
      use_pin(dev, pin);
      sdk_port_gpio_write(pin, level);
      level_value(w, level);
      return NULL;
    }
    case SDK_COMMAND_GPIO_WATCH: {
      uint8_t edge = arg_is(args, "edge", "rising") ? 1 : arg_is(args, "edge", "falling") ? 2 : 3;
      start_watch(dev, arg_pin(args, "pin"), edge, (uint16_t)arg_int(args, "debounceMs", 0));
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_GPIO_UNWATCH: {
      uint8_t pin = arg_pin(args, "pin");
      dev->watch[pin] = (sdk_pin_watch){0};
      sdk_port_gpio_watch(pin, false);
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_PWM: {
      uint8_t pin = arg_pin(args, "pin");
      use_pin(dev, pin);
      sdk_port_pwm(pin, arg_number(args, "frequency"), arg_number(args, "duty"));
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_ADC_READ: {
      uint16_t raw = sdk_port_adc_read((uint8_t)(arg_int(args, "pin", 26) - 26));
      if (raw > SDK_ADC_MAX_RAW) raw = SDK_ADC_MAX_RAW;
      double volts = (double)raw * SDK_ADC_MAX_VOLTS / SDK_ADC_MAX_RAW;
      if (volts > SDK_ADC_MAX_VOLTS) volts = SDK_ADC_MAX_VOLTS;
      sdk_jw_begin_object(w);
      sdk_jw_key(w, "volts");
      sdk_jw_number(w, volts, 4);
      sdk_jw_key(w, "raw");
      sdk_jw_int(w, raw);
      sdk_jw_end_object(w);
      return NULL;
    }
    case SDK_COMMAND_TEMPERATURE_READ:
      sdk_jw_begin_object(w);
      sdk_jw_key(w, "celsius");
      sdk_jw_number(w, sdk_port_temperature(), 2);
      sdk_jw_end_object(w);
      return NULL;
    case SDK_COMMAND_I2C_CONFIGURE: {
      int64_t bus = arg_int(args, "bus", 0);
      uint8_t sda = (uint8_t)arg_int(args, "sda", 0), scl = (uint8_t)arg_int(args, "scl", 0);
      use_pin(dev, sda);
      use_pin(dev, scl);
      sdk_port_i2c_configure((uint8_t)bus, sda, scl, (uint32_t)arg_int(args, "frequency", 100000));
      dev->i2c_ready[bus] = true;
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_I2C_WRITE:
    case SDK_COMMAND_I2C_READ:
    case SDK_COMMAND_I2C_SCAN:
      return run_i2c(dev, command, args, w, &t);
    case SDK_COMMAND_SPI_CONFIGURE: {
      int64_t bus = arg_int(args, "bus", 0);
      uint8_t sck = (uint8_t)arg_int(args, "sck", 0), tx = (uint8_t)arg_int(args, "tx", 0),
              rx = (uint8_t)arg_int(args, "rx", 0);
      use_pin(dev, sck);
      use_pin(dev, tx);
      use_pin(dev, rx);
      sdk_port_spi_configure((uint8_t)bus, sck, tx, rx, (uint32_t)arg_int(args, "frequency", 1000000),
                             (uint8_t)arg_int(args, "mode", 0));
      dev->spi_ready[bus] = true;
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_SPI_TRANSFER:
      return run_spi_transfer(dev, args, w, &t);
    case SDK_COMMAND_UART_CONFIGURE: {
      int64_t uart = arg_int(args, "uart", 0);
      uint8_t tx = (uint8_t)arg_int(args, "tx", 0), rx = (uint8_t)arg_int(args, "rx", 0);
      uint8_t parity = arg_is(args, "parity", "even") ? 1 : arg_is(args, "parity", "odd") ? 2 : 0;
      use_pin(dev, tx);
      use_pin(dev, rx);
      sdk_port_uart_configure((uint8_t)uart, tx, rx, (uint32_t)arg_int(args, "baud", 115200),
                              (uint8_t)arg_int(args, "dataBits", 8), parity, (uint8_t)arg_int(args, "stopBits", 1));
      dev->uart_ready[uart] = true;
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_UART_WRITE: {
      int64_t uart = arg_int(args, "uart", 0);
      if (!dev->uart_ready[uart]) return not_configured(&t, "UART ", uart, "uart_configure");
      size_t n = 0;
      if (sdk_json_get_bytes(sdk_json_find(args, "data"), dev->scratch, sizeof dev->scratch, &n, NULL) !=
          SDK_JSON_OK)
        return io_failed(&t, "decoding data");
      sdk_port_uart_write((uint8_t)uart, dev->scratch, n);
      sdk_jw_null(w);
      return NULL;
    }
    case SDK_COMMAND_WS2812_WRITE: {
      uint8_t pin = arg_pin(args, "pin");
      size_t pixels = 0;
      if (sdk_json_get_pixels(sdk_json_find(args, "pixels"), dev->scratch, SDK_WS2812_PIXELS_MAX, &pixels, NULL) !=
          SDK_JSON_OK)
        return io_failed(&t, "decoding pixels");
      use_pin(dev, pin);
      sdk_port_ws2812_write(pin, dev->scratch, pixels);
      sdk_jw_null(w);
      return NULL;
    }
    default:
      sdk_text_add(&t, "unknown command");
      return SDK_DEVICE_ERROR_UNSUPPORTED;
  }
}
