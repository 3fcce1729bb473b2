/* SPI on the Pico: the two SPI blocks as masters, 8-bit frames, MSB first. Chip select is a plain
 * GPIO the core drives around a transfer. */
#include "hardware/clocks.h"
#include "hardware/gpio.h"
#include "hardware/spi.h"
#include "hardware/watchdog.h"
#include "pico_pins.h"
#include "sdk_port.h"

static spi_inst_t *bus_of(uint8_t bus) { return bus == 0 ? spi0 : bus == 1 ? spi1 : NULL; }

void sdk_port_spi_configure(uint8_t bus, uint8_t sck, uint8_t tx, uint8_t rx, uint32_t frequency, uint8_t mode) {
  spi_inst_t *spi = bus_of(bus);
  if (!spi) return;
  /* The slowest clock is clk_peri / (254 × 256), about 1.9 kHz at 125 MHz and 2.3 kHz at 150 MHz;
   * spi_set_baudrate cannot go below it (its prescaler would overflow), so slower asks get it. */
  uint32_t slowest = clock_get_hz(clk_peri) / (254u * 256u) + 1u;
  if (frequency < slowest) frequency = slowest;
  spi_deinit(spi);
  pico_pins_release(PICO_PIN_SPI, bus);
  (void)spi_init(spi, frequency);
  spi_set_format(spi, 8, (mode & 2u) ? SPI_CPOL_1 : SPI_CPOL_0, (mode & 1u) ? SPI_CPHA_1 : SPI_CPHA_0, SPI_MSB_FIRST);
  const uint8_t pins[3] = {sck, tx, rx};
  for (int i = 0; i < 3; i++) {
    (void)pico_pin_take(pins[i], PICO_PIN_SPI, bus);
    gpio_set_function(pins[i], GPIO_FUNC_SPI);
  }
}

/* The core hands at most 256 bytes per call: at the slowest clock about 1.1 s, so the watchdog is
 * fed per call (a long transfer is many calls inside one poll of the core). */
void sdk_port_spi_transfer(uint8_t bus, const uint8_t *tx, uint8_t *rx, size_t len) {
  spi_inst_t *spi = bus_of(bus);
  if (!spi || len == 0) return;
  watchdog_update();
  (void)spi_write_read_blocking(spi, tx, rx, len);
}
