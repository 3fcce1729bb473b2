/* The host port's in-memory peripherals and its control channel (ports/host). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "host_control.h"
#include "host_peripherals.h"
#include "sdk_port.h"

/* The real sdk_device_pin_changed lives in the core (sdk_device.c); this one records the calls.
 * Linking works because nothing here needs anything else from sdk_device.o. */
static struct {
  sdk_device *dev;
  uint8_t pin;
  uint8_t level;
} calls[64];
static size_t call_count;

void sdk_device_pin_changed(sdk_device *dev, uint8_t pin, uint8_t level) {
  if (call_count < sizeof calls / sizeof calls[0]) {
    calls[call_count].dev = dev;
    calls[call_count].pin = pin;
    calls[call_count].level = level;
  }
  call_count++;
}

static sdk_device device;
static char answer[HOST_CONTROL_ANSWER_MAX];

static const char *control(const char *line) {
  memset(answer, 'x', sizeof answer);
  (void)host_control_line(line, answer, sizeof answer);
  return answer;
}

static void reset(void) {
  device.opt.board = SDK_BOARD_PICO_W;
  host_peripherals_init(&device);
  call_count = 0;
}

static void test_gpio_levels(void) {
  reset();
  CHECK(sdk_port_gpio_read(15) == 0); /* floating, no pull */
  sdk_port_gpio_mode(15, false, SDK_PULL_UP);
  CHECK(sdk_port_gpio_read(15) == 1);
  sdk_port_gpio_mode(15, false, SDK_PULL_DOWN);
  CHECK(sdk_port_gpio_read(15) == 0);
  host_peripherals_drive(15, 1);
  CHECK(sdk_port_gpio_read(15) == 1);
  host_peripherals_drive(15, 0);
  sdk_port_gpio_mode(15, false, SDK_PULL_UP);
  CHECK(sdk_port_gpio_read(15) == 0); /* driven beats the pull */
  host_peripherals_drive(15, -1);
  CHECK(sdk_port_gpio_read(15) == 1);

  sdk_port_gpio_write(16, 1); /* becomes an output */
  CHECK(sdk_port_gpio_read(16) == 1);
  host_peripherals_drive(16, 0);
  CHECK(host_peripherals_level(16) == 1); /* the latch beats outside drive */
  sdk_port_gpio_mode(16, false, SDK_PULL_NONE);
  CHECK(host_peripherals_level(16) == 0); /* input again: the driven level */
  sdk_port_gpio_mode(16, true, SDK_PULL_NONE);
  CHECK(host_peripherals_level(16) == 1); /* the latch was kept */

  double hz = 0, duty = 0;
  CHECK(!host_peripherals_pwm(17, &hz, &duty));
  sdk_port_pwm(17, 1000, 0.5);
  CHECK(host_peripherals_pwm(17, &hz, &duty) && hz == 1000 && duty == 0.5);
  CHECK(host_peripherals_level(17) == 0); /* a duty between 0 and 1 shows the latch */
  sdk_port_pwm(16, 1000, 0.5);
  CHECK(host_peripherals_level(16) == 1);
  sdk_port_pwm(17, 50, 1.0);
  CHECK(host_peripherals_level(17) == 1);
  sdk_port_pwm(16, 50, 0.0);
  CHECK(host_peripherals_level(16) == 0);
  sdk_port_gpio_write(17, 0); /* a write ends PWM */
  CHECK(!host_peripherals_pwm(17, &hz, &duty));
  CHECK(host_peripherals_level(17) == 0);
  sdk_port_pwm(18, 50, 0.25);
  sdk_port_gpio_mode(18, false, SDK_PULL_UP); /* so does pin_mode */
  CHECK(!host_peripherals_pwm(18, &hz, &duty));
  CHECK(host_peripherals_level(18) == 1);

  CHECK(host_peripherals_level(SDK_PIN_LED) == 0);
  sdk_port_gpio_mode(SDK_PIN_LED, true, SDK_PULL_NONE);
  sdk_port_gpio_write(SDK_PIN_LED, 1);
  CHECK(sdk_port_gpio_read(SDK_PIN_LED) == 1);
  CHECK(!host_peripherals_pwm(SDK_PIN_LED, &hz, &duty));
  sdk_port_gpio_write(SDK_PIN_LED, 0);
  CHECK(host_peripherals_level(SDK_PIN_LED) == 0);
  CHECK(call_count == 0); /* nothing watched */

  host_peripherals_init(NULL); /* back to power-on state */
  CHECK(host_peripherals_level(16) == 0);
  CHECK(!host_peripherals_pwm(16, &hz, &duty));
}

