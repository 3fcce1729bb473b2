#include "host_board.h"

#include "sdk_protocol.h"

static const uint32_t gpio_masks[SDK_BOARD_COUNT] = SDK_BOARD_GPIO_MASKS;
static const char *const names[SDK_BOARD_COUNT] = SDK_BOARD_NAMES;

bool host_board_gpio(unsigned board, uint64_t pin) {
  return board < SDK_BOARD_COUNT && pin < 32 && (gpio_masks[board] & (UINT32_C(1) << pin)) != 0;
}

const char *host_board_name(unsigned board) { return board < SDK_BOARD_COUNT ? names[board] : "unknown board"; }

const char *host_board_led_name(void) { return SDK_ONBOARD_LED; }

double host_board_adc_max_volts(void) { return SDK_ADC_MAX_VOLTS; }

double host_board_adc_max_raw(void) { return SDK_ADC_MAX_RAW; }
