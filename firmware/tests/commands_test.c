/* The C command checks say what checkCommand says: packages/protocol/vectors/check-command.jsonl. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "sdk_commands.h"
#include "sdk_json.h"

static void check_vector(const char *line, size_t len, int number) {
  sdk_json_object obj, args;
  char board[16], type[64], expected[1024], actual[1024];
  if (sdk_json_parse_object(line, len, &obj) != SDK_JSON_OK) {
    fprintf(stderr, "line %d: not a JSON object\n", number);
    CHECK(0);
    return;
  }
  const sdk_json_field *args_field = sdk_json_find(&obj, "args");
  const sdk_json_field *error = sdk_json_find(&obj, "error");
  CHECK(sdk_json_get_string(sdk_json_find(&obj, "board"), board, sizeof board, NULL) == SDK_JSON_OK);
  CHECK(sdk_json_get_string(sdk_json_find(&obj, "type"), type, sizeof type, NULL) == SDK_JSON_OK);
  CHECK(args_field && sdk_json_parse_object(args_field->value, args_field->value_len, &args) == SDK_JSON_OK);
  CHECK(error != NULL);
  if (!args_field || !error) return;
  bool valid = error->kind == SDK_JSON_NULL;
  if (!valid) CHECK(sdk_json_get_string(error, expected, sizeof expected, NULL) == SDK_JSON_OK);
  int b = sdk_board_find(board);
  int command = sdk_command_find(type, strlen(type));
  CHECK(b >= 0 && command >= 0);
  if (b < 0 || command < 0) return;
  bool ok = sdk_command_check((sdk_board)b, command, &args, actual, sizeof actual);
  if (ok != valid || (!valid && strcmp(actual, expected) != 0)) {
    fprintf(stderr, "line %d: %.*s\n  C says: %s\n", number, (int)len, line, ok ? "(valid)" : actual);
    CHECK(0);
  } else {
    CHECK(1);
  }
}

int main(void) {
  static char line[16384];
  FILE *f = fopen(SDK_VECTORS_DIR "/check-command.jsonl", "r");
  CHECK(f != NULL);
  if (!f) return check_exit("commands");
  int number = 0, cases = 0;
  while (fgets(line, sizeof line, f)) {
    number++;
    size_t len = strcspn(line, "\n");
    if (len == 0) continue;
    check_vector(line, len, number);
    cases++;
  }
  fclose(f);
  CHECK(cases > 1000);

  /* Names and boards. */
  CHECK(sdk_command_find("ws2812_write", 12) == SDK_COMMAND_WS2812_WRITE);
  CHECK(sdk_command_find("ws2812_writ", 11) == -1);
  CHECK(sdk_command_find("self_destruct", 13) == -1);
  CHECK(sdk_board_find("pico2_w") == SDK_BOARD_PICO2_W);
  CHECK(sdk_board_find("pico3_w") == -1);
  CHECK_STR(sdk_board_id(SDK_BOARD_PICO_W), "pico_w");
  return check_exit("commands");
}