static void test_watch(void) {
  reset();
  sdk_port_gpio_mode(15, false, SDK_PULL_UP);
  sdk_port_gpio_watch(15, true);
  CHECK(call_count == 0);
  host_peripherals_drive(15, 1); /* no change: the pull already said 1 */
  CHECK(call_count == 0);
  host_peripherals_drive(15, 0);
  CHECK(call_count == 1 && calls[0].dev == &device && calls[0].pin == 15 && calls[0].level == 0);
  host_peripherals_drive(15, 0);
  CHECK(call_count == 1);
  host_peripherals_drive(15, -1);
  CHECK(call_count == 2 && calls[1].pin == 15 && calls[1].level == 1);
  host_peripherals_drive(14, 1); /* not watched */
  CHECK(call_count == 2);
  sdk_port_gpio_write(15, 0); /* a watched output changes too */
  CHECK(call_count == 3 && calls[2].level == 0);
  sdk_port_gpio_write(15, 0);
  CHECK(call_count == 3);
  sdk_port_pwm(15, 100, 1.0);
  CHECK(call_count == 4 && calls[3].level == 1);
  sdk_port_pwm(15, 100, 0.5); /* shows the latch (0) */
  CHECK(call_count == 5 && calls[4].level == 0);
  sdk_port_gpio_watch(15, false);
  sdk_port_gpio_write(15, 1);
  CHECK(call_count == 5);

  /* watching an untouched pin makes it an input; handing a pin to a bus changes its level */
  sdk_port_gpio_watch(0, true);
  host_peripherals_drive(0, 1);
  CHECK(call_count == 6 && calls[5].pin == 0 && calls[5].level == 1);
  sdk_port_gpio_write(0, 0);
  CHECK(call_count == 7 && calls[6].level == 0);
  sdk_port_uart_configure(0, 0, 1, 115200, 8, 0, 1);
  CHECK(call_count == 8 && calls[7].pin == 0 && calls[7].level == 1); /* the driven level again */

  host_peripherals_init(NULL);
  call_count = 0;
  sdk_port_gpio_watch(3, true);
  host_peripherals_drive(3, 1);
  CHECK(call_count == 0); /* no device to tell */
}

static void test_adc(void) {
  reset();
  CHECK(sdk_port_adc_read(0) == 0);
  CHECK(host_peripherals_set_voltage(26, 3.3));
  CHECK(sdk_port_adc_read(0) == 4095);
  CHECK(host_peripherals_set_voltage(27, 1.65));
  CHECK(sdk_port_adc_read(1) == 2048); /* 2047.5 rounds up, like Math.round */
  CHECK(host_peripherals_set_voltage(28, 5.0));
  CHECK(sdk_port_adc_read(2) == 4095);
  CHECK(host_peripherals_set_voltage(28, -1.0));
  CHECK(sdk_port_adc_read(2) == 0);
  CHECK(!host_peripherals_set_voltage(25, 1.0));
  CHECK(!host_peripherals_set_voltage(26, NAN));
  CHECK(!host_peripherals_set_voltage(26, INFINITY));
  CHECK(sdk_port_temperature() == 21.5);
  host_peripherals_set_temperature(-4.25);
  CHECK(sdk_port_temperature() == -4.25);
}

