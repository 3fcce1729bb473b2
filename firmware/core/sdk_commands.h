/*
 * The commands of docs/protocol.md: their names, the board checks of checkCommand (same rules,
 * same messages, from the generated sdk_protocol.h), and carrying them out on the port.
 */
#ifndef SDK_COMMANDS_H
#define SDK_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "sdk_json.h"
#include "sdk_protocol.h"

typedef enum sdk_board sdk_board;

/* The board named id ("pico_w", "pico2_w"), or -1. */
int sdk_board_find(const char *id);
const char *sdk_board_id(sdk_board board);

/* The command named type[0..len) (enum sdk_command of sdk_protocol.h), or -1. */
int sdk_command_find(const char *type, size_t len);
const char *sdk_command_name(int command);

/* checkCommand: true when args suit the board; else false with the invalid_argument message. */
bool sdk_command_check(sdk_board board, int command, const sdk_json_object *args, char *msg, size_t cap);

#endif /* SDK_COMMANDS_H */
