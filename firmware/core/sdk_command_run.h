/* Carrying out one checked command on the port, and writing its result value. */
#ifndef SDK_COMMAND_RUN_H
#define SDK_COMMAND_RUN_H

#include "sdk_device.h"

/*
 * Runs a command whose arguments passed sdk_command_check. On success writes the result value
 * (null for most commands) to w and returns NULL; on failure returns the device error code
 * (invalid_argument, unsupported, io_error) and writes the message.
 */
const char *sdk_command_run(sdk_device *dev, int command, const sdk_json_object *args, sdk_json_writer *w,
                            char *msg, size_t cap);

#endif /* SDK_COMMAND_RUN_H */