static void test_i2c(void) {
  reset();
  uint8_t out[8];
  uint8_t found[128];
  size_t n = 0;
  for (uint8_t a = 0x08; a <= 0x77; a++) {
    if (sdk_port_i2c_probe(0, a)) found[n++] = a;
  }
  CHECK(n == 2 && found[0] == 0x48 && found[1] == 0x50);

  /* TMP102: 21.5 °C = 344 counts = 0x158, left-justified */
  uint8_t reg = 0;
  CHECK(sdk_port_i2c_read(0, 0x48, &reg, out, 4) == SDK_IO_OK);
  CHECK(out[0] == 0x15 && out[1] == 0x80 && out[2] == 0x15 && out[3] == 0x80);
  reg = 1;
  CHECK(sdk_port_i2c_read(0, 0x48, &reg, out, 2) == SDK_IO_OK);
  CHECK(out[0] == 0x60 && out[1] == 0xa0);
  const uint8_t t_low[] = {0x02, 0x12, 0x34};
  CHECK(sdk_port_i2c_write(0, 0x48, t_low, sizeof t_low) == SDK_IO_OK);
  CHECK(sdk_port_i2c_read(0, 0x48, NULL, out, 3) == SDK_IO_OK); /* the pointer stays at T_LOW */
  CHECK(out[0] == 0x12 && out[1] == 0x34 && out[2] == 0x12);
  const uint8_t temp_write[] = {0x00, 0xff, 0xff}; /* the temperature register is read-only */
  CHECK(sdk_port_i2c_write(0, 0x48, temp_write, sizeof temp_write) == SDK_IO_OK);
  CHECK(sdk_port_i2c_read(0, 0x48, NULL, out, 2) == SDK_IO_OK);
  CHECK(out[0] == 0x15 && out[1] == 0x80);
  reg = 0x07; /* the pointer has two bits */
  CHECK(sdk_port_i2c_read(0, 0x48, &reg, out, 2) == SDK_IO_OK);
  CHECK(out[0] == 0x50 && out[1] == 0x00);

  /* EEPROM: erased to ff, [address, bytes...], addresses wrap at 256 */
  reg = 0;
  CHECK(sdk_port_i2c_read(0, 0x50, &reg, out, 2) == SDK_IO_OK);
  CHECK(out[0] == 0xff && out[1] == 0xff);
  const uint8_t store[] = {0x10, 1, 2, 3};
  CHECK(sdk_port_i2c_write(0, 0x50, store, sizeof store) == SDK_IO_OK);
  reg = 0x10;
  CHECK(sdk_port_i2c_read(0, 0x50, &reg, out, 3) == SDK_IO_OK);
  CHECK(out[0] == 1 && out[1] == 2 && out[2] == 3);
  CHECK(sdk_port_i2c_read(0, 0x50, NULL, out, 1) == SDK_IO_OK && out[0] == 0xff); /* continues */
  const uint8_t wrap[] = {0xff, 0xaa, 0xbb};
  CHECK(sdk_port_i2c_write(0, 0x50, wrap, sizeof wrap) == SDK_IO_OK);
  reg = 0xff;
  CHECK(sdk_port_i2c_read(0, 0x50, &reg, out, 2) == SDK_IO_OK);
  CHECK(out[0] == 0xaa && out[1] == 0xbb);
  reg = 0x10;
  CHECK(sdk_port_i2c_read(1, 0x50, &reg, out, 1) == SDK_IO_OK && out[0] == 0xff); /* bus 1 has its own */

  /* nothing at 0x3c until attached; an attached target acks writes and answers its bytes */
  CHECK(sdk_port_i2c_write(0, 0x3c, store, 1) == SDK_IO_NACK);
  CHECK(sdk_port_i2c_read(0, 0x3c, NULL, out, 1) == SDK_IO_NACK);
  const uint8_t bytes[] = {7, 8, 9};
  CHECK(host_peripherals_i2c_attach(0, 0x3c, bytes, sizeof bytes));
  CHECK(sdk_port_i2c_probe(0, 0x3c) && !sdk_port_i2c_probe(1, 0x3c));
  CHECK(sdk_port_i2c_write(0, 0x3c, store, sizeof store) == SDK_IO_OK);
  memset(out, 0xee, sizeof out);
  reg = 5;
  CHECK(sdk_port_i2c_read(0, 0x3c, &reg, out, 5) == SDK_IO_OK);
  CHECK(out[0] == 7 && out[1] == 8 && out[2] == 9 && out[3] == 0 && out[4] == 0 && out[5] == 0xee);
  CHECK(host_peripherals_i2c_attach(0, 0x48, bytes, 1)); /* replaces the TMP102 */
  CHECK(sdk_port_i2c_read(0, 0x48, NULL, out, 2) == SDK_IO_OK && out[0] == 7 && out[1] == 0);
  CHECK(sdk_port_i2c_read(1, 0x48, NULL, out, 2) == SDK_IO_OK && out[0] == 0x15);
  n = 0;
  for (uint8_t a = 0x08; a <= 0x77; a++) {
    if (sdk_port_i2c_probe(0, a)) found[n++] = a;
  }
  CHECK(n == 3 && found[0] == 0x3c && found[1] == 0x48 && found[2] == 0x50);
  static uint8_t big[HOST_I2C_TARGET_BYTES + 1];
  CHECK(host_peripherals_i2c_attach(1, 0x20, big, HOST_I2C_TARGET_BYTES));
  CHECK(!host_peripherals_i2c_attach(1, 0x21, big, sizeof big));
  CHECK(!host_peripherals_i2c_attach(2, 0x21, big, 1));
  CHECK(!host_peripherals_i2c_attach(0, 0x80, big, 1));
}

