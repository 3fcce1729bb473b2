/* The generated protocol header agrees with itself: every pin a bus role or the ADC may use is a
 * pin of that board, no board offers GPIO 23-25 or 29, the name tables have the sizes their counts
 * say, and the limits fit the frame. Returns non-zero and names the first broken rule. */
#include <stdint.h>
#include <stdio.h>

#include "sdk_protocol.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int failures = 0;

static void check(int ok, const char *rule) {
  if (!ok) {
    fprintf(stderr, "FAIL: %s\n", rule);
    failures++;
  }
}

static const uint32_t gpio[SDK_BOARD_COUNT] = SDK_BOARD_GPIO_MASKS;
static const uint32_t adc[SDK_BOARD_COUNT] = SDK_BOARD_ADC_MASKS;
static const uint32_t roles[][SDK_BOARD_COUNT][SDK_BUS_COUNT] = {
    SDK_BOARD_I2C_SDA_MASKS, SDK_BOARD_I2C_SCL_MASKS, SDK_BOARD_SPI_SCK_MASKS, SDK_BOARD_SPI_TX_MASKS,
    SDK_BOARD_SPI_RX_MASKS,  SDK_BOARD_UART_TX_MASKS, SDK_BOARD_UART_RX_MASKS,
};
static const char *const boards[] = SDK_BOARD_IDS;
static const char *const board_names[] = SDK_BOARD_NAMES;
static const char *const reserved[] = SDK_RESERVED_MESSAGE_NAMES;
static const char *const levels[] = SDK_LOG_LEVELS;
static const char *const states[] = SDK_CONNECTION_STATES;

int main(void) {
  const uint32_t absent = (1u << 23) | (1u << 24) | (1u << 25) | (1u << 29);
  for (int b = 0; b < SDK_BOARD_COUNT; b++) {
    check((gpio[b] & absent) == 0, "no board exposes GPIO 23, 24, 25 or 29");
    check((adc[b] & ~gpio[b]) == 0, "ADC pins are pins of the board");
    for (size_t r = 0; r < COUNT(roles); r++)
      for (int bus = 0; bus < SDK_BUS_COUNT; bus++)
        check(roles[r][b][bus] != 0 && (roles[r][b][bus] & ~gpio[b]) == 0,
              "every bus role has pins, all of them pins of the board");
  }
  check(COUNT(boards) == SDK_BOARD_COUNT && COUNT(board_names) == SDK_BOARD_COUNT, "one id and name per board");
  check(COUNT(reserved) == SDK_RESERVED_MESSAGE_COUNT, "reserved message count");
  check(COUNT(levels) == SDK_LOG_LEVELS_COUNT, "log level count");
  check(COUNT(states) == SDK_CONNECTION_STATES_COUNT, "connection state count");
  check(boards[0][0] && board_names[0][0] && reserved[0][0] && levels[0][0] && states[0][0], "names are not empty");
  check(SDK_MIN_DEVICE_FRAME_BYTES < SDK_MAX_FRAME_BYTES, "a device frame fits the frame limit");
  check(SDK_LOG_MESSAGE_MAX_LENGTH < SDK_MAX_FRAME_BYTES, "a log message fits one frame");
  check(SDK_STATE_VALUE_MAX_BYTES < SDK_MAX_FRAME_BYTES, "a state value fits one frame");
  check(SDK_CLOSE_TOO_BIG == 1009 && SDK_CLOSE_REVOKED == 4001, "close codes");
  if (failures == 0) printf("protocol header: all rules hold\n");
  return failures == 0 ? 0 : 1;
}
