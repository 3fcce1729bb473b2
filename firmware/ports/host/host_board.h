/*
 * The generated board tables (sdk_protocol.h) for the host port. A file of its own because
 * sdk_protocol.h and sdk_device.h both declare the sdk_board enumerators, so no file can include
 * both yet.
 */
#ifndef HOST_BOARD_H
#define HOST_BOARD_H

#include <stdbool.h>
#include <stdint.h>

/* board: an sdk_board value. */
bool host_board_gpio(unsigned board, uint64_t pin);
const char *host_board_name(unsigned board);
/* The name of the onboard LED where a pin is expected ("LED"). */
const char *host_board_led_name(void);
/* ADC full scale: volts, and the raw value at that voltage. */
double host_board_adc_max_volts(void);
double host_board_adc_max_raw(void);

#endif /* HOST_BOARD_H */