static void test_spi_uart(void) {
  reset();
  uint8_t tx[4] = {1, 2, 3, 4};
  uint8_t rx[4] = {0};
  sdk_port_spi_configure(0, 18, 19, 16, 1000000, 0);
  sdk_port_spi_transfer(0, tx, rx, sizeof tx);
  CHECK(memcmp(tx, rx, sizeof tx) == 0);
  sdk_port_spi_transfer(0, tx, tx, sizeof tx); /* in place */
  CHECK(tx[0] == 1 && tx[3] == 4);

  uint8_t out[8];
  CHECK(!host_peripherals_uart_configured(0));
  CHECK(host_peripherals_uart_inject(0, tx, 1) == 0);
  sdk_port_uart_configure(0, 0, 1, 115200, 8, 0, 1);
  CHECK(host_peripherals_uart_configured(0) && !host_peripherals_uart_configured(1));
  sdk_port_uart_write(0, (const uint8_t *)"hello", 5);
  CHECK(host_peripherals_uart_pending(0) == 5);
  CHECK(sdk_port_uart_read(0, out, 3) == 3 && memcmp(out, "hel", 3) == 0);
  CHECK(host_peripherals_uart_inject(0, (const uint8_t *)"!", 1) == 1);
  CHECK(sdk_port_uart_read(0, out, sizeof out) == 3 && memcmp(out, "lo!", 3) == 0);
  CHECK(sdk_port_uart_read(0, out, sizeof out) == 0);
  CHECK(sdk_port_uart_read(1, out, sizeof out) == 0);

  /* the FIFO holds 64 KiB, keeps order across its wrap, and drops what does not fit */
  static uint8_t pattern[HOST_UART_FIFO_BYTES + 10];
  for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (uint8_t)(i * 7u);
  CHECK(host_peripherals_uart_inject(0, pattern, sizeof pattern) == HOST_UART_FIFO_BYTES);
  CHECK(host_peripherals_uart_space(0) == 0);
  sdk_port_uart_write(0, pattern, 1); /* an overrun */
  CHECK(host_peripherals_uart_pending(0) == HOST_UART_FIFO_BYTES);
  static uint8_t drained[HOST_UART_FIFO_BYTES];
  size_t got = 0;
  while (got < sizeof drained) {
    size_t n = sdk_port_uart_read(0, drained + got, 4096);
    if (n == 0) break;
    got += n;
  }
  CHECK(got == HOST_UART_FIFO_BYTES && memcmp(drained, pattern, got) == 0);
  CHECK(host_peripherals_uart_space(0) == HOST_UART_FIFO_BYTES);
}

static void test_ws2812(void) {
  reset();
  const uint8_t *rgb = NULL;
  size_t pixels = 99;
  CHECK(!host_peripherals_pixels(22, &rgb, &pixels));
  const uint8_t strip[] = {0xff, 0, 0, 0, 0, 9};
  sdk_port_ws2812_write(22, strip, 2);
  CHECK(host_peripherals_pixels(22, &rgb, &pixels) && pixels == 2 && memcmp(rgb, strip, 6) == 0);
  sdk_port_ws2812_write(22, strip + 3, 1);
  CHECK(host_peripherals_pixels(22, &rgb, &pixels) && pixels == 1 && rgb[2] == 9);
  CHECK(!host_peripherals_pixels(21, &rgb, &pixels));
}

static void test_control(void) {
  reset();
  char line[64];
  CHECK_STR(control("input 15 1"), "ok");
  CHECK(host_peripherals_level(15) == 1);
  CHECK_STR(control("pin 15"), "ok 1");
  CHECK_STR(control("input 15 0"), "ok");
  CHECK_STR(control("pin 15"), "ok 0");
  CHECK_STR(control("input 15 2"), "error level must be 0 or 1");
  CHECK_STR(control("input 23 1"), "error GP23 is not a usable GPIO on the Raspberry Pi Pico W");
  CHECK_STR(control("input x 1"), "error not a number: \"x\"");
  CHECK_STR(control("input 15"), "error not a number: \"\"");
  CHECK_STR(control("input -1 1"), "error not a number: \"-1\"");
  CHECK_STR(control("input 99999999999999999999999 0"),
            "error number too large: \"99999999999999999999999\"");
  CHECK_STR(control("input 4294967296 0"), "error number too large: \"4294967296\"");
  CHECK_STR(control("input 4294967295 0"), "error GP4294967295 is not a usable GPIO on the Raspberry Pi Pico W");
  CHECK_STR(control("input 007 1"), "ok");
  CHECK(host_peripherals_level(7) == 1);
  device.opt.board = SDK_BOARD_PICO2_W;
  CHECK_STR(control("pin 29"), "error GP29 is not a usable GPIO on the Raspberry Pi Pico 2 W");
  device.opt.board = SDK_BOARD_PICO_W;

  sdk_port_pwm(16, 1000, 0.5);
  CHECK_STR(control("pin 16"), "ok 0 pwm 1000 0.5");
  CHECK_STR(control("pin LED"), "ok 0");
  sdk_port_gpio_write(SDK_PIN_LED, 1);
  CHECK_STR(control("pin LED"), "ok 1");
  CHECK_STR(control("pin led"), "error not a number: \"led\"");
  CHECK_STR(control("  pin 16 \r"), "ok 0 pwm 1000 0.5");
  CHECK_STR(control("pin  16"), "error pin takes at most 1 arguments");
  CHECK_STR(control("pin 16 1"), "error pin takes at most 1 arguments");

  /* numbers as JavaScript prints them */
  static const struct {
    double value;
    const char *text;
  } numbers[] = {
      {8, "8"},
      {1000000, "1000000"},
      {0.25, "0.25"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1.0 / 3.0, "0.3333333333333333"},
      {123.456, "123.456"},
      {0.000001, "0.000001"},
      {1.5e-7, "1.5e-7"},
      {1e-7, "1e-7"},
      {1e21, "1e+21"},
      {1.25e22, "1.25e+22"},
      {12345678901234567890.0, "12345678901234567000"},
      {-2.5, "-2.5"},
  };
  for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
    sdk_port_pwm(17, numbers[i].value, 0.75);
    char expected[96];
    (void)snprintf(expected, sizeof expected, "ok 0 pwm %s 0.75", numbers[i].text);
    CHECK_STR(control("pin 17"), expected);
  }
  sdk_port_pwm(17, 50, 1.0);
  CHECK_STR(control("pin 17"), "ok 1 pwm 50 1");
  sdk_port_pwm(17, 50, 0.0);
  CHECK_STR(control("pin 17"), "ok 0 pwm 50 0");

  CHECK_STR(control("pixels 22"), "ok");
  const uint8_t strip[] = {0xff, 0, 0, 0, 0, 9};
  sdk_port_ws2812_write(22, strip, 2);
  CHECK_STR(control("pixels 22"), "ok ff0000 000009");
  CHECK_STR(control("pixels 99"), "ok");
  CHECK_STR(control("pixels x"), "error not a number: \"x\"");
  static uint8_t long_strip[HOST_WS2812_PIXELS * 3];
  memset(long_strip, 0xab, sizeof long_strip);
  sdk_port_ws2812_write(7, long_strip, HOST_WS2812_PIXELS);
  CHECK(host_control_line("pixels 7", answer, sizeof answer) == false);
  CHECK(strlen(answer) == 2 + 7 * HOST_WS2812_PIXELS && strncmp(answer, "ok ababab ababab", 16) == 0);
  char small[40];
  (void)host_control_line("pixels 7", small, sizeof small);
  CHECK_STR(small, "error the answer does not fit");

  CHECK_STR(control("uart 0 4f4b"), "error UART 0 is not configured; send uart_configure first");
  CHECK_STR(control("uart 2 4f4b"), "error no bus 2");
  sdk_port_uart_configure(0, 0, 1, 9600, 8, 0, 1);
  CHECK_STR(control("uart 0 4f4B"), "ok");
  CHECK_STR(control("uart 0"), "ok"); /* no bytes */
  CHECK_STR(control("uart 0 4f4"), "error not hex bytes: 4f4");
  CHECK_STR(control("uart 0 zz"), "error not hex bytes: zz");
  uint8_t out[4];
  CHECK(sdk_port_uart_read(0, out, sizeof out) == 2 && out[0] == 'O' && out[1] == 'K');
  static uint8_t filler[HOST_UART_FIFO_BYTES - 1];
  CHECK(host_peripherals_uart_inject(0, filler, sizeof filler) == sizeof filler);
  CHECK_STR(control("uart 0 0102"), "error UART 0 receive buffer is full (1 bytes free)");
  CHECK_STR(control("uart 0 01"), "ok");

  CHECK_STR(control("i2c 0 60 070809"), "ok");
  uint8_t reg = 0;
  CHECK(sdk_port_i2c_read(0, 60, &reg, out, 4) == SDK_IO_OK);
  CHECK(out[0] == 7 && out[1] == 8 && out[2] == 9 && out[3] == 0);
  CHECK_STR(control("i2c 1 72"), "ok"); /* a target that answers zeros, replacing the TMP102 */
  CHECK(sdk_port_i2c_read(1, 72, NULL, out, 2) == SDK_IO_OK && out[0] == 0 && out[1] == 0);
  CHECK_STR(control("i2c 0 128 00"), "error not a 7-bit I2C address: 128");
  CHECK_STR(control("i2c 0 0x3c 00"), "error not a number: \"0x3c\"");
  CHECK_STR(control("i2c 1 60 zz"), "error not hex bytes: zz");
  CHECK_STR(control("i2c 3 60 00"), "error no bus 3");
  char hex[2 * HOST_I2C_TARGET_BYTES + 40];
  int used = snprintf(hex, sizeof hex, "i2c 0 61 ");
  for (size_t i = 0; i <= HOST_I2C_TARGET_BYTES; i++) memcpy(hex + used + 2 * i, "aa", 3);
  CHECK_STR(control(hex), "error at most 256 bytes for an I2C target");

  CHECK_STR(control("adc 26 1.65"), "ok");
  CHECK(sdk_port_adc_read(0) == 2048);
  CHECK_STR(control("adc 28 7"), "ok");
  CHECK(sdk_port_adc_read(2) == 4095);
  CHECK_STR(control("adc 25 1"), "error GP25 is not an ADC pin (GP26-GP28)");
  CHECK_STR(control("adc 26 volts"), "error not a finite number: \"volts\"");
  CHECK_STR(control("adc 26 inf"), "error not a finite number: \"inf\"");
  CHECK_STR(control("temperature 30.5"), "ok");
  CHECK(sdk_port_temperature() == 30.5);
  CHECK_STR(control("temperature nan"), "error not a finite number: \"nan\"");
  CHECK_STR(control("temperature"), "error not a number: \"\"");

  CHECK(!host_control_line("", line, sizeof line));
  CHECK_STR(line, "error unknown control command \"\"");
  CHECK(!host_control_line("reboot now", line, sizeof line));
  CHECK_STR(line, "error unknown control command \"reboot\"");
  CHECK(!host_control_line("stop now", line, sizeof line));
  CHECK_STR(line, "error stop takes no arguments");
  CHECK(host_control_line("stop", line, sizeof line));
  CHECK_STR(line, "ok");
  CHECK(host_control_line("stop\r\n", line, sizeof line));
  char tiny[4];
  (void)host_control_line("bogus", tiny, sizeof tiny); /* answers are cut to fit */
  CHECK(strlen(tiny) < sizeof tiny);
}

int main(void) {
  test_gpio_levels();
  test_watch();
  test_adc();
  test_i2c();
  test_spi_uart();
  test_ws2812();
  test_control();
  return check_exit("host_peripherals_test");
}
